"""The learner's statistics read per local day (two queries for due counts, forecast, streak,
mature reviews and weekly history) give exactly what the former separate queries gave."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db.models import Count, Q

from accounts.models import User
from quizzes.models import QuizItem, RecallSchedule, ReviewLog, ReviewUndo
from quizzes.selectors.queue import local_day_bounds
from quizzes.selectors.stats import (
    MATURE_DAYS,
    _local_date,
    _streak,
    kept_logs,
    learner_stats,
    retention_history_for,
)
from tests.factories import QuizItemFactory, UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

# Around the spring daylight-saving change in Europe and the USA, and a quiet June day.
MOMENTS = [
    datetime(2026, 3, 29, 1, 30, tzinfo=UTC),
    datetime(2026, 3, 9, 11, 0, tzinfo=UTC),
    datetime(2026, 6, 10, 12, 0, tzinfo=UTC),
]
ZONES = ["UTC", "Europe/Berlin", "America/Los_Angeles", "Pacific/Auckland", "Asia/Kolkata"]


def _old_due_counts(*, learner: User, now: datetime) -> tuple[int, int]:
    """The former due counts: one aggregate of its own."""
    _, end = local_day_bounds(learner=learner, now=now)
    due = RecallSchedule.objects.filter(learner=learner, due__lt=end).aggregate(
        now=Count("id", filter=Q(due__lte=now)), today=Count("id")
    )
    return due["now"], due["today"]


def _old_days_and_mature_reviews(*, learner: User) -> tuple[set[date], int, int]:
    """The former query of review days with the mature reviews, as it was written."""
    mature = Q(state_before__state=RecallSchedule.State.REVIEW, scheduled_days__gte=MATURE_DAYS)
    rows = (
        kept_logs()
        .filter(learner=learner)
        .annotate(day=_local_date("reviewed_at", learner))
        .order_by()
        .values("day")
        .annotate(
            n=Count("id", filter=mature),
            passed=Count("id", filter=mature & Q(rating__gt=ReviewLog.Rating.AGAIN)),
        )
    )
    days: set[date] = set()
    n = passed = 0
    for row in rows:
        days.add(row["day"])
        n += row["n"]
        passed += row["passed"]
    return days, n, passed


def _old_forecast(*, learner: User, now: datetime) -> list[int]:
    """The former forecast: overdue counted apart and added to today."""
    start, _ = local_day_bounds(learner=learner, now=now)
    schedules = RecallSchedule.objects.filter(learner=learner)
    overdue = schedules.filter(due__lt=start).count()
    rows = (
        schedules.filter(due__gte=start, due__lt=start + timedelta(days=30))
        .annotate(day=_local_date("due", learner))
        .values("day")
        .annotate(n=Count("id"))
    )
    counts = {row["day"]: row["n"] for row in rows}
    today = start.date()
    return [
        counts.get(today + timedelta(days=i), 0) + (overdue if i == 0 else 0) for i in range(30)
    ]


def _seed(rng: random.Random, learner: User, items: list[QuizItem], now: datetime) -> None:
    """Schedules due from weeks ago to weeks ahead, and for each a few review logs over the
    last four months (reviews of every state and interval, some undone, some at day edges)."""
    for item in items:
        schedule = RecallSchedule.objects.create(
            learner=learner,
            item=item,
            course_id=item.lesson.module.course_id,
            state=rng.choice([1, 2, 3]),
            stability=rng.uniform(0.5, 90),
            difficulty=rng.uniform(1, 10),
            last_review=now - timedelta(days=rng.uniform(0, 60)),
            due=now + timedelta(minutes=rng.randint(-60 * 24 * 40, 60 * 24 * 40)),
        )
        for _ in range(rng.randint(0, 6)):
            if rng.random() < 0.3:  # on the hour: the edges of local days
                at = (now - timedelta(hours=rng.randint(0, 24 * 120))).replace(minute=0, second=0)
            else:
                at = now - timedelta(seconds=rng.randint(0, 86_400 * 120))
            state = rng.choice([1, 2, 2, 2, 3])
            log = ReviewLog.objects.create(
                schedule=schedule,
                learner=learner,
                item=item,
                rating=rng.randint(1, 4),
                reviewed_at=at,
                scheduled_days=rng.choice([0, 3, 20, 21, 22, 60]) if state == 2 else 0,
                idempotency_key=uuid.uuid4(),
                state_before={"state": state, "reps": 3},
                state_after={"state": 2, "reps": 4},
            )
            if rng.random() < 0.1:
                ReviewUndo.objects.create(log=log, learner=learner, undone_at=at)


@pytest.mark.parametrize("seed", range(6))
def test_learner_stats_match_the_former_queries(seed: int, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    """Due now and today, the forecast, true retention, the streak and the weekly history are
    the same as the separate queries computed them, in varied zones, day starts and moments."""
    rng = random.Random(seed)
    now = MOMENTS[seed % len(MOMENTS)]
    learner = UserFactory(time_zone=rng.choice(ZONES), day_start_hour=rng.choice([0, 3, 4, 23]))
    c = course_with_items(learner=learner)
    items = [c.mc, c.numeric, c.recall, *(QuizItemFactory(lesson=c.lesson) for _ in range(40))]
    _seed(rng, learner, items, now)
    _seed(rng, UserFactory(), items, now)  # another learner's cards and reviews never count

    with django_assert_max_num_queries(3):
        stats = learner_stats(learner=learner, now=now)

    today = local_day_bounds(learner=learner, now=now)[0].date()
    days, mature_n, mature_passed = _old_days_and_mature_reviews(learner=learner)
    assert (stats.due_now, stats.due_today) == _old_due_counts(learner=learner, now=now)
    assert [d.count for d in stats.forecast] == _old_forecast(learner=learner, now=now)
    assert [d.day for d in stats.forecast] == [today + timedelta(days=i) for i in range(30)]
    assert (stats.mature_reviews, stats.mature_passed) == (mature_n, mature_passed)
    assert (stats.streak_days, stats.reviewed_today) == _streak(days, today)
    assert stats.history == retention_history_for(learner=learner, now=now)
    assert sum(w.reviews for w in stats.history) > 0 and stats.mature_reviews > 0


@pytest.mark.parametrize("seed", range(3))
def test_reviewed_items_match_the_former_query(seed: int) -> None:
    """Leeches and recent items, read from the learner's own schedules only (their last
    review), are those a query over every kept log of the learner finds."""
    from django.db.models import Max, OuterRef, Subquery

    from quizzes.selectors.history import ReviewedItem, reviewed_items_for

    rng = random.Random(seed)
    learner = UserFactory()
    c = course_with_items(learner=learner)
    items = [c.mc, c.numeric, c.recall, *(QuizItemFactory(lesson=c.lesson) for _ in range(70))]
    _seed(rng, learner, items, MOMENTS[2])
    _seed(rng, UserFactory(), items, MOMENTS[2])
    RecallSchedule.objects.filter(pk__in=[s.pk for s in RecallSchedule.objects.all()[::5]]).update(
        suspended=True, lapses=8
    )
    # As the review service leaves it: a schedule's last review is its latest kept log's.
    kept = ReviewLog.objects.filter(schedule=OuterRef("pk"), undo__isnull=True)
    RecallSchedule.objects.update(
        last_review=Subquery(kept.order_by("-reviewed_at").values("reviewed_at")[:1])
    )
    rows = (
        ReviewLog.objects.filter(learner=learner, undo__isnull=True)
        .values("item_id", "item__prompt", "schedule__lapses", "schedule__suspended")
        .annotate(last=Max("reviewed_at"))
        .order_by("-schedule__suspended", "-last", "item_id")[:20]
    )
    old = [
        ReviewedItem(
            r["item_id"],
            r["item__prompt"],
            r["last"],
            r["schedule__lapses"],
            r["schedule__suspended"],
        )
        for r in rows
    ]
    got = reviewed_items_for(learner=learner, recent=10, leeches=10)
    assert got.leeches == [i for i in old if i.suspended][:10]
    assert got.recent == [i for i in old if not i.suspended][:10]
    assert got.leeches and got.recent
