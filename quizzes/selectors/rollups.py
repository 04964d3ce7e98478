"""Reads of the review rollups (services/rollup.py) plus the logs since their watermark, so a
figure is exact and costs the same at any course size: the rollup rows are per item and day,
and the tail is an index range of (item, reviewed_at) or (learner, reviewed_at)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from django.db.models import Count, DateField, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate, TruncWeek

from quizzes.models import (
    ItemDayRollup,
    ItemScheduleCounts,
    RecallSchedule,
    ReviewLog,
    ReviewRollupWatermark,
)

LEECH_LAPSES = 8  # lapses that make a card a leech, as in Anki
_IN_REVIEW = Q(state_before__state=RecallSchedule.State.REVIEW)
_PASSED = Q(rating__gt=ReviewLog.Rating.AGAIN)


def rolled_up_to() -> datetime | None:
    """The rollup's watermark (None: it never ran, and every figure comes from the logs).
    One query."""
    return ReviewRollupWatermark.objects.filter(pk=1).values_list("rolled_up_to", flat=True).first()


def tail_logs(*, mark: datetime | None) -> QuerySet[ReviewLog]:
    """Kept review logs the rollup has not counted yet."""
    logs = ReviewLog.objects.filter(undo__isnull=True)
    return logs.filter(reviewed_at__gte=mark) if mark is not None else logs


@dataclass(frozen=True)
class ItemTotals:
    reviews: int = 0
    again: int = 0
    duration_ms_sum: int = 0
    duration_count: int = 0
    review_state_reviews: int = 0
    review_state_passed: int = 0

    def __add__(self, other: ItemTotals) -> ItemTotals:
        return ItemTotals(*(a + b for a, b in zip(self.row(), other.row(), strict=True)))

    def row(self) -> tuple[int, ...]:
        return (
            self.reviews, self.again, self.duration_ms_sum, self.duration_count,
            self.review_state_reviews, self.review_state_passed,
        )  # fmt: skip

    @property
    def mean_ms(self) -> float | None:
        return self.duration_ms_sum / self.duration_count if self.duration_count else None


def item_totals(*, items: Q, mark: datetime | None) -> dict[int, ItemTotals]:
    """All-time kept reviews per item of `items` (a Q on QuizItem paths, e.g.
    `Q(item__lesson__module__course=course)`): the rollup's sums and the tail's counts in one
    UNION ALL statement."""
    tail = (
        tail_logs(mark=mark)
        .filter(items)
        .order_by()
        .values("item_id")
        .annotate(
            n=Count("id"),
            again=Count("id", filter=Q(rating=ReviewLog.Rating.AGAIN)),
            ms=Coalesce(Sum("duration_ms"), 0),
            timed=Count("duration_ms"),
            rs=Count("id", filter=_IN_REVIEW),
            rs_passed=Count("id", filter=_IN_REVIEW & _PASSED),
        )
        .values_list("item_id", "n", "again", "ms", "timed", "rs", "rs_passed")
    )
    query: QuerySet[Any] = tail
    if mark is not None:
        rolled = (
            ItemDayRollup.objects.filter(items)
            .order_by()
            .values("item_id")
            .annotate(
                n=Sum("reviews"),
                again_=Sum("again"),
                ms=Sum("duration_ms_sum"),
                timed=Sum("duration_count"),
                rs=Sum("review_state_reviews"),
                rs_passed=Sum("review_state_passed"),
            )
            .values_list("item_id", "n", "again_", "ms", "timed", "rs", "rs_passed")
        )
        query = rolled.union(tail, all=True)
    totals: dict[int, ItemTotals] = {}
    for item_id, *counts in query:
        totals[item_id] = totals.get(item_id, ItemTotals()) + ItemTotals(*map(int, counts))
    return totals


def weekly_review_rates(
    *, items: Q, mark: datetime | None, first: date
) -> dict[date, tuple[int, int]]:
    """Reviews of cards in Review state and how many passed, per UTC week (Monday) from `first`:
    one statement."""
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    logs = tail_logs(mark=mark).filter(items, _IN_REVIEW)
    if mark is None or mark < since:
        logs = logs.filter(reviewed_at__gte=since)
    tail = (
        logs.annotate(
            week=TruncWeek(TruncDate("reviewed_at", tzinfo=UTC), output_field=DateField())
        )
        .order_by()
        .values("week")
        .annotate(n=Count("id"), passed=Count("id", filter=_PASSED))
        .values_list("week", "n", "passed")
    )
    query: QuerySet[Any] = tail
    if mark is not None:
        rolled = (
            ItemDayRollup.objects.filter(items, day__gte=first)
            .annotate(week=TruncWeek("day", output_field=DateField()))
            .order_by()
            .values("week")
            .annotate(n=Sum("review_state_reviews"), passed=Sum("review_state_passed"))
            .values_list("week", "n", "passed")
        )
        query = rolled.union(tail, all=True)
    by_week: dict[date, tuple[int, int]] = {}
    for week, n, passed in query:
        day = week.date() if isinstance(week, datetime) else week
        before = by_week.get(day, (0, 0))
        by_week[day] = (before[0] + int(n), before[1] + int(passed))
    return by_week


def schedule_counts(*, items: Q, mark: datetime | None) -> dict[int, tuple[int, int]]:
    """Learners with a schedule of each item and how many of those are leeches: counted by the
    last rollup (live from the schedules before the first). One query."""
    rows: QuerySet[Any, tuple[int, int, int]]
    if mark is not None:
        rows = ItemScheduleCounts.objects.filter(items).values_list(
            "item_id", "learners", "leeches"
        )
    else:
        rows = (
            RecallSchedule.objects.filter(items)
            .order_by()
            .values("item_id")
            .annotate(n=Count("id"), leeches=Count("id", filter=Q(lapses__gte=LEECH_LAPSES)))
            .values_list("item_id", "n", "leeches")
        )
    return {item_id: (n, leeches) for item_id, n, leeches in rows}
