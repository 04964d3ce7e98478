"""The review rollup: the maintained aggregates the instructor pages and a learner's statistics
read (per item per UTC day, per learner per learning day, schedule counts per item).

Why a periodic rollup and not an update in the grade's own transaction: every grade of a course
would then update the same few item-day rows, so the course's graders would queue on those row
locks (a hot row per popular item per day), and the grade, the learner's impatient path, would
pay for the instructor's pages. The rollup instead recomputes, in one transaction, every bucket
from its logs for the days since two days before the last watermark: idempotent (a rerun
rewrites the same rows), it catches up after any downtime (the window starts at the old
watermark), and the two days' overlap takes in an undo (only today's grade can be undone) and a
grade committed just after the last run. Readers add the logs since the watermark (an index
range), so the pages stay exact between runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    Count,
    DateField,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce, TruncDate

from accounts.local_day import local_date_expression
from accounts.models import User
from quizzes.models import (
    ItemDayRollup,
    ItemScheduleCounts,
    LearnerDayRollup,
    QuizItem,
    RecallSchedule,
    ReviewLog,
    ReviewRollupWatermark,
)
from quizzes.selectors.course_stats import LEECH_LAPSES
from quizzes.selectors.stats_days import MATURE_DAYS

# An undo reaches back at most to the start of the learner's day (under 38 hours in any zone),
# and a grade commits within seconds of its reviewed_at: two days of overlap covers both.
OVERLAP = timedelta(days=2)
# At most this much of the log per transaction: a first run or one after a long outage catches
# up window by window (about 20 s each at 50,000 reviews a day), never one transaction that
# outlives the task's time limit.
CATCH_UP = timedelta(days=14)
# Windows one run takes on before leaving the rest to the next (the task's soft limit is 240 s).
CATCH_UP_BUDGET_S = 150.0
# Items per statement: the (item, reviewed_at) index is read per item, bounded per statement.
# A learner's day spans batches (and courses), so its row is an upsert that adds each batch's
# counts (`_add_select`): one row per (learner, day) whatever the batching.
ITEM_BATCH = 64

_IN_REVIEW = Q(state_before__state=RecallSchedule.State.REVIEW)
_PASSED = Q(rating__gt=ReviewLog.Rating.AGAIN)


@dataclass(frozen=True)
class RollupRun:
    since: datetime | None  # None: the first run, from the first log
    upto: datetime
    item_days: int
    learner_days: int
    items_counted: int


def _item_batches() -> Iterator[list[int]]:
    ids = list(QuizItem.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), ITEM_BATCH):
        yield ids[start : start + ITEM_BATCH]


def _logs(item_ids: list[int], since: datetime | None, upto: datetime) -> QuerySet[ReviewLog]:
    logs = ReviewLog.objects.filter(item_id__in=item_ids, reviewed_at__lt=upto, undo__isnull=True)
    return logs.filter(reviewed_at__gte=since) if since is not None else logs


def _insert_select(model: type, columns: list[str], query: QuerySet[Any]) -> int:
    sql, params = query.query.sql_with_params()
    table = model._meta.db_table  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({', '.join(columns)}) {sql}", params)
        return max(cursor.rowcount, 0)


def _add_select(model: type, key: list[str], columns: list[str], query: QuerySet[Any]) -> int:
    """INSERT ... SELECT whose rows add their counts to a row already there with the same key
    (ON CONFLICT ... DO UPDATE, PostgreSQL 9.5+ and SQLite 3.24+ alike)."""
    sql, params = query.query.sql_with_params()
    table = model._meta.db_table  # type: ignore[attr-defined]
    added = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in columns if c not in key)
    # SQLite reads an ON after a bare FROM as a join's: the grouped SELECT ends in GROUP BY.
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) {sql} "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {added}",
            params,
        )
        return max(cursor.rowcount, 0)


_ITEM_COLUMNS = [
    "item_id", "day", "reviews", "again", "duration_ms_sum", "duration_count",
    "review_state_reviews", "review_state_passed",
]  # fmt: skip


def _item_days(item_ids: list[int], since: datetime | None, upto: datetime) -> QuerySet[Any]:
    return (
        _logs(item_ids, since, upto)
        .annotate(day=TruncDate("reviewed_at", tzinfo=UTC))
        .order_by()
        .values("item_id", "day")
        .annotate(
            reviews=Count("id"),
            again=Count("id", filter=Q(rating=ReviewLog.Rating.AGAIN)),
            duration_ms_sum=Coalesce(Sum("duration_ms"), 0),
            duration_count=Count("duration_ms"),
            review_state_reviews=Count("id", filter=_IN_REVIEW),
            review_state_passed=Count("id", filter=_IN_REVIEW & _PASSED),
        )
        .values_list(*_ITEM_COLUMNS)
    )


_LEARNER_COLUMNS = [
    "learner_id", "day", "reviews", "review_state_reviews", "review_state_passed",
    "mature_reviews", "mature_passed",
]  # fmt: skip


def _learner_days(
    item_ids: list[int], since: datetime | None, upto: datetime, zone: tuple[str, int], cut: date
) -> QuerySet[Any]:
    time_zone, day_start_hour = zone
    local = ExpressionWrapper(
        local_date_expression("reviewed_at", time_zone=time_zone, day_start_hour=day_start_hour),
        output_field=DateField(),
    )
    mature = Q(scheduled_days__gte=MATURE_DAYS) & _IN_REVIEW
    return (
        _logs(item_ids, since, upto)
        .filter(learner__time_zone=time_zone, learner__day_start_hour=day_start_hour)
        .annotate(day=local)
        .filter(day__gte=cut)
        .order_by()
        .values("learner_id", "day")
        .annotate(
            reviews=Count("id"),
            review_state_reviews=Count("id", filter=_IN_REVIEW),
            review_state_passed=Count("id", filter=_IN_REVIEW & _PASSED),
            mature_reviews=Count("id", filter=mature),
            mature_passed=Count("id", filter=mature & _PASSED),
        )
        .values_list(*_LEARNER_COLUMNS)
    )


def _schedule_counts() -> QuerySet[Any]:
    return (
        RecallSchedule.objects.order_by()
        .values("item_id")
        .annotate(learners=Count("id"), leeches=Count("id", filter=Q(lapses__gte=LEECH_LAPSES)))
        .values_list("item_id", "learners", "leeches")
    )


def _first_review_at() -> datetime | None:
    """The earliest review log: the first of each item's (item, reviewed_at) index. One query."""
    first = ReviewLog.objects.filter(item_id=OuterRef("pk")).order_by("reviewed_at")
    times = QuizItem.objects.annotate(first=Subquery(first.values("reviewed_at")[:1]))
    return min(filter(None, times.values_list("first", flat=True)), default=None)


def _rollup_window(*, now: datetime) -> RollupRun:
    """One window: every bucket from two days before the watermark (the first log when there
    is none) up to `now` or CATCH_UP later, whichever comes first; the watermark moves there.
    One transaction; a concurrent run waits on the watermark's row lock."""
    with transaction.atomic():
        ReviewRollupWatermark.objects.get_or_create(pk=1)
        mark = ReviewRollupWatermark.objects.select_for_update().get(pk=1)
        since = None
        item_cut = learner_cut = None
        if mark.rolled_up_to is not None:
            upto = min(now, mark.rolled_up_to + CATCH_UP)
            since = mark.rolled_up_to - OVERLAP
            item_cut = since.date()
            since = datetime.combine(item_cut, datetime.min.time(), tzinfo=since.tzinfo)
            # A learning day starts up to 14 hours before its UTC date (UTC+14) and a day-start
            # hour later: recompute whole learning days from the day before the UTC cut.
            learner_cut = item_cut - timedelta(days=1)
        else:
            first = _first_review_at()
            upto = now if first is None else min(now, first + CATCH_UP)
        item_rows = 0
        if item_cut is None:
            ItemDayRollup.objects.all().delete()
            LearnerDayRollup.objects.all().delete()
        else:
            ItemDayRollup.objects.filter(day__gte=item_cut).delete()
            LearnerDayRollup.objects.filter(day__gte=learner_cut).delete()
        learner_since = since - timedelta(days=2) if since is not None else None
        zones = list(User.objects.order_by().values_list("time_zone", "day_start_hour").distinct())
        for item_ids in _item_batches():
            item_rows += _insert_select(
                ItemDayRollup, _ITEM_COLUMNS, _item_days(item_ids, since, upto)
            )
            for zone in zones:
                _add_select(
                    LearnerDayRollup,
                    ["learner_id", "day"],
                    _LEARNER_COLUMNS,
                    _learner_days(item_ids, learner_since, upto, zone, learner_cut or date.min),
                )
        learner_rows = LearnerDayRollup.objects.filter(day__gte=learner_cut or date.min).count()
        # Counted afresh in every window: readers take them once there is a watermark.
        ItemScheduleCounts.objects.all().delete()
        counted = _insert_select(
            ItemScheduleCounts, ["item_id", "learners", "leeches"], _schedule_counts()
        )
        mark.rolled_up_to = upto
        mark.updated_at = now
        mark.save(update_fields=["rolled_up_to", "updated_at"])
    return RollupRun(
        since=since, upto=upto, item_days=item_rows, learner_days=learner_rows,
        items_counted=counted,
    )  # fmt: skip


def review_rollups_refresh(*, now: datetime, budget_s: float = CATCH_UP_BUDGET_S) -> RollupRun:
    """Bring the rollup up to `now`, a window of at most CATCH_UP at a time, each committed on
    its own, for at most `budget_s` seconds (the next run carries on from where this one
    stopped: readers count the logs after the watermark meanwhile). Returns the run's totals."""
    started = time.monotonic()
    first = run = _rollup_window(now=now)
    item_days, learner_days = run.item_days, run.learner_days
    while run.upto < now and time.monotonic() - started < budget_s:
        run = _rollup_window(now=now)
        item_days += run.item_days
        learner_days += run.learner_days
    return RollupRun(
        since=first.since, upto=run.upto, item_days=item_days, learner_days=learner_days,
        items_counted=run.items_counted,
    )  # fmt: skip
