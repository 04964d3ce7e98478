"""The lesson page records the visit with an htmx POST as it loads, so "resume" still works while
a GET (a link scanner, a prefetch) writes nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from courses.models import Enrollment, LessonProgress
from tests.conftest import login_in_browser
from tests.factories import EnrollmentFactory, LessonFactory, UserFactory


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_opening_a_lesson_in_a_browser_records_the_visit(page, live_server) -> None:  # type: ignore[no-untyped-def]
    learner = UserFactory()
    lesson = LessonFactory(title="HBM and bandwidth")
    EnrollmentFactory(course=lesson.module.course, user=learner)
    login_in_browser(page, learner.email)

    visit = reverse("courses:visit", args=[lesson.module.course.slug, lesson.slug])
    with page.expect_response(lambda r: r.url.endswith(visit) and r.request.method == "POST") as r:
        page.goto(lesson.get_absolute_url())
    assert r.value.status == 204

    assert Enrollment.objects.get(user=learner).last_lesson_id == lesson.pk
    assert LessonProgress.objects.filter(learner=learner, lesson=lesson).exists()
    assert not page.console_errors, page.console_errors


@pytest.mark.django_db
def test_the_visit_is_a_post_for_enrolled_learners_only() -> None:
    lesson = LessonFactory()
    course = lesson.module.course
    visit = reverse("courses:visit", args=[course.slug, lesson.slug])
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory())

    assert client.get(visit).status_code == 405
    assert client.post(visit).status_code == 403  # no CSRF token
    assert Client().post(visit).status_code == 302  # anonymous: to the login page
    stranger = Client()
    stranger.force_login(UserFactory())
    assert stranger.post(visit).status_code == 404  # not enrolled
    assert not LessonProgress.objects.exists()
