"""Claims (time-limited leases), drafts, release with email, recorded regrades, totals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.utils import timezone

from planner.capstone.grading import (
    CLAIM_LEASE,
    ClaimHeld,
    ClaimRequired,
    GradeReleasedError,
    ScoreInput,
    grade_regrade,
    grade_release,
    grade_save_draft,
    submission_claim,
)
from planner.capstone.outbox import CapstoneEmail
from planner.models import Grade, GradeChange, GradingClaim
from tests.factories import InstructorFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def course(instructor):  # type: ignore[no-untyped-def]
    return course_taught_by(instructor)


@pytest.fixture
def submission(learner, course):  # type: ignore[no-untyped-def]
    return submission_for(learner, course)


def scores_for(course, pick: str = "strong", comment: str = "Good") -> list[ScoreInput]:  # type: ignore[no-untyped-def]
    return [
        ScoreInput(
            criterion_id=c.pk, level_id=c.levels.get(key=pick).pk, comment=f"{comment} {c.key}"
        )
        for c in course.rubric.criteria.all()
    ]


def test_claim_held_by_another_grader_is_refused_and_names_the_holder(
    instructor, submission
) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    other = InstructorFactory(display_name="Otto Other")
    with pytest.raises(ClaimHeld) as exc:
        submission_claim(grader=other, submission_id=submission.pk, now=now + timedelta(minutes=5))
    assert "Ida Instructor" in str(exc.value)
    assert GradingClaim.objects.get().grader == instructor


def test_expired_claim_is_taken_over(instructor, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    other = InstructorFactory()
    later = now + CLAIM_LEASE + timedelta(seconds=1)
    claim = submission_claim(grader=other, submission_id=submission.pk, now=later)
    assert claim.grader == other
    assert claim.expires_at == later + CLAIM_LEASE
    assert GradingClaim.objects.count() == 1


def test_own_claim_is_renewed(instructor, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    claim = submission_claim(
        grader=instructor, submission_id=submission.pk, now=now + timedelta(minutes=10)
    )
    assert claim.expires_at == now + timedelta(minutes=10) + CLAIM_LEASE


def test_grading_without_a_live_claim_is_refused(instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    with pytest.raises(ClaimRequired):
        grade_save_draft(
            grader=instructor,
            submission_id=submission.pk,
            scores=scores_for(course),
            overall_feedback="",
            now=now,
        )
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    with pytest.raises(ClaimRequired):
        grade_save_draft(
            grader=instructor,
            submission_id=submission.pk,
            scores=scores_for(course),
            overall_feedback="",
            now=now + CLAIM_LEASE + timedelta(seconds=1),
        )
    assert not Grade.objects.exists()


def test_draft_total_is_computed_from_the_levels(instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    memory, operability = course.rubric.criteria.all()
    grade = grade_save_draft(
        grader=instructor,
        submission_id=submission.pk,
        scores=[
            ScoreInput(
                criterion_id=memory.pk,
                level_id=memory.levels.get(key="strong").pk,
                comment="KV right",
            ),
            ScoreInput(
                criterion_id=operability.pk, level_id=operability.levels.get(key="partial").pk
            ),
        ],
        overall_feedback="Solid.",
        now=now,
    )
    assert (grade.status, grade.total_points, grade.max_points) == (Grade.Status.DRAFT, 6, 8)
    assert grade.scores.get(criterion=memory).comment == "KV right"
    log = GradeChange.objects.get(grade=grade)
    assert log.action == GradeChange.Action.DRAFT_SAVED and log.actor == instructor
    assert log.changes["memory.level"] == [None, "strong"]


def test_a_level_of_another_criterion_is_refused(instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    memory, operability = course.rubric.criteria.all()
    with pytest.raises(ValidationError):
        grade_save_draft(
            grader=instructor,
            submission_id=submission.pk,
            scores=[ScoreInput(criterion_id=memory.pk, level_id=operability.levels.first().pk)],
            overall_feedback="",
            now=now,
        )


def test_release_needs_every_criterion_scored(instructor, course, submission) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    first = course.rubric.criteria.first()
    with pytest.raises(ValidationError):
        grade_release(
            grader=instructor,
            submission_id=submission.pk,
            now=now,
            scores=[ScoreInput(criterion_id=first.pk, level_id=first.levels.first().pk)],
            overall_feedback="",
        )
    assert not Grade.objects.filter(status=Grade.Status.RELEASED).exists()


def test_release_emails_the_learner_on_commit(
    instructor, learner, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """Releasing queues the email after commit; it names the course, total and the link."""
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        grade = grade_release(
            grader=instructor,
            submission_id=submission.pk,
            now=now,
            scores=scores_for(course),
            overall_feedback="Well argued.",
        )
    assert len(callbacks) == 1
    assert grade.status == Grade.Status.RELEASED and grade.released_at == now
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [learner.email]
    assert course.title in message.subject
    assert "8 of 8 points" in message.body
    assert f"/capstone/submissions/{submission.pk}/" in message.body
    assert not GradingClaim.objects.exists()


def test_released_grade_changes_only_through_a_recorded_regrade(
    instructor, course, submission, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    grade_release(
        grader=instructor,
        submission_id=submission.pk,
        now=now,
        scores=scores_for(course),
        overall_feedback="First",
    )
    partial = {
        "grader": instructor,
        "submission_id": submission.pk,
        "scores": scores_for(course, "partial"),
    }
    with pytest.raises(ClaimRequired):
        grade_regrade(**partial, overall_feedback="x", now=now)
    later = now + timedelta(hours=1)
    submission_claim(grader=instructor, submission_id=submission.pk, now=later)
    with pytest.raises(GradeReleasedError):
        grade_save_draft(**partial, overall_feedback="", now=later)
    with django_capture_on_commit_callbacks(execute=True):
        grade = grade_regrade(
            grader=instructor,
            submission_id=submission.pk,
            scores=scores_for(course, "partial"),
            overall_feedback="Second look",
            now=later,
        )
    assert (grade.status, grade.total_points) == (Grade.Status.RELEASED, 4)
    change = grade.changes.get(action=GradeChange.Action.REGRADED)
    assert change.actor == instructor and change.at == later
    assert change.changes["memory.level"] == ["strong", "partial"]
    assert change.changes["total_points"] == [8, 4]
    assert change.changes["overall_feedback"] == ["First", "Second look"]
    # The release's email is not sent yet (its enqueue ran outside capture): it shows the grade
    # as it is when sent, so the regrade promises no second email.
    (email,) = CapstoneEmail.objects.all()
    assert email.kind == CapstoneEmail.Kind.GRADE_RELEASED and mail.outbox == []
