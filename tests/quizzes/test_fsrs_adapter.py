"""The one place the scheduler is built: personal parameters → the course's → FSRS-6's defaults,
the learner's retention → the course's, and what each review log row records of them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from accounts.models import User
from courses.models import Course
from quizzes.models import FsrsParameters, RecallSchedule, RetentionPreference, ReviewLog
from quizzes.selectors.preview import grade_previews
from quizzes.selectors.queue import card_for
from quizzes.services import fsrs_adapter
from quizzes.services.review import review_grade, schedule_start
from tests.factories import QuizItemFactory, RecallScheduleFactory, UserFactory
from tests.quizzes.factories import course_with_items
from tests.quizzes.parameters_data import FORGETFUL

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# Someone who remembers everything far longer than the defaults assume.
STURDY = (2.0, 6.0, 20.0, 60.0, *fsrs_adapter.DEFAULT_WEIGHTS[4:])


def parameter_set(
    course: Course, weights: Sequence[float], *, learner: User | None = None, version: int = 1
) -> FsrsParameters:
    return FsrsParameters.objects.create(
        course=course,
        learner=learner,
        version=version,
        weights=list(weights),
        library="fsrs-rs-python",
        library_version="0.9.3",
        trained_at=NOW,
        cutoff=NOW,
        review_count=1000,
        train_long_term_count=300,
        heldout_count=100,
        status=FsrsParameters.Status.ACTIVE,
    )


def good_interval(learner: User, course: Course) -> timedelta:
    scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=learner.pk)
    scheduler = fsrs_adapter.scheduler_for(course, scheduling)
    card = fsrs_adapter.new_card(card_id=1, now=NOW)
    return fsrs_adapter.next_intervals(scheduler=scheduler, card=card, now=NOW)[4]


def test_personal_parameters_win_over_the_course_s_which_win_over_the_defaults() -> None:
    learner, other = UserFactory(), UserFactory()
    course = course_with_items(learner=learner, learning_steps_minutes=[]).course
    defaults = good_interval(learner, course)
    pooled = parameter_set(course, FORGETFUL)
    assert good_interval(learner, course) < defaults  # the pooled set forgets faster
    personal = parameter_set(course, STURDY, learner=learner)
    assert good_interval(learner, course) > defaults
    # Another learner of the course still has the pooled set; nobody else's personal one.
    assert (
        fsrs_adapter.scheduling_for(course=course, learner_id=other.pk).parameters_id == pooled.pk
    )
    assert fsrs_adapter.scheduling_for(course=course, learner_id=learner.pk).parameters_id == (
        personal.pk
    )


def test_a_candidate_or_rejected_set_never_schedules() -> None:
    learner = UserFactory()
    course = course_with_items(learner=learner).course
    candidate = parameter_set(course, FORGETFUL)
    candidate.status = FsrsParameters.Status.REJECTED
    candidate.save()
    scheduling = fsrs_adapter.scheduling_for(course=course, learner_id=learner.pk)
    assert scheduling.parameters_id is None
    assert scheduling.weights == fsrs_adapter.DEFAULT_WEIGHTS


def test_each_review_log_records_the_parameter_set_and_retention_in_force() -> None:
    learner = UserFactory()
    items = course_with_items(learner=learner, desired_retention=0.9)
    course = items.course
    first = schedule_start(
        learner=learner, item=items.mc, card_token=uuid.uuid4(), rating=3, now=NOW
    ).log
    assert (first.parameters_id, first.desired_retention) == (None, 0.9)

    pooled = parameter_set(course, FORGETFUL)
    RetentionPreference.objects.create(learner=learner, course=course, desired_retention=0.85)
    schedule = first.schedule
    schedule.refresh_from_db()
    second = review_grade(
        learner=learner,
        schedule_id=schedule.pk,
        card_token=schedule.card_token,
        rating=3,
        now=NOW + timedelta(minutes=10),
    )
    assert (second.parameters_id, second.desired_retention) == (pooled.pk, 0.85)
    assert ReviewLog.objects.filter(parameters=pooled).count() == 1


def test_the_learner_s_retention_moves_their_intervals() -> None:
    learner = UserFactory()
    course = course_with_items(learner=learner, learning_steps_minutes=[]).course
    at_course = good_interval(learner, course)
    RetentionPreference.objects.create(learner=learner, course=course, desired_retention=0.8)
    assert good_interval(learner, course) > at_course


def test_fuzz_is_on_and_every_grade_button_shows_the_interval_that_grade_gives(learner) -> None:
    """Twenty cards in the same memory state: their Good intervals are spread by the fuzz, and
    for each card the button of the grade chosen showed exactly the interval it then gave."""
    items = course_with_items(learner=learner)
    now = datetime.now(UTC)
    spread: set[timedelta] = set()
    for n in range(20):
        item = QuizItemFactory(lesson=items.lesson)
        schedule = RecallScheduleFactory(
            learner=learner,
            item=item,
            state=RecallSchedule.State.REVIEW,
            stability=3.0,
            difficulty=5.0,
            last_review=now - timedelta(days=3),
            due=now,
            reps=3,
        )
        card = card_for(learner=learner, schedule_id=schedule.pk, item_id=None)
        shown = {p.rating: p.interval for p in grade_previews(card=card, now=now)}
        rating = 2 + n % 3
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=rating,
            now=now,
        )
        schedule.refresh_from_db()
        assert shown[rating] == fsrs_adapter.interval_label(schedule.due - now)
        if rating == 3:
            spread.add(schedule.due - now)
    assert len(spread) > 1
    # Intervals under a month, so a label in days tells a fuzzed interval from another.
    assert max(spread) < timedelta(days=30)


def test_the_fuzz_seed_depends_on_learner_item_and_reps_only() -> None:
    seed = fsrs_adapter.fuzz_seed
    assert seed(learner_id=1, item_id=2, reps=3) == seed(learner_id=1, item_id=2, reps=3)
    assert len({seed(learner_id=1, item_id=2, reps=r) for r in range(1, 50)}) == 49
    assert seed(learner_id=1, item_id=2, reps=3) != seed(learner_id=9, item_id=2, reps=3)
