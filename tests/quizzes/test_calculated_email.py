"""A digest whose first due item is calculated shows the numbers drawn for its learner, and its
prompt page shows and grades that same draw."""

from __future__ import annotations

import html
import re

import pytest
from django.core import mail
from django.utils import timezone

from quizzes.calculated import schedule_problem
from quizzes.models import RecallSchedule, ReviewLog
from reminders.scan import digests_scan
from tests.quizzes.calculated_factories import calculated_due

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_digest_shows_the_draw_and_its_prompt_page_grades_it(client, settings) -> None:
    settings.SITE_URL = "http://testserver"
    user, schedule = calculated_due()
    problem = schedule_problem(RecallSchedule.objects.select_related("item").get(pk=schedule.pk))
    digests_scan(now=timezone.now())
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    text = " ".join(message.body.split())
    assert " ".join(problem.prompt.split()) in text
    assert "{layers}" not in message.body
    assert "{" not in message.subject and problem.prompt[:40] in message.subject
    html_body = message.alternatives[0][0]
    assert html.escape(problem.prompt.split(" layers")[0]) in html_body

    prompt_path = re.search(r"http://testserver(/reminders/prompt/\S+/)", message.body).group(1)
    page = client.get(prompt_path).content.decode()
    assert html.escape(problem.prompt).replace("\n", "<br>") in page
    assert 'data-testid="prompt-value"' in page
    token = re.search(r'name="card_token" value="([^"]+)"', page).group(1)
    response = client.post(
        prompt_path,
        {"card_token": token, "rating": "3", "value": f"{problem.solution.answer}"},
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "within the tolerance" in page and 'data-testid="worked-solution"' in page
    log = ReviewLog.objects.get()
    assert log.source == ReviewLog.Source.EMAIL
    assert log.answer_value == pytest.approx(problem.solution.answer)
    assert log.expected_value == pytest.approx(problem.solution.answer)
    assert user.pk == log.learner_id


def test_a_prompt_page_refuses_a_number_that_is_not_one(client, settings) -> None:
    settings.SITE_URL = "http://testserver"
    calculated_due()
    digests_scan(now=timezone.now())
    prompt_path = re.search(
        r"http://testserver(/reminders/prompt/\S+/)", mail.outbox[0].body
    ).group(1)
    page = client.get(prompt_path).content.decode()
    token = re.search(r'name="card_token" value="([^"]+)"', page).group(1)
    response = client.post(prompt_path, {"card_token": token, "rating": "3", "value": "inf"})
    assert response.status_code == 400
    assert "Your answer: Enter a number" in response.content.decode()
    assert not ReviewLog.objects.exists()
