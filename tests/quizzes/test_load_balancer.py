"""The load balancer and easy days: Anki's weights against hand-worked cases, and the day a
grade (and its preview) gets from a learner's week, in their own time zone."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from accounts.local_day import learning_date
from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.selectors.preview import grade_previews
from quizzes.selectors.queue import card_for
from quizzes.services import fsrs_adapter
from quizzes.services.breaks import fuzz_range
from quizzes.services.easy_days import learner_week
from quizzes.services.load_balancer import (
    MINIMUM,
    LearnerWeek,
    day_weights,
    easy_day_modifiers,
    weighted_pick,
)
from quizzes.services.review import review_grade
from tests.factories import QuizItemFactory, RecallScheduleFactory
from tests.quizzes.factories import course_with_items

# Saturday 7 March 2026, 20:00 UTC: already Sunday morning in Auckland (UTC+13).
SATURDAY_EVENING_UTC = datetime(2026, 3, 7, 20, 0, tzinfo=UTC)


def test_weights_match_a_hand_worked_day_range() -> None:
    """Intervals 9, 10, 11 days with 0, 2 and 4 reviews due: 1, (1/2)²·(1/10), (1/4)²·(1/11)."""
    weights = day_weights(intervals=[9, 10, 11], counts=[0, 2, 4], modifiers=[1.0, 1.0, 1.0])
    assert weights == pytest.approx([1.0, 0.025, 1 / 176])


def test_a_minimum_day_weighs_almost_nothing_even_when_empty() -> None:
    weights = day_weights(intervals=[4, 5], counts=[0, 3], modifiers=[MINIMUM, 1.0])
    assert weights == pytest.approx([0.0001, 1 / 45])


def test_a_reduced_day_turns_minimum_only_above_its_share() -> None:
    """Reduced (0.5) is normal while its count ÷ 0.5 stays within the others' count ÷ their
    modifiers: 2/0.5 = 4 ≤ 10/1.0001 → normal; 6/0.5 = 12 > 2/1.0 → minimum."""
    assert easy_day_modifiers(["n", "r", "m"], [4, 2, 6]) == pytest.approx([1.0, 1.0, MINIMUM])
    assert easy_day_modifiers(["n", "r"], [2, 6]) == pytest.approx([1.0, MINIMUM])


def test_the_draw_is_seeded_and_follows_the_weights() -> None:
    weights = [1.0, 0.5, 0.25, 0.25]
    assert weighted_pick(weights, seed=42) == weighted_pick(weights, seed=42)
    picks = Counter(weighted_pick(weights, seed=seed) for seed in range(20_000))
    for index, weight in enumerate(weights):
        assert picks[index] / 20_000 == pytest.approx(weight / 2.0, abs=0.015)


def _week(counts: dict[int, int], levels: str = "nnnnnnn", *, balance: bool = True) -> LearnerWeek:
    # Offset 0 is a Monday.
    return LearnerWeek(
        counts=lambda first, last: counts,
        level=lambda offset: levels[offset % 7],
        away=lambda offset: False,
        balance=lambda: balance,
    )


def test_the_balancer_prefers_the_light_days_of_the_range() -> None:
    week = _week({17: 30, 18: 30, 19: 0, 20: 30, 21: 30})
    picks = Counter(
        week.choose(interval=19, minimum=17, maximum=21, seed=seed) for seed in range(500)
    )
    assert picks[19] > 490


def test_no_balancing_beyond_ninety_days_or_without_a_choice() -> None:
    assert _week({}).choose(interval=120, minimum=110, maximum=130, seed=1) is None
    assert _week({}, balance=False).choose(interval=20, minimum=17, maximum=23, seed=1) is None


def test_a_minimum_sunday_is_skipped_when_the_range_allows() -> None:
    week = _week({}, levels="nnnnnnm", balance=False)
    picks = {week.choose(interval=20, minimum=17, maximum=23, seed=seed) for seed in range(300)}
    assert 20 not in picks  # offset 20 is a Sunday
    assert picks <= {17, 18, 19, 21, 22, 23}


@pytest.mark.django_db
def test_easy_days_follow_the_learners_own_time_zone(learner: User) -> None:
    """At 20:00 UTC on a Saturday it is Sunday in Auckland: a minimum Sunday is today there."""
    learner.easy_days = "nnnnnnm"
    learner.time_zone = "Pacific/Auckland"
    learner.save()
    assert learner_week(learner=learner, now=SATURDAY_EVENING_UTC).level(0) == "m"
    assert learner_week(learner=learner, now=SATURDAY_EVENING_UTC).level(6) == "n"
    learner.time_zone = "UTC"
    assert learner_week(learner=learner, now=SATURDAY_EVENING_UTC).level(1) == "m"


def _review_schedule(learner: User, item_course: object, *, now: datetime) -> RecallSchedule:
    item = QuizItemFactory(lesson=item_course.lesson)  # type: ignore[attr-defined]
    return RecallScheduleFactory(
        learner=learner,
        item=item,
        state=RecallSchedule.State.REVIEW,
        stability=20.0,
        difficulty=5.0,
        last_review=now - timedelta(days=20),
        due=now,
        reps=3,
    )


@pytest.mark.django_db
def test_grades_avoid_a_minimum_sunday_in_auckland(learner: User) -> None:
    """Reviews graded in Auckland with Sunday at minimum are never given a local Sunday."""
    learner.easy_days = "nnnnnnm"
    learner.time_zone = "Pacific/Auckland"
    learner.save()
    c = course_with_items(learner=learner, learning_steps_minutes=[], maximum_interval_days=365)
    now = SATURDAY_EVENING_UTC
    days = []
    for _ in range(12):
        schedule = _review_schedule(learner, c, now=now)
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=3,
            now=now,
        )
        schedule.refresh_from_db()
        days.append(
            learning_date(moment=schedule.due, time_zone=learner.tz, day_start_hour=4).weekday()
        )
    assert 6 not in days
    assert len(set(days)) > 1


@pytest.mark.django_db
def test_a_grade_goes_to_the_lighter_day_and_its_preview_says_so(learner: User) -> None:
    """With every day of the range but one full, the grade lands on the empty one, the button
    showed that interval, and the balancer read the due counts in one grouped query."""
    c = course_with_items(learner=learner, learning_steps_minutes=[], maximum_interval_days=365)
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    schedule = _review_schedule(learner, c, now=now)
    # The fuzz range around the unfuzzed interval (a scheduler without a seed has no fuzz).
    scheduling = fsrs_adapter.scheduling_for(course=c.course, learner_id=learner.pk)
    unfuzzed = fsrs_adapter.scheduler_for(c.course, scheduling)
    base = (
        unfuzzed.review_card(fsrs_adapter.card_from_schedule(schedule), 3, review_datetime=now)[
            0
        ].due
        - now
    )
    low, high = fuzz_range(base.days)
    target = low + 1
    for offset in range(low, high + 1):
        if offset != target:
            for _ in range(15):
                _review_schedule(learner, c, now=now + timedelta(days=offset))
    card = card_for(learner=learner, schedule_id=schedule.pk, item_id=None)
    shown = {p.rating: p.interval for p in grade_previews(card=card, now=now)}
    with CaptureQueriesContext(connection) as queries:
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=3,
            now=now,
        )
    schedule.refresh_from_db()
    assert (schedule.due - now).days == target
    assert shown[3] == fsrs_adapter.interval_label(schedule.due - now)
    grouped = [q for q in queries.captured_queries if "GROUP BY" in q["sql"]]
    assert len(grouped) == 1


def test_every_day_of_a_short_range_is_reachable() -> None:
    week = _week({})
    picks = {week.choose(interval=3, minimum=2, maximum=4, seed=s) for s in range(200)}
    assert picks == {2, 3, 4}


@given(
    interval=st.integers(min_value=3, max_value=90),
    counts=st.dictionaries(st.integers(0, 120), st.integers(0, 500), max_size=40),
    levels=st.text(alphabet="nrm", min_size=7, max_size=7),
    away_from=st.integers(0, 100),
    away_days=st.integers(0, 5),
    seed=st.integers(0, 2**63 - 1),
)
def test_the_pick_stays_in_its_range_and_out_of_a_break(
    interval: int, counts: dict[int, int], levels: str, away_from: int, away_days: int, seed: int
) -> None:
    low, high = fuzz_range(interval)
    week = LearnerWeek(
        counts=lambda first, last: counts,
        level=lambda offset: levels[offset % 7],
        away=lambda offset: away_from <= offset < away_from + away_days,
        balance=lambda: True,
    )
    picked = week.choose(interval=interval, minimum=low, maximum=high, seed=seed)
    assert picked is not None and low <= picked <= high
    if any(not away_from <= d < away_from + away_days for d in range(low, high + 1)):
        assert not away_from <= picked < away_from + away_days
    assert picked == week.choose(interval=interval, minimum=low, maximum=high, seed=seed)
