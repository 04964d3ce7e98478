"""review_grade, schedule_start and review_undo against fsrs itself."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
import time_machine
from django.utils import timezone

from quizzes.models import RecallSchedule, ReviewLog, ReviewUndo
from quizzes.services import fsrs_adapter
from quizzes.services.review import StaleCard, review_grade, schedule_start
from quizzes.services.undo import NothingToUndo, review_undo
from tests.factories import UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def fsrs_direct(course, ratings_times, *, learner_id, item_id):  # type: ignore[no-untyped-def]
    """fsrs's own review_card on the same ratings and times, with the fuzz seeded per (learner,
    item, reps) as the review service seeds it."""
    card = fsrs.Card(card_id=1, due=ratings_times[0][1])
    for reps, (rating, when) in enumerate(ratings_times):
        scheduler = fsrs_adapter.SeededScheduler(
            desired_retention=course.desired_retention,
            learning_steps=[timedelta(minutes=m) for m in course.learning_steps_minutes],
            relearning_steps=[timedelta(minutes=m) for m in course.relearning_steps_minutes],
            maximum_interval=course.maximum_interval_days,
            enable_fuzzing=True,
            seed=fsrs_adapter.fuzz_seed(learner_id=learner_id, item_id=item_id, reps=reps),
        )
        card, _ = scheduler.review_card(card, fsrs.Rating(rating), review_datetime=when)
    return card


def assert_same(schedule: RecallSchedule, card: fsrs.Card) -> None:
    schedule.refresh_from_db()
    assert schedule.state == card.state.value
    assert schedule.step == card.step
    assert schedule.stability == pytest.approx(card.stability, rel=1e-12)
    assert schedule.difficulty == pytest.approx(card.difficulty, rel=1e-12)
    assert schedule.due == card.due
    assert schedule.last_review == card.last_review


def test_first_grade_creates_schedule_and_log(learner):
    """The first grade creates the schedule, writes a log with both states and rotates the token."""
    c = course_with_items(learner=learner, learning_steps_minutes=[1, 10])
    token = uuid.uuid4()
    first = schedule_start(learner=learner, item=c.recall, card_token=token, rating=3, now=T0)
    assert first.created
    schedule = RecallSchedule.objects.get(learner=learner, item=c.recall)
    assert schedule.card_token != token
    assert first.log.idempotency_key == token
    assert first.log.source == ReviewLog.Source.LESSON
    assert first.log.state_before["stability"] is None
    assert first.log.state_after["step"] == 1
    assert_same(
        schedule, fsrs_direct(c.course, [(3, T0)], learner_id=learner.pk, item_id=c.recall.pk)
    )
    assert schedule.due == T0 + timedelta(minutes=10)


def test_first_grade_replay_returns_same_log_and_other_token_is_stale(learner):
    """Replaying a first grade returns its log; another token for a scheduled item is stale."""
    c = course_with_items(learner=learner)
    token = uuid.uuid4()
    a = schedule_start(learner=learner, item=c.mc, card_token=token, rating=1, now=T0)
    b = schedule_start(learner=learner, item=c.mc, card_token=token, rating=1, now=T0)
    assert not b.created and b.log.pk == a.log.pk
    with pytest.raises(StaleCard):
        schedule_start(learner=learner, item=c.mc, card_token=uuid.uuid4(), rating=3, now=T0)
    assert ReviewLog.objects.count() == 1


def test_grade_is_idempotent_on_token_and_stale_token_raises(learner):
    """The same token twice advances once; a token never issued raises StaleCard."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    token = schedule.card_token
    later = T0 + timedelta(days=3)
    one = review_grade(
        learner=learner, schedule_id=schedule.pk, card_token=token, rating=3, now=later
    )
    two = review_grade(
        learner=learner, schedule_id=schedule.pk, card_token=str(token), rating=3, now=later
    )
    assert one.pk == two.pk
    assert ReviewLog.objects.count() == 2
    with pytest.raises(StaleCard):
        review_grade(
            learner=learner, schedule_id=schedule.pk, card_token=uuid.uuid4(), rating=3, now=later
        )


def test_another_learners_schedule_does_not_exist_for_me(learner):
    """Grading someone else's schedule finds nothing (the view turns it into a 404)."""
    other = UserFactory()
    c = course_with_items(learner=other)
    schedule_start(learner=other, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    with pytest.raises(RecallSchedule.DoesNotExist):
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=3,
            now=T0,
        )


def test_bad_rating_is_refused(learner):
    """Only ratings 1–4 exist."""
    c = course_with_items(learner=learner)
    with pytest.raises(ValueError, match="rating"):
        schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=5, now=T0)


@pytest.mark.parametrize(
    "steps",
    [([], []), ([1, 10], [10])],
    ids=["no-steps", "anki-steps"],
)
def test_days_of_reviews_match_fsrs(learner, steps):
    """Across days of reviews, each grading at the card's due time, the schedule equals fsrs
    (for a learner who turned the load balancer off and has no easy days)."""
    learner.load_balancer_enabled = False
    learner.save(update_fields=["load_balancer_enabled"])
    c = course_with_items(
        learner=learner,
        desired_retention=0.85,
        learning_steps_minutes=steps[0],
        relearning_steps_minutes=steps[1],
        maximum_interval_days=365,
    )
    ratings = [1, 3, 3, 1, 2, 3, 4, 3]
    history: list[tuple[int, datetime]] = []
    with time_machine.travel(T0, tick=False) as traveller:
        now = timezone.now()
        schedule_start(
            learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=ratings[0], now=now
        )
        history.append((ratings[0], now))
        schedule = RecallSchedule.objects.get()
        for rating in ratings[1:]:
            schedule.refresh_from_db()
            traveller.move_to(schedule.due + timedelta(hours=2))
            now = timezone.now()
            review_grade(
                learner=learner,
                schedule_id=schedule.pk,
                card_token=schedule.card_token,
                rating=rating,
                now=now,
            )
            history.append((rating, now))
            expected = fsrs_direct(c.course, history, learner_id=learner.pk, item_id=c.recall.pk)
            assert_same(schedule, expected)
    assert timezone.now() - T0 > timedelta(days=5)
    schedule.refresh_from_db()
    assert schedule.reps == len(ratings)
    logs = list(ReviewLog.objects.filter(schedule=schedule))
    assert [log.rating for log in logs] == ratings
    for a, b in itertools.pairwise(logs):
        assert a.state_after == b.state_before


def test_lapse_counts_again_on_review_card(learner):
    """Again on a card in Review counts a lapse."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    assert schedule.state == RecallSchedule.State.REVIEW
    log = review_grade(
        learner=learner,
        schedule_id=schedule.pk,
        card_token=schedule.card_token,
        rating=1,
        now=schedule.due,
    )
    schedule.refresh_from_db()
    assert schedule.lapses == 1
    assert log.scheduled_days == (log.reviewed_at - schedule_before_due_minus_last(log)).days


def schedule_before_due_minus_last(log: ReviewLog) -> datetime:
    return log.reviewed_at - (
        datetime.fromisoformat(log.state_before["due"])
        - datetime.fromisoformat(log.state_before["last_review"])
    )


def test_undo_restores_state_before_and_keeps_the_log(learner):
    """Undo puts the schedule back as it was, keeps the log unchanged and records the undo."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    before = {f: getattr(schedule, f) for f in ("state", "step", "stability", "difficulty", "due")}
    later = schedule.due + timedelta(hours=1)
    log = review_grade(
        learner=learner,
        schedule_id=schedule.pk,
        card_token=schedule.card_token,
        rating=1,
        now=later,
    )
    undone = review_undo(learner=learner, now=later)
    assert undone.pk == log.pk
    schedule.refresh_from_db()
    assert {f: getattr(schedule, f) for f in before} == before
    assert schedule.reps == 1 and schedule.lapses == 0
    assert ReviewLog.objects.filter(pk=log.pk, rating=1).exists()
    assert ReviewUndo.objects.get().log_id == log.pk
    # The first grade was the lesson answer: not a session grade, so nothing is left to undo.
    with pytest.raises(NothingToUndo):
        review_undo(learner=learner, now=later)


@pytest.mark.parametrize("rating", [1, 2, 3, 4])
def test_grade_button_preview_is_what_the_grade_does(learner, rating):
    """The interval shown on each grade button is the interval the grade then gives."""
    from quizzes.selectors.preview import grade_previews
    from quizzes.selectors.queue import card_for
    from quizzes.services import fsrs_adapter

    c = course_with_items(learner=learner, learning_steps_minutes=[1, 10])
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    now = schedule.due + timedelta(days=2)
    card = card_for(learner=learner, schedule_id=schedule.pk, item_id=None)
    previews = {p.rating: p.interval for p in grade_previews(card=card, now=now)}
    review_grade(
        learner=learner,
        schedule_id=schedule.pk,
        card_token=schedule.card_token,
        rating=rating,
        now=now,
    )
    schedule.refresh_from_db()
    assert previews[rating] == fsrs_adapter.interval_label(schedule.due - now)
    assert len(set(previews.values())) >= 3  # the four buttons do not all say the same


def test_a_grade_writes_every_changed_field_of_its_schedule(learner) -> None:  # type: ignore[no-untyped-def]
    """The grade's one UPDATE stores what save() stored: the card's state, the counters, a new
    token, the leech flag and a fresh updated_at; the other fields stay."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    before = RecallSchedule.objects.get()
    later = T0 + timedelta(days=3)
    log = review_grade(
        learner=learner, schedule_id=before.pk, card_token=before.card_token, rating=1, now=later
    )
    after = RecallSchedule.objects.get()
    card = fsrs_adapter.card_from_state_json(log.state_after, card_id=after.pk)
    assert (after.state, after.step, after.due, after.last_review) == (
        int(card.state),
        card.step,
        card.due,
        card.last_review,
    )
    assert after.stability == pytest.approx(card.stability, rel=1e-12)
    assert after.difficulty == pytest.approx(card.difficulty, rel=1e-12)
    assert (after.reps, after.lapses) == (log.state_after["reps"], log.state_after["lapses"])
    assert after.card_token != before.card_token and after.updated_at > before.updated_at
    assert (after.item_id, after.learner_id, after.created_at, after.suspended) == (
        before.item_id,
        before.learner_id,
        before.created_at,
        False,
    )


def test_the_schedules_last_review_is_its_latest_kept_log(learner):
    """What the statistics' "last reviewed" reads instead of the logs: after each grade the
    schedule's last review is that grade's time; after an undo, the grade before's."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    times = []
    for n in range(3):
        schedule.refresh_from_db()
        at = schedule.due + timedelta(minutes=n)
        review_grade(
            learner=learner, schedule_id=schedule.pk, card_token=schedule.card_token,
            rating=3, now=at,
        )  # fmt: skip
        times.append(at)
        schedule.refresh_from_db()
        latest = ReviewLog.objects.filter(schedule=schedule).latest("reviewed_at")
        assert schedule.last_review == latest.reviewed_at == at
    review_undo(learner=learner, now=times[-1])
    schedule.refresh_from_db()
    assert schedule.last_review == times[-2]
