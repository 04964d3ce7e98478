"""Reads for learnt FSRS parameters: review histories per scope, which scopes have grown, and
what an instructor sees of a course's parameter sets."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count, Q, Sum

from courses.models import Course
from quizzes.fsrs_optimizer import Review
from quizzes.models import FsrsParameters, RecallSchedule, ReviewLog
from quizzes.selectors.rollups import item_totals, rolled_up_to

# A learner gets personal parameters only with this many long-term reviews (a day or more after
# the one before): on the shared log personal parameters first beat the defaults at about 1,100.
PERSONAL_MIN_LONG_TERM = 1100
# A course's pooled parameters need at least this many reviews (the bench's smallest size).
POOLED_MIN_REVIEWS = 512
# A scope is retrained when its review count has grown by this fraction since its last set.
GROWTH = 0.10

# The pooled set trains and scores on a stratified sample of learners holding about this many
# reviews, so the nightly job costs the same past it (about 12 s of fsrs-rs and 300 MB at this
# size, bench/instructor_scale.py). On the shared 12,580-review log the held-out log loss stops
# improving by the full 8,806 training reviews (docs/benchmarks.md), and the srs-benchmark's
# pooled FSRS fits gain little past some 10^5 reviews (open-spaced-repetition/srs-benchmark):
# 200,000 is both, with room for a course's mix of learners.
SAMPLE_REVIEWS = 200_000
# Learners are ranked by review count and split in this many equal strata, each sampled in the
# same proportion, so light and heavy learners keep their share.
SAMPLE_STRATA = 10
# Learners whose logs one statement reads: a (learner, reviewed_at) index range each.
HISTORY_BATCH = 500

HistoryKey = tuple[int, int]  # (learner id, item id)


def _scope_logs(*, course: Course, learner_id: int | None) -> Q:
    scope = Q(item__lesson__module__course=course, undo__isnull=True)
    if learner_id is not None:
        scope &= Q(learner_id=learner_id)
    return scope


def learner_review_counts(*, course: Course) -> dict[int, int]:
    """Each learner's reviews in the course as their schedules count them (reps): one query of
    the schedules, not of the logs."""
    rows = (
        RecallSchedule.objects.filter(course=course)
        .order_by()
        .values("learner_id")
        .annotate(n=Sum("reps"))
        .values_list("learner_id", "n")
    )
    return {learner: n or 0 for learner, n in rows}


def pooled_sample(
    *, course: Course, budget: int | None = None, strata: int | None = None
) -> list[int] | None:
    """The learners whose reviews train the pooled set: None (all of them) when the course
    holds no more than `budget` reviews, else a seeded sample of each review-count stratum in
    proportion budget / total. One query."""
    budget = SAMPLE_REVIEWS if budget is None else budget
    strata = SAMPLE_STRATA if strata is None else strata
    counts = learner_review_counts(course=course)
    total = sum(counts.values())
    if total <= budget:
        return None
    ranked = sorted(counts, key=lambda learner: (counts[learner], learner))
    size = -(-len(ranked) // strata)
    rng = random.Random(course.pk)
    chosen: list[int] = []
    for start in range(0, len(ranked), size):
        stratum = ranked[start : start + size]
        chosen += rng.sample(stratum, max(1, round(len(stratum) * budget / total)))
    return sorted(chosen)


def review_history_batches(
    *, course: Course, learner_ids: list[int] | None = None, batch: int = HISTORY_BATCH
) -> Iterator[dict[HistoryKey, list[Review]]]:
    """Every card's reviews of `learner_ids` (None: every learner with a schedule in the
    course), oldest first, undone grades left out: a dict per `batch` learners, each read
    through a server-side cursor, so memory holds one batch. One query per batch, plus one for
    the learners when not given."""
    if learner_ids is None:
        learner_ids = list(
            RecallSchedule.objects.filter(course=course)
            .order_by("learner_id")
            .values_list("learner_id", flat=True)
            .distinct()
        )
    for start in range(0, len(learner_ids), batch):
        rows = (
            ReviewLog.objects.filter(
                _scope_logs(course=course, learner_id=None),
                learner_id__in=learner_ids[start : start + batch],
            )
            .order_by("learner_id", "reviewed_at", "id")
            .values_list("learner_id", "item_id", "reviewed_at", "rating")
        )
        histories: dict[HistoryKey, list[Review]] = defaultdict(list)
        for learner, item, at, rating in rows.iterator(chunk_size=5000):
            histories[(learner, item)].append(Review(at=at, rating=rating))
        yield dict(histories)


def review_histories(
    *, course: Course, learner_id: int | None = None, learner_ids: list[int] | None = None
) -> dict[HistoryKey, list[Review]]:
    """Every card's reviews in the scope (a course, one learner in it, or `learner_ids`),
    oldest first; undone grades left out. Read in batches of learners (review_history_batches)."""
    ids = [learner_id] if learner_id is not None else learner_ids
    histories: dict[HistoryKey, list[Review]] = {}
    for part in review_history_batches(course=course, learner_ids=ids):
        histories.update(part)
    return histories


def scope_review_count(*, course: Course, learner_id: int | None) -> int:
    """The scope's kept reviews: the course's from the review rollup and its tail (two
    queries), a learner's from their (learner, reviewed_at) index range (one)."""
    if learner_id is not None:
        return ReviewLog.objects.filter(_scope_logs(course=course, learner_id=learner_id)).count()
    totals = item_totals(items=Q(item__lesson__module__course=course), mark=rolled_up_to())
    return sum(t.reviews for t in totals.values())


def latest_parameters(*, course: Course, learner_id: int | None) -> FsrsParameters | None:
    scope = FsrsParameters.objects.filter(course=course)
    scope = (
        scope.filter(learner_id=learner_id)
        if learner_id is not None
        else scope.filter(learner=None)
    )
    return scope.order_by("-version").first()


def active_parameters(*, course: Course, learner_id: int | None) -> FsrsParameters | None:
    scope = FsrsParameters.objects.filter(course=course, status=FsrsParameters.Status.ACTIVE)
    scope = (
        scope.filter(learner_id=learner_id)
        if learner_id is not None
        else scope.filter(learner=None)
    )
    return scope.first()


def _grown(count: int, latest: FsrsParameters | None) -> bool:
    return latest is None or count >= max(
        latest.review_count * (1 + GROWTH), latest.review_count + 1
    )


def scopes_to_train(*, course: Course) -> list[int | None]:
    """The scopes whose reviews have grown enough since their last set: None for the course's
    pooled set, then the ids of learners with enough long-term reviews. The candidates for a
    personal set are found from their schedules' reps (a learner's long-term reviews are at most
    their reviews), then counted on their own logs; a few queries plus two per candidate, never
    a scan of the course's logs."""
    scopes: list[int | None] = []
    total = scope_review_count(course=course, learner_id=None)
    if total >= POOLED_MIN_REVIEWS and _grown(
        total, latest_parameters(course=course, learner_id=None)
    ):
        scopes.append(None)
    candidates = sorted(
        learner
        for learner, n in learner_review_counts(course=course).items()
        if n >= PERSONAL_MIN_LONG_TERM
    )
    for learner_id in candidates:
        logs = ReviewLog.objects.filter(_scope_logs(course=course, learner_id=learner_id))
        counts = logs.aggregate(
            total=Count("id"), long_term=Count("id", filter=Q(scheduled_days__gt=0))
        )
        if counts["long_term"] < PERSONAL_MIN_LONG_TERM:
            continue
        latest = latest_parameters(course=course, learner_id=learner_id)
        if _grown(counts["total"], latest):
            scopes.append(learner_id)
    return scopes


@dataclass(frozen=True)
class CourseParametersSummary:
    """What the instructor's parameters page shows for one course."""

    pooled_active: FsrsParameters | None
    pooled_history: list[FsrsParameters]
    personal_active: list[FsrsParameters]
    learners_with_personal: int


def course_parameters_summary(*, course: Course, history: int = 10) -> CourseParametersSummary:
    """The pooled set in force and its last `history` versions, and the personal sets in force.
    Two queries."""
    pooled = list(
        FsrsParameters.objects.filter(course=course, learner=None).order_by("-version")[:history]
    )
    personal = list(
        FsrsParameters.objects.filter(
            course=course, learner__isnull=False, status=FsrsParameters.Status.ACTIVE
        )
        .select_related("learner")
        .order_by("learner_id")
    )
    active = next((p for p in pooled if p.status == FsrsParameters.Status.ACTIVE), None)
    return CourseParametersSummary(
        pooled_active=active,
        pooled_history=pooled,
        personal_active=personal,
        learners_with_personal=len(personal),
    )
