"""Roles across the site: learners never reach instructor pages; anonymous users are sent to log in."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from courses.models import Enrollment
from tests.factories import CourseFactory, EnrollmentFactory

pytestmark = pytest.mark.django_db

INSTRUCTOR_PAGES = [
    ("courses:teaching", False),
    ("courses:teaching_course", True),
    ("quizzes:course_stats", True),
    ("quizzes:course_settings", True),
    ("reminders:status", False),
    ("capstone:grading_queue", False),
    ("capstone:rubric", True),
    ("capstone:export", True),
]

LEARNER_PAGES = [
    "dashboard",
    "preferences",
    "courses:catalogue",
    "quizzes:session",
    "quizzes:stats",
    "planner:cards",
    "capstone:list",
]


def _url(name: str, needs_course: bool, slug: str) -> str:
    return reverse(name, kwargs={"course_slug": slug}) if needs_course else reverse(name)


@pytest.mark.parametrize(("name", "needs_course"), INSTRUCTOR_PAGES)
def test_learner_gets_403_on_instructor_pages(
    client: Client, learner: User, name: str, needs_course: bool
) -> None:
    course = CourseFactory()
    EnrollmentFactory(course=course, user=learner)
    client.force_login(learner)
    assert client.get(_url(name, needs_course, course.slug)).status_code == 403


@pytest.mark.parametrize(("name", "needs_course"), INSTRUCTOR_PAGES)
def test_instructor_of_the_course_reaches_instructor_pages(
    client: Client, instructor: User, name: str, needs_course: bool
) -> None:
    course = CourseFactory()
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(instructor)
    assert client.get(_url(name, needs_course, course.slug)).status_code == 200


@pytest.mark.parametrize("name", [*LEARNER_PAGES, *(n for n, c in INSTRUCTOR_PAGES if not c)])
def test_anonymous_user_is_sent_to_login_everywhere(client: Client, name: str) -> None:
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_instructor_sees_teaching_navigation_and_learner_does_not(
    client: Client, learner: User, instructor: User
) -> None:
    client.force_login(learner)
    assert (
        reverse("capstone:grading_queue") not in client.get(reverse("dashboard")).content.decode()
    )
    client.force_login(instructor)
    assert reverse("capstone:grading_queue") in client.get(reverse("dashboard")).content.decode()
