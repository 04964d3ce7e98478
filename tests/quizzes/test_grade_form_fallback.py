"""The grade form htmx swaps in carries its own CSRF token: a grade key pressed before htmx has
bound the new form submits it as a plain form post, and that must grade, not answer 403."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from accounts.models import User
from quizzes.models import RecallSchedule
from quizzes.services.review import schedule_start
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_the_swapped_in_grade_form_grades_as_a_plain_post(learner: User) -> None:
    c = course_with_items(learner=learner, learning_steps_minutes=[], daily_new_limit=0)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=4, now=T0)
    schedule = RecallSchedule.objects.get()
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    with time_machine.travel(T0 + timedelta(days=30), tick=False):
        client.get(reverse("quizzes:session"))  # the page sets the CSRF cookie
        revealed = client.get(
            reverse("quizzes:session"),
            {"reveal": 1, "schedule": schedule.pk, "token": str(schedule.card_token)},
            HTTP_HX_REQUEST="true",
        ).content.decode()
        form = re.search(r'<form[^>]*class="grade-form"[^>]*>(.*?)</form>', revealed, re.S)
        assert form is not None
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form[1]))
        assert "csrfmiddlewaretoken" in fields
        response = client.post(reverse("quizzes:grade"), {**fields, "rating": 3})
    assert response.status_code == 302  # graded, then back to the session page
    schedule.refresh_from_db()
    assert schedule.reps == 2
