"""The digest's links in a real browser at phone width: answer the prompt, reveal it with the
keyboard, grade it; then unsubscribe with one click on the confirm page. No login needed."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from quizzes.calculated import schedule_problem
from quizzes.models import RecallSchedule, ReviewLog
from reminders.scan import digests_scan
from tests.conftest import ARTIFACTS
from tests.quizzes.calculated_factories import calculated_due
from tests.reminders.factories import learner_due

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_prompt_then_unsubscribe_from_the_email(page, live_server, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SITE_URL = live_server.url
    user = learner_due(due=timezone.now() - timedelta(hours=1), reminder_hour=0, day_start_hour=0)
    digests_scan(now=timezone.now())  # commits, so the send runs (eagerly) on commit
    assert len(mail.outbox) == 1
    body = mail.outbox[0].body
    prompt_url = re.search(r"http://\S+/reminders/prompt/\S+/", body).group(0)
    unsubscribe_url = re.search(r"http://\S+/reminders/unsubscribe/\S+/", body).group(0)

    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(prompt_url)
    schedule = user.recall_schedules.get()
    assert page.get_by_role("heading", name=schedule.item.prompt).is_visible()
    answer = page.get_by_text(schedule.item.model_answer)
    assert not answer.is_visible()
    page.get_by_text("Show the answer").focus()
    page.keyboard.press("Enter")
    answer.wait_for()
    assert ReviewLog.objects.count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reminders_prompt_375.png"), full_page=True)
    page.get_by_role("button", name="Good").click()
    page.get_by_text("Graded “Good”").wait_for()
    assert ReviewLog.objects.get().source == ReviewLog.Source.EMAIL
    assert page.evaluate("document.documentElement.scrollWidth") <= 375

    page.goto(unsubscribe_url)
    user.refresh_from_db()
    assert user.reminders_enabled
    page.get_by_role("button", name="Unsubscribe").click()
    page.get_by_role("heading", name="You are unsubscribed").wait_for()
    user.refresh_from_db()
    assert not user.reminders_enabled
    assert not page.console_errors, page.console_errors


def test_a_calculated_prompt_from_the_email_grades_the_draw_it_showed(
    page, live_server, settings
) -> None:  # type: ignore[no-untyped-def]
    """The digest shows the numbers drawn for its learner; the prompt page shows the same ones,
    takes a number typed with the keyboard and grades it against that draw, at phone width."""
    settings.SITE_URL = live_server.url
    _user, schedule = calculated_due()
    problem = schedule_problem(RecallSchedule.objects.select_related("item").get(pk=schedule.pk))
    digests_scan(now=timezone.now())
    body = mail.outbox[0].body
    assert " ".join(problem.prompt.split()) in " ".join(body.split())
    prompt_url = re.search(r"http://\S+/reminders/prompt/\S+/", body).group(0)

    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(prompt_url)
    assert " ".join(page.get_by_test_id("prompt-text").inner_text().split()) == " ".join(
        problem.prompt.split()
    )
    page.get_by_test_id("prompt-value").focus()
    page.keyboard.type(f"{problem.solution.answer / 2:g}")  # the factor 2 for K and V forgotten
    page.get_by_role("button", name="Again").click()
    page.get_by_test_id("prompt-verdict").wait_for()
    assert "outside the tolerance" in page.get_by_test_id("prompt-verdict").inner_text()
    assert page.get_by_test_id("worked-solution").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reminders_calculated_prompt_375.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    log = ReviewLog.objects.get()
    assert log.source == ReviewLog.Source.EMAIL
    assert log.answer_value == pytest.approx(problem.solution.answer / 2)
    assert log.expected_value == pytest.approx(problem.solution.answer)
    assert not page.console_errors, page.console_errors
