"""The review rollup: course statistics, the struggling items and a learner's statistics read
from the maintained aggregates plus the logs since the watermark give exactly what the logs
alone give, after later reviews and undos, after downtime, and when the rollup runs twice."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from quizzes.models import (
    ItemDayRollup,
    LearnerDayRollup,
    QuizItem,
    RecallSchedule,
    ReviewLog,
    ReviewRollupWatermark,
    ReviewUndo,
)
from quizzes.selectors.course_stats import course_stats
from quizzes.selectors.stats import learner_stats
from quizzes.services.rollup import review_rollups_refresh
from quizzes.tasks import review_rollups_refresh as rollup_task
from tests.factories import QuizItemFactory, UserFactory
from tests.quizzes.factories import course_with_items
from tests.quizzes.test_stats_equivalence import MOMENTS, ZONES, _seed

pytestmark = pytest.mark.django_db


def _forget_rollups() -> None:
    """Back to never rolled up: every figure from the logs alone, the reference."""
    ReviewRollupWatermark.objects.update(rolled_up_to=None)
    ItemDayRollup.objects.all().delete()
    LearnerDayRollup.objects.all().delete()


def _figures(course, learners, now):  # type: ignore[no-untyped-def]
    stats = course_stats(course=course, now=now)
    items = [
        (s.item.pk, s.reviews, s.again, s.mean_ms, s.learners, s.leech_learners)
        for s in stats.items
    ]
    modules = [(m.module.pk, m.reviews, m.passed) for m in stats.modules]
    mine = [learner_stats(learner=learner, now=now) for learner in learners]
    return (
        items,
        modules,
        stats.history,
        [(s.mature_reviews, s.mature_passed, s.history, s.streak_days) for s in mine],
    )


def _from_logs(course, learners, now):  # type: ignore[no-untyped-def]
    """The figures from the logs alone: the reference (the rollups are forgotten)."""
    _forget_rollups()
    return _strip_mean(_figures(course, learners, now))


def _course_with_reviews(seed: int, now: datetime):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    learners = [
        UserFactory(time_zone=rng.choice(ZONES), day_start_hour=rng.choice([0, 4, 23]))
        for _ in range(3)
    ]
    c = course_with_items(learner=learners[0])
    items = [c.mc, c.numeric, c.recall, *(QuizItemFactory(lesson=c.lesson) for _ in range(12))]
    for learner in learners:
        _seed(rng, learner, items, now)
    RecallSchedule.objects.filter(learner=learners[1], item=c.mc).update(lapses=9)
    return c.course, learners, items


def _more_reviews(
    learners, items: list[QuizItem], since: datetime, until: datetime, mark: datetime
) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    for learner in learners:
        for item in items[:6]:
            schedule = RecallSchedule.objects.get(learner=learner, item=item)
            log = ReviewLog.objects.create(
                schedule=schedule, learner=learner, item=item, rating=rng.randint(1, 4),
                reviewed_at=since + (until - since) * rng.random(), duration_ms=3000,
                scheduled_days=rng.choice([0, 21, 40]), idempotency_key=uuid.uuid4(),
                state_before={"state": 2, "reps": 3}, state_after={"state": 2, "reps": 4},
            )  # fmt: skip
    assert log


def _undo_counted(mark: datetime, at: datetime) -> None:
    """An undo, after a rollup, of a grade it had counted (the latest before its watermark)."""
    counted = ReviewLog.objects.filter(reviewed_at__lt=mark, undo__isnull=True).latest(
        "reviewed_at"
    )
    ReviewUndo.objects.create(log=counted, learner=counted.learner, undone_at=at)


def _strip_mean(figures):  # type: ignore[no-untyped-def]
    items, modules, history, mine = figures
    return [(*row[:3], None if row[3] is None else round(row[3], 6), *row[4:]) for row in items], (
        modules,
        history,
        mine,
    )


@pytest.mark.parametrize("seed", range(3))
def test_rollup_and_its_tail_give_what_the_logs_give(seed: int) -> None:
    now = MOMENTS[seed % len(MOMENTS)]
    course, learners, items = _course_with_reviews(seed, now)
    from_logs = _strip_mean(_figures(course, learners, now))

    mark = now - timedelta(hours=30)
    run = review_rollups_refresh(now=mark)
    assert run.since is None and run.item_days > 0 and run.learner_days > 0
    assert _strip_mean(_figures(course, learners, now)) == from_logs

    # Reviews after the watermark, and an undo of a counted grade: read with the tail, then
    # after the next run, and after a second run (idempotent: the same rows).
    later = now + timedelta(hours=5)
    _more_reviews(learners, items, now - timedelta(hours=2), later, mark)
    with_tail = _strip_mean(_figures(course, learners, later))
    assert with_tail == _from_logs(course, learners, later)
    review_rollups_refresh(now=mark)  # the rollup as it was (the reference forgot it)
    # An undo of a counted grade shows from the next run (the tail is of logs, not of undos).
    _undo_counted(mark, later)
    review_rollups_refresh(now=later)
    after_run = _strip_mean(_figures(course, learners, later))
    rows = sorted(ItemDayRollup.objects.values_list("item_id", "day", "reviews", "again"))
    review_rollups_refresh(now=later)
    assert sorted(ItemDayRollup.objects.values_list("item_id", "day", "reviews", "again")) == rows
    assert after_run == _strip_mean(_figures(course, learners, later))
    assert after_run == _from_logs(course, learners, later)


def test_the_rollup_catches_up_after_days_of_downtime() -> None:
    now = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
    mark = now - timedelta(days=9)
    course, learners, items = _course_with_reviews(11, mark)
    review_rollups_refresh(now=mark)
    _more_reviews(learners, items, now - timedelta(days=8), now, mark)
    _undo_counted(mark, mark + timedelta(hours=1))
    run = review_rollups_refresh(now=now)
    assert run.since is not None and run.since <= mark - timedelta(days=2)
    assert ReviewRollupWatermark.objects.get(pk=1).rolled_up_to == now
    caught_up = _strip_mean(_figures(course, learners, now))
    assert caught_up == _from_logs(course, learners, now)


def test_leeches_are_counted_by_the_rollup() -> None:
    now = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
    course, _learners, items = _course_with_reviews(5, now)
    review_rollups_refresh(now=now)
    [leech] = course_stats(course=course, now=now).leeches
    assert leech.item.pk == items[0].pk and leech.leech_learners == 1 and leech.learners == 3


def test_the_beat_task_runs_the_rollup_on_the_heavy_queue() -> None:
    now = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
    _course_with_reviews(2, now)
    assert rollup_task.queue == "heavy"
    assert rollup_task.apply().get() > 0
    assert ReviewRollupWatermark.objects.get(pk=1).rolled_up_to is not None


def test_a_long_backlog_is_caught_up_window_by_window(monkeypatch) -> None:
    """Months of logs and no rollup yet: each run takes at most a window (its own transaction),
    the pages stay exact meanwhile, and the windows end where a single run would."""
    from quizzes.services import rollup

    now = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
    course, learners, _items = _course_with_reviews(4, now)
    from_logs = _strip_mean(_figures(course, learners, now))
    monkeypatch.setattr(rollup, "CATCH_UP", timedelta(days=10))
    first = review_rollups_refresh(now=now, budget_s=0)
    assert first.upto < now  # one window only
    assert _strip_mean(_figures(course, learners, now)) == from_logs
    runs = 1
    while review_rollups_refresh(now=now, budget_s=0).upto < now:
        runs += 1
    assert runs > 3
    windowed = sorted(ItemDayRollup.objects.values_list("item_id", "day", "reviews", "again"))
    learner_rows = sorted(LearnerDayRollup.objects.values_list("learner_id", "day", "reviews"))
    assert _strip_mean(_figures(course, learners, now)) == from_logs
    _forget_rollups()
    review_rollups_refresh(now=now, budget_s=3600)
    assert sorted(ItemDayRollup.objects.values_list("item_id", "day", "reviews", "again")) == (
        windowed
    )
    assert sorted(LearnerDayRollup.objects.values_list("learner_id", "day", "reviews")) == (
        learner_rows
    )
