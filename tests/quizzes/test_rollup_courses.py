"""The review rollup with many courses and items: one row per (learner, learning day) and per
(item, UTC day) whatever the item batching, each equal to a direct count of the kept logs.

Issue 39: with more items than one batch (a second course), a learner who reviewed items of
two batches on one day made the rollup raise a duplicate key, so it never ran again."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.local_day import learning_date
from accounts.models import User
from quizzes.models import (
    ItemDayRollup,
    LearnerDayRollup,
    QuizItem,
    RecallSchedule,
    ReviewLog,
    ReviewRollupWatermark,
    ReviewUndo,
)
from quizzes.services import rollup
from quizzes.services.rollup import review_rollups_refresh
from tests.factories import EnrollmentFactory, QuizItemFactory, UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # the night Europe's clocks go forward
ZONES = [("UTC", 0), ("Europe/Berlin", 4), ("Pacific/Auckland", 23), ("America/Los_Angeles", 4)]


@pytest.fixture
def two_courses() -> tuple[list[User], list[QuizItem]]:
    """Two courses of five items each, four learners (one per zone) enrolled in both."""
    learners = [UserFactory(time_zone=zone, day_start_hour=hour) for zone, hour in ZONES]
    items: list[QuizItem] = []
    for _ in range(2):
        c = course_with_items()
        items += [c.mc, c.numeric, c.recall, QuizItemFactory(lesson=c.lesson)]
        items.append(QuizItemFactory(lesson=c.lesson))
        for learner in learners:
            EnrollmentFactory(course=c.course, user=learner)
    for learner in learners:
        for item in items:
            RecallSchedule.objects.create(
                learner=learner, item=item, course_id=item.lesson.module.course_id,
                state=2, stability=5.0, difficulty=5.0, last_review=NOW, due=NOW,
            )  # fmt: skip
    return learners, items


# One review: which learner, which item, how many minutes before NOW (the rollup takes logs
# before its watermark), its rating, undone or not.
REVIEW = st.tuples(
    st.integers(0, len(ZONES) - 1),
    st.integers(0, 9),
    st.integers(1, 60 * 24 * 40),  # before NOW: a log at the watermark is the tail's
    st.integers(1, 4),
    st.booleans(),
)


def _write(learners: list[User], items: list[QuizItem], reviews: list[tuple]) -> list[ReviewLog]:  # type: ignore[type-arg]
    schedules = {(s.learner_id, s.item_id): s for s in RecallSchedule.objects.all()}
    kept = []
    for who, which, minutes, rating, undone in reviews:
        learner, item = learners[who], items[which]
        log = ReviewLog.objects.create(
            schedule=schedules[learner.pk, item.pk], learner=learner, item=item, rating=rating,
            reviewed_at=NOW - timedelta(minutes=minutes), duration_ms=2000, scheduled_days=21,
            idempotency_key=uuid.uuid4(), state_before={"state": 2, "reps": 3},
            state_after={"state": 2, "reps": 4},
        )  # fmt: skip
        if undone:
            ReviewUndo.objects.create(log=log, learner=learner, undone_at=NOW)
        else:
            kept.append(log)
    return kept


def _direct_counts(
    learners: list[User], kept: list[ReviewLog]
) -> tuple[Counter[tuple[int, date]], Counter[tuple[int, date]]]:
    zones = {learner.pk: learner for learner in learners}
    per_learner: Counter[tuple[int, date]] = Counter()
    per_item: Counter[tuple[int, date]] = Counter()
    for log in kept:
        learner = zones[log.learner_id]
        day = learning_date(
            moment=log.reviewed_at,
            time_zone=learner.time_zone,
            day_start_hour=learner.day_start_hour,
        )
        per_learner[log.learner_id, day] += 1
        per_item[log.item_id, log.reviewed_at.astimezone(UTC).date()] += 1
    return per_learner, per_item


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    reviews=st.lists(REVIEW, min_size=1, max_size=40),
    batch=st.integers(1, 11),
    window_days=st.integers(3, 30),
)
def test_the_rollup_equals_a_direct_count_whatever_the_batching(
    two_courses: tuple[list[User], list[QuizItem]],
    monkeypatch: pytest.MonkeyPatch,
    reviews: list[tuple],  # type: ignore[type-arg]
    batch: int,
    window_days: int,
) -> None:
    """Random reviews in two courses by learners in four zones, rolled up in item batches of
    any size and in windows of any length: every learner-day and item-day row is the count of
    that day's kept logs, and there is one row per (learner, day)."""
    learners, items = two_courses
    monkeypatch.setattr(rollup, "ITEM_BATCH", batch)
    monkeypatch.setattr(rollup, "CATCH_UP", timedelta(days=window_days))
    with transaction.atomic():
        kept = _write(learners, items, reviews)
        ReviewRollupWatermark.objects.update(rolled_up_to=None)
        run = review_rollups_refresh(now=NOW, budget_s=3600)
        assert run.upto == NOW
        per_learner, per_item = _direct_counts(learners, kept)
        rows = list(LearnerDayRollup.objects.values_list("learner_id", "day", "reviews"))
        assert len(rows) == len({(learner, day) for learner, day, _ in rows})
        assert {(lr, d): n for lr, d, n in rows if n} == dict(per_learner)
        item_rows = ItemDayRollup.objects.values_list("item_id", "day", "reviews")
        assert {(i, d): n for i, d, n in item_rows if n} == dict(per_item)
        transaction.set_rollback(True)


def test_a_learner_reviewing_in_two_courses_past_one_batch_is_rolled_up_again(
    two_courses: tuple[list[User], list[QuizItem]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported failure: items of two batches reviewed by one learner on one day; the
    refresh runs (no duplicate key), twice, and the watermark moves each time."""
    learners, items = two_courses
    monkeypatch.setattr(rollup, "ITEM_BATCH", 5)  # a batch per course
    kept = _write(learners, items, [(0, 0, 30, 3, False), (0, 9, 20, 1, False)])
    review_rollups_refresh(now=NOW - timedelta(minutes=10))
    review_rollups_refresh(now=NOW)
    assert ReviewRollupWatermark.objects.get(pk=1).rolled_up_to == NOW
    [row] = LearnerDayRollup.objects.filter(learner=learners[0])
    assert row.reviews == 2 and row.review_state_reviews == 2 and row.review_state_passed == 1
    assert len(kept) == 2
