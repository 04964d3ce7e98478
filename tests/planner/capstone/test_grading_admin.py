"""The admin shows a grade with its scores and history, read-only: grades change on the grading page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from planner.capstone.grading import ScoreInput, grade_save_draft, submission_claim
from planner.models import Grade
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.fixture
def grade(learner: User, instructor: User) -> Grade:
    course = course_taught_by(instructor)
    submission = submission_for(learner, course)
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    scores = [
        ScoreInput(criterion_id=c.pk, level_id=c.levels.get(key="partial").pk, comment="Ok")
        for c in course.rubric.criteria.all()
    ]
    return grade_save_draft(
        grader=instructor,
        submission_id=submission.pk,
        scores=scores,
        overall_feedback="Draft feedback",
        now=now,
    )


@pytest.mark.parametrize(
    "model",
    ["workloadcard", "rubric", "criterion", "capstoneworksheet", "capstonesubmission", "grade"],
)
def test_admin_changelists_render(staff_client: Client, grade: Grade, model: str) -> None:
    assert staff_client.get(reverse(f"admin:planner_{model}_changelist")).status_code == 200


def test_grade_page_lists_scores_and_history_without_inputs(
    staff_client: Client, grade: Grade
) -> None:
    response = staff_client.get(reverse("admin:planner_grade_change", args=[grade.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Memory and KV estimate" in html and "Draft saved" in html
    # Neither inline offers a row to add or a field to edit.
    assert 'name="scores-0-comment"' not in html
    assert 'name="changes-0-changes"' not in html
    assert 'id="scores-empty"' not in html and 'id="changes-empty"' not in html
