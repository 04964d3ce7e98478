"""Preferences in a real browser, on a desktop and on a phone: a pause shows until when it lasts
and can be resumed; the time-zone list is grouped by region, searchable as you type and starts at
the browser's zone; help text sits under its input."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.local_day import learning_date
from accounts.models import User
from tests.conftest import login_in_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 375]

HELP_UNDER_INPUT = """(id) => {
  const input = document.getElementById(id);
  const help = document.getElementById(id + "_helptext");
  return help.getBoundingClientRect().top >= input.getBoundingClientRect().bottom - 1;
}"""


@pytest.fixture
def kolkata_page(browser, live_server, request):  # type: ignore[no-untyped-def]
    """A page whose browser says it is in Kolkata."""
    width = request.node.callspec.params["width"]
    context = browser.new_context(
        base_url=live_server.url,
        timezone_id="Asia/Kolkata",
        viewport={"width": width, "height": 800},
    )
    context.set_default_timeout(15_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.console_errors = errors
    yield pg
    context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_pause_shows_its_end_and_resumes(page, learner: User, width: int) -> None:  # type: ignore[no-untyped-def]
    learner.time_zone = "Europe/Paris"
    learner.save()
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learner.email)
    page.goto("/accounts/preferences/")
    assert page.get_by_test_id("pause-status").count() == 0

    page.get_by_label("Pause reminders for (days)").fill("3")
    page.get_by_role("button", name="Save preferences").click()
    page.get_by_text("Preferences saved.").wait_for()

    today = learning_date(
        moment=timezone.now(), time_zone="Europe/Paris", day_start_hour=learner.day_start_hour
    )
    last = today + timedelta(days=2)
    status = page.get_by_test_id("pause-status")
    expected = f"Reminders paused until {last:%A} {last.day} {last:%B %Y}"
    assert expected in status.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    resume = status.get_by_role("button", name="Resume reminders now")
    resume.focus()
    page.keyboard.press("Enter")
    page.get_by_text("Reminders resumed").wait_for()
    assert page.get_by_test_id("pause-status").count() == 0
    learner.refresh_from_db()
    assert learner.reminders_paused_until is None


@pytest.mark.parametrize("width", WIDTHS)
def test_time_zone_grouped_searchable_and_from_the_browser(
    kolkata_page, learner: User, width: int
) -> None:  # type: ignore[no-untyped-def]
    page = kolkata_page
    login_in_browser(page, learner.email)
    page.goto("/accounts/preferences/")
    select = page.get_by_label("Time zone", exact=True)

    groups = page.eval_on_selector_all("#id_time_zone optgroup", "gs => gs.map(g => g.label)")
    assert {"Africa", "America", "Asia", "Europe", "Pacific"} <= set(groups)
    values = page.eval_on_selector_all("#id_time_zone option", "os => os.map(o => o.value)")
    assert not {"Factory", "localtime", "US/Eastern", "Etc/GMT+5"} & set(values)
    assert len(values) < 500

    # A learner who never chose a zone starts at the browser's, and is told so.
    # (Chromium's ICU names Kolkata by its older alias, Asia/Calcutta; both are in the list.)
    browser_zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert browser_zone in ("Asia/Kolkata", "Asia/Calcutta")
    assert select.input_value() == browser_zone
    assert browser_zone in page.get_by_role("status").last.inner_text()

    # Typing a place and picking the suggestion moves the list.
    page.get_by_label("Find a time zone").fill("Asia/Tokyo")
    assert select.input_value() == "Asia/Tokyo"
    assert page.evaluate(HELP_UNDER_INPUT, "id_time_zone")
    assert page.evaluate(HELP_UNDER_INPUT, "id_pause_days")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.get_by_role("button", name="Save preferences").click()
    page.get_by_text("Preferences saved.").wait_for()
    learner.refresh_from_db()
    assert learner.time_zone == "Asia/Tokyo"
    # Once chosen, the browser's zone no longer overrides it.
    assert select.input_value() == "Asia/Tokyo"
    assert page.console_errors == []
