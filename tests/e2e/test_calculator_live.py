"""The calculator in a real browser: typing a new context length updates the users and the bar in place."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import login_in_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHAT = (
    "/planner/?estimate=serving&gpu=l40s&model=mistral-7b&weight_precision=bf16"
    "&kv_precision=bf16&overhead_gb=3&context_tokens=8192&users=20"
)


def test_changing_context_updates_users_and_bar_without_reload(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto(CHAT)
    users = page.get_by_test_id("max-users")
    # L40S 48 GB − 14.5 GB − 3 GB = 30.5 GB; 131,072 B × 8,192 tokens = 1.074 GB per user → 28 users.
    assert users.inner_text() == "28"
    kv = page.locator('svg.memory-bar rect[data-segment="kv"]')
    kv_width_before = kv.get_attribute("width")
    page.evaluate("window.__calculatorPage = 'still the same page'")

    page.get_by_label("Context tokens per user").fill("32768")

    # 4.295 GB per user → 7 users; the KV segment grows to 7 users' caches.
    expect(users).to_have_text("7")
    assert kv.get_attribute("width") != kv_width_before
    assert page.get_by_test_id("legend-kv").inner_text() == "30.06 GB"
    assert page.evaluate("window.__calculatorPage") == "still the same page"  # no reload
    page.wait_for_url(re.compile(r"context_tokens=32768"))
    assert "users=20" in page.url
    assert page.get_by_test_id("warnings").get_by_text("target_users_do_not_fit").is_visible()

    # The pushed URL is shareable: opening it fresh gives the same figure.
    shared = page.url
    page.goto(shared)
    assert page.get_by_test_id("max-users").inner_text() == "7"
    assert not page.console_errors, page.console_errors


def test_save_the_calculation_as_a_card_and_compare(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    from planner.services.cards import workload_cards_seed_examples

    workload_cards_seed_examples()
    login_in_browser(page, learner.email)
    page.goto(CHAT)
    page.get_by_label("Card name").fill("My L40S chat")
    page.get_by_role("button", name="Save card").click()
    page.wait_for_url("**/planner/cards/")
    page.get_by_text("Saved the workload card").wait_for()
    page.get_by_label("My L40S chat").check()
    page.get_by_label("Nightly embedding of 50,000 chunks").check()
    page.get_by_role("button", name="Compare selected").click()
    table = page.get_by_test_id("compare-table")
    table.wait_for()
    assert "My L40S chat" in table.inner_text() and "Workers needed" in table.inner_text()
    assert not page.console_errors, page.console_errors
