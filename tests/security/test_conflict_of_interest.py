"""Conflicts of interest: an instructor cannot claim or grade their own capstone submission."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment
from planner.capstone.grading import (
    ConflictOfInterest,
    ScoreInput,
    grade_save_draft,
    submission_claim,
)
from planner.models import CapstoneSubmission, Grade, GradingClaim
from tests.factories import EnrollmentFactory, InstructorFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def own(instructor: User) -> CapstoneSubmission:
    """A submission the instructor wrote in a course they teach (with a co-instructor)."""
    course = course_taught_by(instructor, title="GPUs, TPUs")
    return submission_for(instructor, course)


def _grade_post(course: Course) -> dict[str, str]:
    data = {"action": "release", "overall_feedback": "Top marks to me."}
    for criterion in course.rubric.criteria.all():
        data[f"level_{criterion.pk}"] = str(criterion.levels.get(key="strong").pk)
    return data


def test_claiming_ones_own_submission_is_refused_and_the_queue_says_why(
    client: Client, instructor: User, own: CapstoneSubmission
) -> None:
    client.force_login(instructor)

    response = client.post(reverse("capstone:claim", args=[own.pk]), follow=True)

    assert not GradingClaim.objects.filter(submission=own).exists()
    page = response.content.decode()
    assert "This is your own submission: another instructor of the course grades it." in page
    assert 'data-testid="own-submission"' in page
    assert reverse("capstone:claim", args=[own.pk]) not in page  # no Claim button on the row


def test_a_grade_cannot_be_saved_or_released_on_ones_own_submission(
    client: Client, instructor: User, own: CapstoneSubmission
) -> None:
    """Even with a claim row (taken before the rule, or written by hand) nothing is graded."""
    GradingClaim.objects.create(
        submission=own,
        grader=instructor,
        claimed_at=timezone.now(),
        expires_at=timezone.now() + timezone.timedelta(minutes=30),
    )
    client.force_login(instructor)

    response = client.post(reverse("capstone:grade_save", args=[own.pk]), _grade_post(own.course))

    assert response.status_code == 403
    assert "This is your own submission" in response.content.decode()
    assert not Grade.objects.filter(submission=own).exists()
    with pytest.raises(ConflictOfInterest):
        grade_save_draft(
            grader=instructor,
            submission_id=own.pk,
            scores=[
                ScoreInput(criterion_id=c.pk, level_id=None)
                for c in own.course.rubric.criteria.all()
            ],
            overall_feedback="",
            now=timezone.now(),
        )


def test_a_co_instructor_grades_it(
    client: Client, instructor: User, own: CapstoneSubmission
) -> None:
    colleague = InstructorFactory()
    EnrollmentFactory(course=own.course, user=colleague, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(colleague)
    queue = client.get(reverse("capstone:grading_queue")).content.decode()
    assert 'data-testid="own-submission"' not in queue

    claimed = client.post(reverse("capstone:claim", args=[own.pk]))
    released = client.post(reverse("capstone:grade_save", args=[own.pk]), _grade_post(own.course))

    assert claimed.status_code == released.status_code == 302
    assert Grade.objects.get(submission=own).status == Grade.Status.RELEASED
    with pytest.raises(ConflictOfInterest):
        submission_claim(grader=instructor, submission_id=own.pk, now=timezone.now())
