"""One item's review history for its learner: every grade, the interval it gave, and how likely
recall was when it was made."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from accounts.models import User
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.prepared import PreparedQuery
from quizzes.services import fsrs_adapter


@dataclass(frozen=True)
class HistoryEntry:
    reviewed_at: datetime
    rating: str
    source: str
    interval: str  # until the next review it scheduled, as the grade buttons say it
    retrievability: float | None  # FSRS probability of recall when graded; None on a first grade
    duration_ms: int | None
    undone: bool


@dataclass(frozen=True)
class ItemHistory:
    item: QuizItem
    schedule: RecallSchedule
    entries: list[HistoryEntry]


def item_history_for(*, learner: User, item_id: int) -> ItemHistory:
    """Every grade of the learner's item, oldest first (two queries). Raises
    RecallSchedule.DoesNotExist when the learner has no schedule for it (another learner's
    item is not found either)."""
    schedule = RecallSchedule.objects.select_related("item__lesson__module__course").get(
        learner=learner, item_id=item_id
    )
    # FSRS-6's default weights with the course's settings, as the statistics use: reproducible.
    scheduler = fsrs_adapter.scheduler_for(schedule.item.lesson.module.course)
    logs = (
        ReviewLog.objects.filter(schedule=schedule)
        .select_related("undo")
        .order_by("reviewed_at", "id")
    )
    entries = []
    for log in logs:
        before, after = log.state_before, log.state_after
        retrievability = None
        if before.get("stability") is not None and before.get("last_review"):
            card = fsrs_adapter.card_from_state_json(before, card_id=schedule.pk)
            retrievability = scheduler.get_card_retrievability(
                card, current_datetime=fsrs_adapter.to_utc(log.reviewed_at)
            )
        interval = datetime.fromisoformat(after["due"]) - log.reviewed_at
        entries.append(
            HistoryEntry(
                reviewed_at=log.reviewed_at,
                rating=log.get_rating_display(),
                source=log.get_source_display(),
                interval=fsrs_adapter.interval_label(interval),
                retrievability=retrievability,
                duration_ms=log.duration_ms,
                undone=hasattr(log, "undo"),
            )
        )
    return ItemHistory(item=schedule.item, schedule=schedule, entries=entries)


@dataclass(frozen=True)
class ReviewedItem:
    item_id: int
    prompt: str
    last_reviewed_at: datetime
    lapses: int
    suspended: bool


@dataclass(frozen=True)
class ReviewedItems:
    leeches: list[ReviewedItem]  # suspended after too many lapses
    recent: list[ReviewedItem]  # the latest graded items, to open their histories


def _reviewed_items_queryset(*, learner_id: int, limit: int) -> QuerySet[Any]:
    # The schedule's own last_review is its latest kept review (an undo puts back the one
    # before), so the learner's schedules alone answer, one row per item: a heavy learner's
    # 50,000 logs are not read (a MAX over them took 1.5 s, issue 39). Sorted before the
    # prompt is read, so only the rows kept are joined to their item.
    return (
        RecallSchedule.objects.filter(learner_id=learner_id, last_review__isnull=False)
        .annotate(
            prompt=Subquery(
                QuizItem.objects.filter(pk=OuterRef("item_id")).order_by().values("prompt")
            ),
        )
        .order_by("-suspended", "-last_review", "item_id")
        .values_list("item_id", "prompt", "last_review", "lapses", "suspended")[:limit]
    )


_REVIEWED_ITEMS = PreparedQuery(_reviewed_items_queryset, fixed=("limit",))


def reviewed_items_for(*, learner: User, recent: int = 10, leeches: int = 50) -> ReviewedItems:
    """The learner's suspended leeches and most recently graded items, latest first (one
    query: leeches sort first)."""
    rows = _REVIEWED_ITEMS.rows(learner_id=learner.pk, limit=leeches + recent)
    # Only the rows shown become items (most learners have no leech: ten of sixty rows).
    return ReviewedItems(
        leeches=[ReviewedItem(*row) for row in [r for r in rows if r[4]][:leeches]],
        recent=[ReviewedItem(*row) for row in [r for r in rows if not r[4]][:recent]],
    )
