"""The nightly item analysis of a course: first answers read once, figures computed by
`quizzes.item_analysis`, the report stored in `ItemAnalysis` for the page and the command."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Avg, Count

from courses.models import Course
from quizzes import item_analysis as method
from quizzes.models import ItemAnalysis, QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.calculated_stats import calculated_stats_for
from quizzes.selectors.strength import _recall_now
from quizzes.services.fsrs_adapter import scheduler_for

# Rows fetched per round trip from the server-side cursor.
CHUNK = 20_000
PROMPT_EXCERPT = 140
CHOICE_EXCERPT = 80


def first_answers(*, item_ids: list[int]) -> Iterator[method.FirstAnswer]:
    """Each learner's first review log (not undone) of each item, streamed. PostgreSQL picks it
    with DISTINCT ON; elsewhere (the embedded SQLite mode) the first of each pair is kept here."""
    logs = ReviewLog.objects.filter(item_id__in=item_ids, undo__isnull=True).order_by(
        "learner_id", "item_id", "reviewed_at", "id"
    )
    if connection.vendor == "postgresql":
        logs = logs.distinct("learner_id", "item_id")
    last: tuple[int, int] | None = None
    fields = ("learner_id", "item_id", "rating", "choice_keys")
    for learner_id, item_id, rating, keys in logs.values_list(*fields).iterator(chunk_size=CHUNK):
        if (learner_id, item_id) == last:
            continue
        last = (learner_id, item_id)
        picked = tuple(keys) if isinstance(keys, list) else None
        yield method.FirstAnswer(learner_id, item_id, rating, picked)


def _course_items(course: Course) -> list[QuizItem]:
    return list(
        QuizItem.objects.filter(lesson__module__course=course)
        .select_related("lesson")
        .prefetch_related("choices")
        .order_by("lesson__module__position", "lesson__position", "position", "id")
    )


def cohort_recall(*, course: Course, now: datetime) -> dict[int, tuple[int, float | None]]:
    """Per item: learners' cards and their mean probability of recall now (one aggregate, with
    the course's FSRS curve, as the learner's strength page computes it)."""
    rows = (
        RecallSchedule.objects.filter(course=course)
        .values("item_id")
        .annotate(
            cards=Count("id"),
            recall=Avg(_recall_now(now=now, schedulers={course.pk: scheduler_for(course)})),
        )
        .values_list("item_id", "cards", "recall")
    )
    return {item_id: (cards, recall) for item_id, cards, recall in rows}


def item_analysis_report(*, course: Course, now: datetime) -> dict[str, Any]:
    """The whole analysis as JSON-ready data: method, thresholds, and a row per item."""
    items = _course_items(course)
    learners: set[int] = set()

    def rows() -> Iterator[method.FirstAnswer]:
        for row in first_answers(item_ids=[i.pk for i in items]):
            learners.add(row.learner_id)
            yield row

    # first_answers orders by learner: the figures read one learner at a time.
    choices = {
        item.pk: [(c.key, c.is_correct) for c in item.choices.all()]
        for item in items
        if item.kind == QuizItem.Kind.MULTIPLE_CHOICE
    }
    figures = method.item_analysis(
        rows(), item_ids=[i.pk for i in items], grouped=True, choices=choices
    )
    templates = {t.item.pk: t for t in calculated_stats_for(course=course)}
    recall = cohort_recall(course=course, now=now)
    report_items = []
    for item, fig in zip(items, figures, strict=True):
        row: dict[str, Any] = {
            "key": item.key,
            "lesson": item.lesson.slug,
            "kind": item.kind,
            "prompt": item.prompt[:PROMPT_EXCERPT],
            "skills": list(item.skills),
            **fig.as_dict(),
            "cards": recall.get(item.pk, (0, None))[0],
            "recall_now": recall.get(item.pk, (0, None))[1],
        }
        texts = {choice.key: choice.text[:CHOICE_EXCERPT] for choice in item.choices.all()}
        for share in row["choice_shares"] or ():
            share["text"] = texts.get(share["key"], "")
        template = templates.get(item.pk)
        if template is not None:
            row["template"] = {
                "reviews": template.reviews,
                "again_rate": template.again_rate,
                "median_relative_error": template.median_relative_error,
                "mistake": template.mistake,
                "mistake_count": template.mistake_count,
            }
        report_items.append(row)
    return {
        "course": course.slug,
        "computed_at": now.isoformat(),
        "learners": len(learners),
        "responses": sum(f.responses for f in figures),
        "method": {
            "response": "each learner's first review log of the item (undone ones skipped)",
            "correct": "rated above Again",
            "discrimination": "facility of the upper 27 % minus the lower 27 % of learners "
            "ranked by facility on the course's other items (Kelley 1939)",
            "point_biserial": "correlation of the first answer (0/1) with that rest score",
            "source": "Moodle quiz statistics (docs.moodle.org/en/Quiz_report_statistics)",
            "kelley_share": method.KELLEY_SHARE,
            "too_easy_above": method.TOO_EASY_ABOVE,
            "too_hard_below": method.TOO_HARD_BELOW,
            "min_responses": method.MIN_RESPONSES,
            "choice_shares": method.CHOICE_SHARES_NOTE,
        },
        "items": report_items,
    }


def item_analysis_refresh(*, course: Course, now: datetime) -> ItemAnalysis:
    """Compute the course's analysis and store it (one row per course, replaced)."""
    report = item_analysis_report(course=course, now=now)
    with transaction.atomic():
        analysis, _created = ItemAnalysis.objects.update_or_create(
            course=course,
            defaults={
                "computed_at": now,
                "learners": report["learners"],
                "responses": report["responses"],
                "report": report,
            },
        )
    return analysis
