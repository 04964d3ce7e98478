"""Rubric pages: levels saved in one transaction, and GET pages that write nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_save_draft, submission_claim
from planner.models import CapstoneWorksheet, Criterion, Level, Rubric
from tests.factories import CourseFactory, EnrollmentFactory
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


def _levels_post(criterion: Criterion, *, title: str, delete: Level) -> dict[str, str]:
    """The criterion page's form as posted: a new title, every level kept but `delete`."""
    levels = list(criterion.levels.order_by("position", "pk"))
    data = {
        "key": criterion.key,
        "title": title,
        "description": criterion.description,
        "position": str(criterion.position),
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": str(len(levels)),
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for i, level in enumerate(levels):
        data.update(
            {
                f"levels-{i}-id": str(level.pk),
                f"levels-{i}-criterion": str(criterion.pk),
                f"levels-{i}-key": level.key,
                f"levels-{i}-title": level.title,
                f"levels-{i}-points": str(level.points),
                f"levels-{i}-description": level.description,
                f"levels-{i}-position": str(level.position),
            }
        )
        if level.pk == delete.pk:
            data[f"levels-{i}-DELETE"] = "on"
    return data


def test_deleting_a_level_a_grade_uses_is_a_form_error_and_changes_nothing(
    client, instructor, learner
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs, TPUs")
    submission = submission_for(learner, course)
    criterion = course.rubric.criteria.get(key="memory")
    used = criterion.levels.get(key="strong")
    now = timezone.now()
    submission_claim(grader=instructor, submission_id=submission.pk, now=now)
    grade_save_draft(
        grader=instructor,
        submission_id=submission.pk,
        scores=[ScoreInput(criterion_id=criterion.pk, level_id=used.pk)],
        overall_feedback="",
        now=now,
    )
    client.force_login(instructor)
    url = reverse("capstone:criterion", args=[course.slug, criterion.pk])

    response = client.post(url, _levels_post(criterion, title="Renamed", delete=used))

    assert response.status_code == 400
    assert f"The level {used.title} has been used in grades" in response.content.decode()
    criterion.refresh_from_db()
    assert criterion.title != "Renamed"
    assert Level.objects.filter(pk=used.pk).exists()


def test_deleting_an_unused_level_saves_with_the_criterion(client, instructor) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs, TPUs")
    criterion = course.rubric.criteria.get(key="memory")
    unused = criterion.levels.get(key="strong")
    client.force_login(instructor)
    url = reverse("capstone:criterion", args=[course.slug, criterion.pk])

    response = client.post(url, _levels_post(criterion, title="Renamed", delete=unused))

    assert response.status_code == 302
    criterion.refresh_from_db()
    assert criterion.title == "Renamed"
    assert not Level.objects.filter(pk=unused.pk).exists()


def test_rubric_page_get_creates_no_rubric(client, instructor) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(title="No rubric yet")
    EnrollmentFactory(user=instructor, course=course, role="instructor")
    client.force_login(instructor)

    response = client.get(reverse("capstone:rubric", args=[course.slug]))

    assert response.status_code == 200
    assert not Rubric.objects.filter(course=course).exists()


def test_worksheet_page_get_creates_no_draft(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(title="A course")
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)

    response = client.get(reverse("capstone:worksheet", args=[course.slug]))

    assert response.status_code == 200
    assert not CapstoneWorksheet.objects.filter(learner=learner, course=course).exists()
