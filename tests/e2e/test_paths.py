"""Compare paths in a real browser: the course's chat card at desktop and phone width, the
headline options first and the rest on demand, a constraint that moves the recommendation in
place (announced beside the inputs), the frontier's chart and table, the percentiles beside the
means, keyboard travel, "Attach to my capstone", and "Compare paths" from the calculator."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import login_in_browser
from tests.e2e.test_capstone_journey import fill_worksheet
from tests.factories import EnrollmentFactory
from tests.planner.factories import course_taught_by

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHAT = (
    "/planner/paths/?estimate=serving&model=llama-3.1-8b&weight_precision=bf16"
    "&context_tokens=8192&users=20&ttft_target_ms=2000&requests_per_day=1000"
)

# Whether a word of any badge, or any chart label, is cut: a word drawn on two lines has two
# boxes; an SVG text's box must lie inside its drawing.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const badge of document.querySelectorAll('#paths-result .badge')) {
    const node = badge.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE) continue;
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}"""
CUT_LABELS = """() => {
  const cut = [];
  for (const svg of document.querySelectorAll('#paths-result svg[viewBox]')) {
    const [, , width, height] = svg.getAttribute('viewBox').split(' ').map(Number);
    for (const text of svg.querySelectorAll('text')) {
      const box = text.getBBox();
      if (box.x < 0 || box.x + box.width > width + 0.5 || box.y < 0 || box.y + box.height > height + 0.5)
        cut.push(text.textContent);
    }
  }
  return cut;
}"""
# Tab stops from the first focusable element of the result to the last.
TAB_STOPS_IN_RESULT = """() => {
  const result = document.getElementById('paths-result');
  const focusable = [...result.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
    .filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0
            && !el.closest('details:not([open]) > :not(summary)'));
  return focusable.length;
}"""


def test_the_headline_comes_first_and_excluding_the_api_moves_it_in_place(
    page, live_server
) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(CHAT)
    recommended = page.get_by_test_id("recommended")
    expect(recommended).to_contain_text("Managed model API")
    expect(page.get_by_test_id("recommended-path")).to_have_text("Managed API")
    headline = page.get_by_test_id("headline-table")
    roles = headline.locator("tr[data-role]").evaluate_all("rows => rows.map(r => r.dataset.role)")
    assert roles[:2] == ["Recommended", "Runner-up"]
    assert {"Best TPU", "Closest CPU"} <= set(roles)
    assert len(roles) <= 6
    # The runner-up is written with its devices, as everywhere: "4 × NVIDIA T4".
    expect(page.get_by_test_id("runner-up")).to_have_text(re.compile(r"^\d+ × \S"))
    # The means, and the percentiles beside them where the estimate gives them.
    gpu_row = headline.locator('tr[data-path="gpu"]').first
    expect(gpu_row).to_contain_text("mean")
    percentiles = gpu_row.locator(".figure-line").all_inner_texts()
    if any(line.startswith("p95") for line in percentiles):
        assert any(line.startswith("p99") for line in percentiles)
    # The rest on demand: 77 options behind one summary, one "How" per table.
    all_options = page.get_by_test_id("all-options")
    expect(page.get_by_test_id("meeting-table")).to_be_hidden()
    all_options.locator("> summary").click()
    l4 = page.locator('[data-testid="rejected-table"] tr[data-accelerator="l4"][data-count="1"]')
    # One L4 misses the chat card's targets and says why, in words.
    expect(l4.get_by_test_id("limiter")).to_have_text(re.compile(r"^[a-zA-Z ]+$"))
    assert page.locator("#paths-result table details").count() == 0
    assert page.evaluate(BROKEN_WORDS) == []
    # The frontier of the cheapest self-hosted option that meets: a chart and its table.
    frontier = page.get_by_test_id("frontier")
    expect(frontier.locator("svg.frontier-chart")).to_be_visible()
    expect(frontier.get_by_test_id("frontier-table").locator("tbody tr").first).to_be_visible()
    expect(frontier.get_by_test_id("operating-point")).to_contain_text("The targets pick")
    assert page.evaluate(CUT_LABELS) == []
    page.evaluate("window.__pathsPage = 'still the same page'")

    page.get_by_label("Managed API (data leaves your network)").check()

    expect(page.get_by_test_id("deploy-command")).to_contain_text(
        "vllm serve meta-llama/Llama-3.1-8B"
    )
    expect(recommended).not_to_contain_text("Managed model API")
    expect(page.get_by_test_id("paths-status")).to_contain_text(recommended.inner_text())
    expect(page.get_by_test_id("excluded")).to_have_text(
        "Excluded by your constraints: the Managed API."
    )
    assert page.evaluate("window.__pathsPage") == "still the same page"  # no reload
    page.wait_for_url(re.compile(r"exclude=managed_api"))
    expect(page.get_by_test_id("load-test")).to_contain_text("p95 time to first token ≤ 2,000 ms")
    expect(page.get_by_test_id("operating-row")).to_have_count(1)
    page.goto(page.url)  # the shared link opens the same comparison
    expect(page.get_by_test_id("recommended")).not_to_contain_text("Managed model API")
    assert not page.console_errors, page.console_errors


def test_the_keyboard_crosses_the_comparison_in_under_20_stops(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(CHAT)
    stops = page.evaluate(TAB_STOPS_IN_RESULT)
    assert 0 < stops < 20, stops
    # Tab really walks them: from the form's last stop (the status's link) to the result's last.
    page.get_by_test_id("paths-status").get_by_role("link").focus()
    walked = 0
    while walked < 40:
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "() => document.getElementById('paths-result').contains(document.activeElement)"
        )
        if not inside:
            break
        walked += 1
    assert walked == stops
    # One "How" for the headline table opens from the keyboard.
    how = page.get_by_test_id("headline-table-how").locator("summary")
    how.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("headline-table-how")).to_contain_text("Cost per day (always on")
    assert not page.console_errors, page.console_errors


def test_at_phone_width_a_change_is_announced_beside_the_input(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto("/planner/paths/")
    # The default the comparison assumes is in its field, not a silently empty one.
    expect(page.get_by_role("spinbutton", name="Requests per day")).to_have_value(
        re.compile(r"^\d+$")
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    field = page.get_by_role("spinbutton", name="Requests per day")
    field.fill("2000000")
    status = page.get_by_test_id("paths-status")
    expect(status).to_have_attribute("role", "status")
    page.wait_for_url(re.compile(r"requests_per_day=2000000"))
    expect(status).to_contain_text("a day at 2,000,000 requests")
    box = status.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 812
    assert status.inner_text() != ""
    page.set_viewport_size({"width": 320, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    wrap = page.locator(".paths-wrap").first
    assert wrap.evaluate("el => el.scrollWidth > el.clientWidth")
    for kind in ("batch", "training"):
        page.goto(f"/planner/paths/?estimate={kind}")
        expect(page.get_by_test_id("recommended")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 320, kind
    assert not page.console_errors, page.console_errors


def test_attach_to_my_capstone_puts_the_comparison_on_the_worksheet(
    page, live_server, learner, instructor
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor, title="GPUs and TPUs")
    EnrollmentFactory(course=course, user=learner)
    login_in_browser(page, learner.email)
    page.goto(CHAT + "&exclude=managed_api")
    label = page.get_by_test_id("recommended").inner_text()
    assert re.match(r"^\d+ × ", label) or label.startswith("NVIDIA")
    page.get_by_test_id("attach").click()
    page.wait_for_url(f"**/capstone/courses/{course.slug}/worksheet/")
    expect(page.get_by_text(f"Comparison attached: it recommends {label}.")).to_be_visible()
    attached = page.get_by_test_id("attached-comparison")
    expect(attached).to_contain_text(f"The attached comparison recommends {label}.")
    assert "(gpu)" not in attached.inner_text()
    # The submitted version's automatic check says it the same way.
    fill_worksheet(page, "Live lesson chat")
    page.get_by_role("button", name="Submit plan").click()
    page.get_by_text("Version 1 submitted.").wait_for()
    expect(page.get_by_test_id("check-comparison")).to_contain_text(
        f"The attached path comparison recommends {label}."
    )
    assert not page.console_errors, page.console_errors


def test_compare_paths_from_the_calculator_carries_its_inputs(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto("/planner/?estimate=serving&gpu=l40s&model=llama-3.1-8b&context_tokens=4096&users=12")
    page.get_by_test_id("compare-paths").click()
    page.wait_for_url(re.compile(r"/planner/paths/\?.*context_tokens=4096"))
    assert "users=12" in page.url
    expect(page.get_by_test_id("recommended")).to_be_visible()
    page.get_by_text("The workload (").click()
    expect(page.locator("#id_context_tokens")).to_have_value("4096")
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
    cpu = page.locator('[data-testid="headline-table"] tr[data-accelerator="cpu-server"]')
    expect(cpu).to_be_visible()
    expect(page.get_by_test_id("load-test")).to_contain_text("timed run")
    assert not page.console_errors, page.console_errors
