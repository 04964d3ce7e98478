"""Compare paths in a real browser: the course's chat card at desktop and phone width, a
constraint that moves the recommendation in place, formulas opened from the keyboard, and a
workload card's "Compare paths" button."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import login_in_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHAT = (
    "/planner/paths/?estimate=serving&model=llama-3.1-8b&weight_precision=bf16"
    "&context_tokens=8192&users=20&ttft_target_ms=2000&requests_per_day=1000"
)


def test_excluding_the_api_moves_the_recommendation_to_a_gpu_in_place(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(CHAT)
    recommended = page.get_by_test_id("recommended")
    expect(recommended).to_contain_text("Managed model API")
    l4 = page.locator('[data-testid="rejected-table"] tr[data-accelerator="l4"][data-count="1"]')
    expect(l4.get_by_test_id("limiter")).to_have_text("KV cache")
    h100 = page.locator(
        '[data-testid="meeting-table"] tr[data-accelerator="h100-sxm"][data-count="1"]'
    )
    expect(h100).to_be_visible()
    # The table comes first, the chart after it.
    table_y = page.get_by_test_id("meeting-table").bounding_box()["y"]  # type: ignore[index]
    chart_y = page.get_by_test_id("cost-chart").bounding_box()["y"]  # type: ignore[index]
    assert table_y < chart_y
    page.evaluate("window.__pathsPage = 'still the same page'")

    page.get_by_label("Managed API (data leaves your network)").check()

    expect(page.get_by_test_id("deploy-command")).to_contain_text(
        "vllm serve meta-llama/Llama-3.1-8B"
    )
    expect(recommended).not_to_contain_text("Managed model API")
    assert page.evaluate("window.__pathsPage") == "still the same page"  # no reload
    page.wait_for_url(re.compile(r"exclude=managed_api"))
    expect(page.get_by_test_id("load-test")).to_contain_text("vllm bench serve")
    expect(page.get_by_test_id("load-test")).to_contain_text("p95 time to first token ≤ 2,000 ms")
    # The shared link opens the same comparison.
    page.goto(page.url)
    expect(page.get_by_test_id("recommended")).not_to_contain_text("Managed model API")
    assert not page.console_errors, page.console_errors


def test_a_rows_formulas_open_from_the_keyboard(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto(CHAT)
    row = page.locator(
        '[data-testid="meeting-table"] tr[data-accelerator="h100-sxm"][data-count="1"]'
    )
    summary = row.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(row.get_by_text("$4.50 × 1 × 24 = $108.00")).to_be_visible()
    assert not page.console_errors, page.console_errors


def test_phone_width_keeps_the_page_still_and_scrolls_the_table(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(CHAT)
    expect(page.get_by_test_id("recommended")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    box = page.locator(".paths-wrap").first
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")
    assert (
        page.get_by_test_id("cost-chart").evaluate("el => el.getBoundingClientRect().width") <= 375
    )
    assert not page.console_errors, page.console_errors


def test_each_course_card_opens_its_comparison(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.services import workload_cards_seed_examples

    workload_cards_seed_examples()
    login_in_browser(page, learner.email)
    page.goto("/planner/cards/")
    buttons = page.get_by_test_id("example-cards").get_by_role("link", name="Compare paths")
    expect(buttons).to_have_count(3)
    buttons.nth(1).click()  # the nightly embeddings
    page.wait_for_url(re.compile(r"/planner/paths/\?.*estimate=batch"))
    cpu = page.locator('[data-testid="meeting-table"] tr[data-accelerator="cpu-server"]')
    expect(cpu).to_be_visible()
    expect(page.get_by_test_id("load-test")).to_contain_text("timed run")
    assert not page.console_errors, page.console_errors
