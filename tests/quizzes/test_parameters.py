"""Parameter sets learnt from a course's reviews: trained before a cut-off, scored after it,
adopted only when they beat the set in force, and the cards' memory recomputed after a change."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from quizzes import fsrs_optimizer as opt
from quizzes.models import FsrsParameters, RecallSchedule, ReviewLog
from quizzes.selectors.parameters import POOLED_MIN_REVIEWS, scopes_to_train
from quizzes.services import fsrs_adapter
from quizzes.services.parameters import parameters_refresh, parameters_train
from tests.factories import CourseFactory
from tests.quizzes.parameters_data import FORGETFUL, course_with_reviews

pytestmark = pytest.mark.django_db(transaction=True)

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
Status = FsrsParameters.Status


@pytest.fixture
def course():  # type: ignore[no-untyped-def]
    course = CourseFactory(slug="hardware")
    course_with_reviews(course=course, learners=5, items=20, days=120, end=NOW)
    return course


def test_a_course_with_enough_reviews_gets_an_active_pooled_set(course) -> None:  # type: ignore[no-untyped-def]
    assert ReviewLog.objects.count() >= POOLED_MIN_REVIEWS
    assert scopes_to_train(course=course) == [None]
    [trained] = parameters_refresh(course=course, now=NOW)
    assert trained.status == Status.ACTIVE and trained.version == 1
    assert trained.learner_id is None and len(trained.weights) == 21
    assert trained.candidate_log_loss < trained.defaults_log_loss
    assert trained.cutoff < NOW and trained.heldout_count > 0
    assert trained.library == "fsrs-rs-python" and trained.library_version
    # Nothing grew since: the nightly job trains nothing.
    assert scopes_to_train(course=course) == []
    assert parameters_refresh(course=course, now=NOW) == []


def test_a_worse_candidate_is_rejected_and_recorded(course) -> None:  # type: ignore[no-untyped-def]
    """The set in force is the weights the reviews were drawn from; a candidate that is worse on
    the held-out reviews (the defaults, here) is kept as rejected, and the truth stays active."""
    truth = parameters_train(course=course, learner_id=None, now=NOW, weights=FORGETFUL)
    assert truth.status == Status.ACTIVE
    worse = parameters_train(course=course, learner_id=None, now=NOW, weights=opt.DEFAULT_WEIGHTS)
    truth.refresh_from_db()
    assert (truth.status, worse.status, worse.version) == (Status.ACTIVE, Status.REJECTED, 2)
    assert worse.candidate_log_loss > worse.active_log_loss
    assert "does not beat" in worse.reason
    assert fsrs_adapter.scheduling_for(course=course, learner_id=None).parameters_id == truth.pk


def test_adoption_recomputes_memory_and_keeps_due_dates(course) -> None:  # type: ignore[no-untyped-def]
    before = {s.pk: s.due for s in RecallSchedule.objects.all()}
    parameters_train(course=course, learner_id=None, now=NOW, weights=FORGETFUL)
    schedule = RecallSchedule.objects.order_by("pk").first()
    assert schedule is not None
    history = [
        opt.Review(at=at, rating=rating)
        for at, rating in ReviewLog.objects.filter(schedule=schedule)
        .order_by("reviewed_at")
        .values_list("reviewed_at", "rating")
    ]
    stability, difficulty = opt.memory_states(FORGETFUL, history)[-1]
    assert schedule.stability == pytest.approx(stability)
    assert schedule.difficulty == pytest.approx(difficulty)
    assert {s.pk: s.due for s in RecallSchedule.objects.all()} == before


def test_train_and_evaluate_commands_report_progress(course, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("parameters_train", "hardware")
    out = capsys.readouterr().out
    assert "reviews; training on" in out and "v1: active" in out
    call_command("parameters_evaluate", "hardware")
    out = capsys.readouterr().out
    assert "defaults" in out and "pooled v1" in out


def test_a_heavy_learner_gets_personal_parameters_that_beat_the_pooled_set(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A learner with enough long-term reviews of their own is a scope of their own: their set
    is scored against the pooled set that schedules them, and then schedules only them."""
    from quizzes.selectors import parameters as selectors

    course = CourseFactory(slug="heavy")
    [heavy] = course_with_reviews(course=course, learners=1, items=40, days=200, end=NOW, seed=3)
    # The rest of the course remembers far better than the heavy learner does.
    sturdy = (1.0, 4.0, 10.0, 30.0, *opt.DEFAULT_WEIGHTS[4:8], 2.4, *opt.DEFAULT_WEIGHTS[9:])
    others = course_with_reviews(
        course=course, learners=6, items=30, days=200, end=NOW, weights=sturdy
    )
    long_term = ReviewLog.objects.filter(learner=heavy, scheduled_days__gt=0).count()
    monkeypatch.setattr(selectors, "PERSONAL_MIN_LONG_TERM", long_term)
    assert scopes_to_train(course=course) == [None, heavy.pk]
    trained = parameters_refresh(course=course, now=NOW)
    pooled, personal = trained
    assert (pooled.learner_id, personal.learner_id) == (None, heavy.pk)
    assert personal.status == Status.ACTIVE
    assert personal.active_log_loss == pytest.approx(
        opt.score(tuple(pooled.weights), _heldout_of(course, heavy.pk)).log_loss  # type: ignore[union-attr]
    )
    assert fsrs_adapter.scheduling_for(course=course, learner_id=heavy.pk).parameters_id == (
        personal.pk
    )
    assert fsrs_adapter.scheduling_for(course=course, learner_id=others[0].pk).parameters_id == (
        pooled.pk
    )


def _heldout_of(course, learner_id):  # type: ignore[no-untyped-def]
    from quizzes.selectors.parameters import review_histories

    histories = review_histories(course=course, learner_id=learner_id)
    times = sorted(r.at for h in histories.values() for r in h)
    cutoff = opt.cutoff_at_fraction(times, 0.7)
    return opt.time_split(opt.samples_from_histories(histories.values()), cutoff).heldout


def test_a_learner_or_course_with_parameter_sets_and_logs_can_be_deleted(course) -> None:  # type: ignore[no-untyped-def]
    from accounts.models import User

    pooled = parameters_train(course=course, learner_id=None, now=NOW, weights=FORGETFUL)
    learner = User.objects.filter(review_logs__isnull=False).first()
    assert learner is not None
    personal = parameters_train(course=course, learner_id=learner.pk, now=NOW, weights=FORGETFUL)
    ReviewLog.objects.filter(learner=learner).update(parameters=personal)
    ReviewLog.objects.exclude(learner=learner).update(parameters=pooled)
    learner.delete()
    assert not FsrsParameters.objects.filter(pk=personal.pk).exists()
    course.delete()
    assert not FsrsParameters.objects.exists() and not ReviewLog.objects.exists()


def test_moving_due_dates_is_the_instructor_s_opt_in(course, client, instructor) -> None:  # type: ignore[no-untyped-def]
    """Adopting a set keeps due dates; the instructor's button replays every card through the
    parameters in force, as a grade would have, and moves its due date."""
    from django.urls import reverse

    from tests.factories import EnrollmentFactory

    before = dict(RecallSchedule.objects.values_list("pk", "due"))
    parameters_train(course=course, learner_id=None, now=NOW, weights=FORGETFUL)
    assert dict(RecallSchedule.objects.values_list("pk", "due")) == before
    EnrollmentFactory(course=course, user=instructor, role="instructor")
    client.force_login(instructor)
    response = client.post(reverse("quizzes:course_reschedule", args=[course.slug]))
    assert response.status_code == 302
    after = dict(RecallSchedule.objects.values_list("pk", "due"))
    assert after != before
    schedule = RecallSchedule.objects.order_by("pk").first()
    assert schedule is not None
    history = list(
        ReviewLog.objects.filter(schedule=schedule)
        .order_by("reviewed_at")
        .values_list("reviewed_at", "rating")
    )
    last_at = history[-1][0]
    assert schedule.last_review == last_at and schedule.due > last_at
    stability, _ = opt.memory_states(FORGETFUL, [opt.Review(at=a, rating=r) for a, r in history])[
        -1
    ]
    assert schedule.stability == pytest.approx(stability, rel=2e-3)
    assert client.get(reverse("quizzes:course_reschedule", args=[course.slug])).status_code == 405
