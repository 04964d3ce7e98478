"""Measured beside predicted in a real browser: a sample read from the keyboard at desktop width,
a pasted file at phone width (the page does not scroll sideways), a broken file named at its
field, the way in from the path comparison, and a load test attached to a capstone plan. The page fixture runs axe-core and the Nu HTML
checker over every page state, at its width and at 375 px, light and dark."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import login_in_browser
from tests.factories import EnrollmentFactory
from tests.planner.factories import course_taught_by
from tests.planner.measured.results import CHAT, engine_ratio, sample

CHAT_TTFT = (
    f"{engine_ratio('chat-serving-vllm.json', CHAT):.2f}"  # the engine's, as the page rounds it
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHAT_PATHS = (
    "/planner/paths/?estimate=serving&model=llama-3.1-8b&weight_precision=bf16"
    "&context_tokens=8192&users=20&ttft_target_ms=2000&requests_per_day=1000&exclude=managed_api"
)


def test_a_sample_is_compared_from_the_keyboard_without_a_reload(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/planner/measured/")
    expect(page.get_by_test_id("measured-empty")).to_be_visible()
    page.get_by_test_id("sample-chat-vllm").click()
    expect(page.get_by_label("Load test result (JSON)")).to_have_value(
        sample("chat-serving-vllm.json")
    )
    page.evaluate("window.__measuredPage = 'same page'")
    page.get_by_role("button", name="Compare").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("largest-ratio")).to_have_text(CHAT_TTFT)
    expect(page.get_by_test_id("likely-causes")).to_contain_text("Queueing")
    expect(page.get_by_test_id("gap-chart")).to_be_visible()
    table = page.get_by_test_id("measured-table")
    expect(table.locator('tr[data-metric="ttft_ms"] td').nth(0)).to_have_text("1150.0")
    expect(page.get_by_test_id("targets")).to_contain_text("misses")
    assert page.evaluate("window.__measuredPage") == "same page"  # htmx, no reload
    assert not page.console_errors, page.console_errors


def test_a_pasted_guidellm_report_reads_on_a_phone(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto("/planner/measured/?gpu=l40s&model=llama-3.1-8b&context_tokens=8192")
    page.get_by_label("Load test result (JSON)").fill(sample("chat-serving-guidellm.json"))
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("largest-gap")).to_contain_text("guidellm")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    width = page.get_by_test_id("gap-chart").evaluate("el => el.getBoundingClientRect().width")
    assert width <= 375
    assert not page.console_errors, page.console_errors


def test_a_truncated_file_is_named_at_its_field(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto("/planner/measured/?gpu=l40s&model=llama-3.1-8b")
    page.get_by_label("Load test result (JSON)").fill('{"completed": 200, "mean_ttft_ms": 7')
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_test_id("measured-errors")).to_contain_text("is the file cut short?")
    assert not page.console_errors, page.console_errors


def test_the_path_comparisons_load_test_leads_here(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto(CHAT_PATHS)
    expect(page.get_by_test_id("load-test")).to_contain_text("--save-result")
    page.get_by_test_id("compare-measured").click()
    page.wait_for_url("**/planner/measured/?*")
    expect(page.get_by_label("Model", exact=True)).to_have_value("llama-3.1-8b")
    assert not page.console_errors, page.console_errors


def test_a_learner_attaches_a_load_test_and_the_check_reads_it(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(title="GPUs and TPUs")
    EnrollmentFactory(course=course, user=learner)
    login_in_browser(page, learner.email)
    page.goto(f"/capstone/courses/{course.slug}/worksheet/")
    page.get_by_label("Feature", exact=True).fill("Live lesson chat")
    page.get_by_label("Concurrent users (peak)").fill("20")
    page.get_by_label("Recommendation", exact=True).select_option("gpu")
    page.get_by_label("Load test's deployment (its link)").fill(
        "/planner/measured/?gpu=l40s&model=llama-3.1-8b&context_tokens=8192&ttft_target_ms=2000"
    )
    page.get_by_label("Load test result (JSON)").fill(sample("chat-serving-vllm.json"))
    page.get_by_role("button", name="Save draft").click()
    page.get_by_text("Draft saved.").wait_for()
    expect(page.get_by_test_id("attached-measured")).to_contain_text(f"first token {CHAT_TTFT}")
    page.get_by_role("button", name="Submit plan").click()
    page.get_by_text("Version 1 submitted.").wait_for()
    check = page.get_by_test_id("automatic-check")
    expect(check.get_by_test_id("check-measured")).to_contain_text(CHAT_TTFT)
    expect(check.locator('[data-code="measured_misses_target"]')).to_contain_text("2,600 ms")
    assert not page.console_errors, page.console_errors
