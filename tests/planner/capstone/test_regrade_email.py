"""Regrades coalesce: a grader's quick corrections of a released grade send the learner one
"grade changed" email, of the final grade, once the regrades have stopped for a short quiet
period; its subject says the grade changed, not that it is ready."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from planner.capstone.grade_email import capstone_email_send
from planner.capstone.grading import ScoreInput, grade_regrade, grade_release, submission_claim
from planner.capstone.outbox import GRADE_CHANGE_QUIET, CapstoneEmail, capstone_emails_sweep
from planner.models import Grade
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db

Status = CapstoneEmail.Status


@pytest.fixture
def course(instructor):  # type: ignore[no-untyped-def]
    return course_taught_by(instructor)


@pytest.fixture
def submission(learner, course):  # type: ignore[no-untyped-def]
    return submission_for(learner, course)


def scores(course, pick: str) -> list[ScoreInput]:  # type: ignore[no-untyped-def]
    return [
        ScoreInput(criterion_id=c.pk, level_id=c.levels.get(key=pick).pk)
        for c in course.rubric.criteria.all()
    ]


def release(instructor, course, submission, now: datetime) -> Grade:  # type: ignore[no-untyped-def]
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    return grade_release(
        grader=instructor, submission_id=submission.pk, now=now,
        scores=scores(course, "strong"), overall_feedback="First look",
    )  # fmt: skip


def regrade(instructor, course, submission, now: datetime, pick: str, note: str) -> Grade:  # type: ignore[no-untyped-def]
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    return grade_regrade(
        grader=instructor, submission_id=submission.pk, now=now,
        scores=scores(course, pick), overall_feedback=note,
    )  # fmt: skip


def test_five_regrades_in_a_second_send_one_email_of_the_final_grade(
    instructor, course, submission, learner, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    t0 = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        release(instructor, course, submission, t0)
    (released,) = mail.outbox
    picks = ["partial", "strong", "partial", "strong", "partial"]
    for n, pick in enumerate(picks):
        at = t0 + timedelta(seconds=1 + n * 0.2)
        # Each regrade's send runs at once here (eager tasks): inside the quiet period it sends
        # nothing.
        with django_capture_on_commit_callbacks(execute=True):
            grade = regrade(instructor, course, submission, at, pick, f"Take {n + 1}")
        last = at
    assert mail.outbox == [released]
    (changed,) = CapstoneEmail.objects.filter(kind=CapstoneEmail.Kind.GRADE_CHANGED)
    assert changed.status == Status.PENDING and changed.quiet_until == last + GRADE_CHANGE_QUIET
    assert capstone_email_send(email_id=changed.pk, now=last + GRADE_CHANGE_QUIET / 2) is None
    assert capstone_emails_sweep(now=last + GRADE_CHANGE_QUIET / 2) == []

    sent = capstone_email_send(email_id=changed.pk, now=last + GRADE_CHANGE_QUIET)
    assert sent is not None and sent.status == Status.SENT
    assert capstone_email_send(email_id=changed.pk, now=last + 2 * GRADE_CHANGE_QUIET) is None
    assert capstone_emails_sweep(now=last + timedelta(hours=1)) == []
    assert len(mail.outbox) == 2
    message = mail.outbox[1]
    assert message.to == [learner.email]
    assert message.subject != released.subject and "has changed" in message.subject
    assert course.title in message.subject
    assert f"It is now {grade.total_points} of {grade.max_points} points." in message.body
    assert grade.total_points < grade.max_points  # the final regrade, "partial"


def test_a_regrade_before_the_release_email_went_is_told_by_that_email(
    instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """The release's email still waits (the broker was down): it shows the regraded grade, and
    the learner gets that one email, not a second about a change they never saw."""
    t0 = timezone.now()
    with django_capture_on_commit_callbacks(execute=False):
        release(instructor, course, submission, t0)
    with django_capture_on_commit_callbacks(execute=True):
        grade = regrade(instructor, course, submission, t0 + timedelta(seconds=5), "partial", "x")
    (email,) = CapstoneEmail.objects.all()
    assert email.kind == CapstoneEmail.Kind.GRADE_RELEASED
    capstone_email_send(email_id=email.pk, now=t0 + timedelta(seconds=6))
    (message,) = mail.outbox
    assert "is ready" in message.subject
    assert f"{grade.total_points} of {grade.max_points} points" in message.body


def test_a_regrade_after_the_change_email_went_is_a_new_email(
    instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    t0 = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        release(instructor, course, submission, t0)
    regrade(instructor, course, submission, t0 + timedelta(seconds=1), "partial", "a")
    first = CapstoneEmail.objects.get(kind=CapstoneEmail.Kind.GRADE_CHANGED)
    capstone_email_send(email_id=first.pk, now=t0 + timedelta(minutes=5))
    regrade(instructor, course, submission, t0 + timedelta(minutes=6), "strong", "b")
    second = CapstoneEmail.objects.exclude(pk=first.pk).get(kind=CapstoneEmail.Kind.GRADE_CHANGED)
    assert second.status == Status.PENDING
    capstone_email_send(email_id=second.pk, now=t0 + timedelta(minutes=8))
    assert [m.subject for m in mail.outbox][1:] == [mail.outbox[1].subject] * 2
    assert len(mail.outbox) == 3
