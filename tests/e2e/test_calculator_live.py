"""The calculator in a real browser: typing updates the result in place, the roofline chart, a
model's config.json pasted or uploaded, and the whole page from the keyboard."""

from __future__ import annotations

import re
from pathlib import Path

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
    assert page.get_by_test_id("warnings").get_by_text("Not all target users fit").is_visible()

    # The pushed URL is shareable: opening it fresh gives the same figure.
    shared = page.url
    page.goto(shared)
    assert page.get_by_test_id("max-users").inner_text() == "7"
    assert not page.console_errors, page.console_errors


def test_save_the_calculation_as_a_card_and_compare(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.services import workload_cards_seed_examples

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


def test_picking_gpu_and_model_fills_memory_and_architecture(page, live_server) -> None:  # type: ignore[no-untyped-def]
    """From the baseline (typed 24 GB, 14 GB weights, 0.6 GB per user), picking H100 SXM and
    Llama-3.1-8B empties the figures they supply, shows them in those fields and recalculates:
    80 − 16.06 − 3 GB over 131,072 B × 4,096 tokens per user = 113 users."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(
        "/planner/?estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6"
    )
    assert page.get_by_test_id("max-users").inner_text() == "11"
    page.get_by_label("GPU", exact=True).select_option("h100-sxm")
    # The typed weights and KV per user still apply: (80 − 14 − 3) ÷ 0.6 = 105 users.
    expect(page.get_by_test_id("max-users")).to_have_text("105")
    page.get_by_label("Model", exact=True).select_option("llama-3.1-8b")
    expect(page.get_by_test_id("max-users")).to_have_text("113")
    memory = page.get_by_label("GPU memory (GB)")
    expect(memory).to_have_value("")
    expect(memory).to_have_attribute("placeholder", "80 (from the GPU)")
    expect(page.get_by_label("Layers")).to_have_attribute("placeholder", "32 (from the model)")
    expect(page.get_by_label("KV heads")).to_have_attribute("placeholder", "8 (from the model)")
    expect(page.get_by_test_id("picked")).to_contain_text("NVIDIA H100 SXM: 80 GB")
    expect(page.get_by_test_id("picked")).to_contain_text("8 KV heads × 128 head dim")
    page.wait_for_url(re.compile(r"gpu=h100-sxm&model=llama-3\.1-8b"))
    assert "gpu_memory_gb" not in page.url and "kv_per_user_gb" not in page.url
    link = page.get_by_test_id("share-link")
    assert link.inner_text() == page.url  # the whole address, every input
    assert not page.console_errors, page.console_errors


def test_compare_table_scrolls_in_its_own_box_on_a_phone(page, live_server, learner) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.services import workload_cards_seed_examples

    cards = workload_cards_seed_examples()
    login_in_browser(page, learner.email)
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto("/planner/cards/compare/?" + "&".join(f"card={c.pk}" for c in cards))
    box = page.get_by_test_id("compare-scroll")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # the page does not scroll
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # the box does
    box.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    # (wait_for_function would eval a string, which the page's CSP forbids: poll instead)
    for _ in range(40):
        if box.evaluate("el => el.scrollLeft") > 0:
            break
        page.wait_for_timeout(50)
    assert box.evaluate("el => el.scrollLeft") > 0
    assert not page.console_errors, page.console_errors


VIEWPORTS = [{"width": 1280, "height": 900}, {"width": 375, "height": 800}]


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_card_name_and_notes_survive_a_recalculation(page, live_server, learner, viewport) -> None:  # type: ignore[no-untyped-def]
    """Typing in the save form while the result refreshes loses nothing, not even the first
    letter typed right after editing a number, and the card saves the new calculation."""
    login_in_browser(page, learner.email)
    page.set_viewport_size(viewport)
    page.goto(CHAT)
    name = page.get_by_label("Card name")
    name.fill("My L40S")
    page.get_by_label("Notes").fill("for the support team")
    page.get_by_label("Context tokens per user").fill("32768")
    name.press("End")
    name.press_sequentially(" chat")  # typed while the result is on its way
    expect(page.get_by_test_id("max-users")).to_have_text("7")
    expect(name).to_have_value("My L40S chat")
    expect(page.get_by_label("Notes")).to_have_value("for the support team")
    page.get_by_role("button", name="Save card").click()
    page.wait_for_url("**/planner/cards/")
    page.get_by_text("My L40S chat").first.wait_for()
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_invalid_numbers_show_their_message_at_the_field_at_once(
    page, live_server, viewport
) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size(viewport)
    page.goto(CHAT)
    page.get_by_label("Concurrent users (target)").fill("2.5")
    expect(page.get_by_test_id("error-users")).to_contain_text("whole number")
    page.get_by_label("Runtime overhead (GB)").fill("3e")
    expect(page.get_by_test_id("error-overhead_gb")).to_contain_text("Enter a number")
    expect(page.get_by_test_id("error-users")).to_contain_text("whole number")
    expect(page.get_by_test_id("max-users")).to_have_count(0)  # no stale result beside errors
    # A screen reader hears one sentence, and the fields say they are invalid.
    expect(page.get_by_role("status").filter(has_text="inputs to fix")).to_have_text(
        "2 inputs to fix."
    )
    expect(page.get_by_label("Concurrent users (target)")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Concurrent users (target)").fill("20")
    page.get_by_label("Runtime overhead (GB)").fill("3")
    expect(page.get_by_test_id("max-users")).to_have_text("28")
    expect(page.get_by_test_id("error-users")).to_be_empty()
    expect(page.get_by_label("Concurrent users (target)")).not_to_have_attribute(
        "aria-invalid", "true"
    )
    expect(page.locator("#calc-announce")).to_contain_text("28 active users fit")
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_the_result_speaks_in_names_not_codes(page, live_server, viewport) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size(viewport)
    page.goto("/planner/?estimate=serving&gpu=l40s&model=mistral-7b&overhead_gb=3&users=100")
    result = page.locator("#calc-result")
    expect(result.get_by_test_id("warnings")).to_contain_text("Not all target users fit")
    expect(result.get_by_test_id("missing-assumptions")).to_contain_text("Weight precision")
    visible = (
        result.get_by_test_id("warnings").inner_text()
        + result.get_by_test_id("missing-assumptions").inner_text()
    )
    for code in ("target_users_do_not_fit", "weight_precision", "kv_precision", "context_tokens"):
        assert code not in visible
    expect(result.get_by_test_id("not-modelled")).to_contain_text("Prefix caching")


def test_a_phone_shows_the_headline_result_first(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(CHAT)
    headline = page.get_by_test_id("max-users")
    box = headline.bounding_box()
    assert box is not None and box["y"] < 800, box  # on the first screen, before the 30 inputs
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


def test_the_decode_batch_slider_updates_the_rate(page, live_server) -> None:  # type: ignore[no-untyped-def]
    """The slider sets the batch; past the 28 users that fit, the rate stays at those 28 and says
    why (one user count per card)."""
    page.goto(CHAT)
    rate = page.get_by_test_id("decode-rate")
    before = rate.inner_text()
    page.get_by_label("Decode batch slider").fill("8")
    expect(page.get_by_label("Decode batch (streams at once)")).to_have_value("8")
    expect(rate).to_contain_text("with 8 decoding together")
    assert rate.inner_text() != before
    page.get_by_label("Decode batch slider").fill("64")
    expect(rate).to_contain_text("with 28 decoding together")
    expect(rate).to_contain_text("64 would not fit in memory")


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_cards_and_compare_read_names_not_codes(page, live_server, learner, viewport) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.services import workload_cards_seed_examples

    cards = workload_cards_seed_examples()
    login_in_browser(page, learner.email)
    page.set_viewport_size(viewport)
    for url in (
        "/planner/cards/",
        "/planner/cards/compare/?" + "&".join(f"card={c.pk}" for c in cards),
    ):
        page.goto(url)
        text = page.locator("main").inner_text()
        for code in ("mistral-7b", "l40s", "target_users_do_not_fit", "weight_precision"):
            assert code not in text, (url, code)
        assert not re.search(r"\d\.\d{5,}", text), url
    assert not page.console_errors, page.console_errors


CONFIGS = Path(__file__).resolve().parents[1] / "planner" / "data" / "configs"
SPEED = (
    "/planner/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=64"
    "&context_tokens=4096&prompt_tokens=1000"
)


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_the_roofline_chart_follows_the_decode_batch(page, live_server, viewport) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size(viewport)
    page.goto(SPEED)
    chart = page.get_by_test_id("roofline-chart")
    expect(chart).to_be_visible()
    box = chart.locator("svg.roofline").bounding_box()
    assert box is not None and box["width"] > 300 and box["x"] + box["width"] <= viewport["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    expect(chart.get_by_test_id("predicted-curve")).to_have_count(1)
    expect(chart.get_by_test_id("upper-bound-curve")).to_have_count(1)
    point = chart.get_by_test_id("user-point")
    expect(point).to_have_count(1)
    x_before = point.get_attribute("cx")
    batch = page.get_by_label("Decode batch (streams at once)")
    batch.fill("4")
    batch.blur()  # its change event recalculates once more: let that land before reading on
    expect(page.get_by_test_id("decode-rate")).to_contain_text("with 4 decoding together")
    expect(page.get_by_test_id("user-point")).not_to_have_attribute("cx", x_before or "")
    page.wait_for_load_state("networkidle")
    # The chart's figures as a table, for a reader who cannot see the chart.
    page.get_by_text("The chart's figures as a table").click()
    table = page.get_by_test_id("roofline-table")
    expect(table).to_be_visible()
    expect(table.locator('tr[aria-current="true"] th')).to_have_text("4")
    # A recalculation keeps the table open, now marking the new batch.
    batch.fill("8")
    expect(page.get_by_test_id("decode-rate")).to_contain_text("with 8 decoding together")
    expect(page.get_by_test_id("roofline-table")).to_be_visible()
    expect(
        page.get_by_test_id("roofline-table").locator('tr[aria-current="true"] th')
    ).to_have_text("8")
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["desktop", "phone"])
def test_pasting_a_config_json_sizes_that_model_and_the_link_keeps_it(
    page, live_server, viewport
) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size(viewport)
    page.goto("/planner/?estimate=serving&gpu=h100-sxm&users=4&context_tokens=4096")
    page.get_by_label("Model config.json").fill((CONFIGS / "qwen3-32b.json").read_text())
    picked = page.get_by_test_id("config-model")
    expect(picked).to_contain_text("From your config.json")
    expect(picked).to_contain_text("64 layers")
    # The KV per user is Qwen3-32B's: 262,144 bytes per token.
    expect(page.locator("#calc-result")).to_contain_text("262144 bytes per token")
    page.wait_for_url(re.compile(r"config=z\."))
    assert len(page.url) < 1000
    users = page.get_by_test_id("max-users").inner_text()
    # The shared link opens the same result, the config readable in its box and its figures
    # shown in the fields it fills.
    page.goto(page.url)
    assert page.get_by_test_id("max-users").inner_text() == users
    expect(page.get_by_label("Layers")).to_have_attribute("placeholder", "64 (from config.json)")
    expect(page.get_by_label("Model config.json")).to_have_value(
        re.compile('"num_hidden_layers": 64')
    )
    # A broken config is named at its field, and no stale result stays beside it.
    page.get_by_label("Model config.json").fill('{"hidden_size": 5120}')
    expect(page.get_by_test_id("error-config")).to_contain_text("num_hidden_layers")
    expect(page.get_by_test_id("max-users")).to_have_count(0)
    assert not page.console_errors, page.console_errors


def test_uploading_a_config_json_fills_the_box_and_recalculates(page, live_server) -> None:  # type: ignore[no-untyped-def]
    page.goto("/planner/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&users=4")
    before = page.get_by_test_id("max-users").inner_text()
    page.get_by_label("Or upload a config.json file").set_input_files(
        str(CONFIGS / "qwen3-32b.json")
    )
    expect(page.get_by_label("Model config.json")).to_have_value(re.compile('"Qwen3ForCausalLM"'))
    expect(page.get_by_test_id("config-model")).to_contain_text("64 layers")
    expect(page.get_by_test_id("max-users")).not_to_have_text(before)
    expect(page.get_by_label("Or upload a config.json file")).to_have_value("")
    assert not page.console_errors, page.console_errors


def test_the_calculator_works_from_the_keyboard_alone(page, live_server) -> None:  # type: ignore[no-untyped-def]
    """Tab to the GPU picker and choose with the arrows, type a config into its box, reach the
    chart's table and open it with Enter: no mouse."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto("/planner/?estimate=serving&users=4&context_tokens=4096")
    page.keyboard.press("Tab")
    for _ in range(60):
        if page.evaluate("document.activeElement && document.activeElement.id") == "id_gpu":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_gpu"
    page.keyboard.type("NVIDIA H100 SXM")  # a focused select selects the option typed
    expect(page.locator("#id_gpu")).to_have_value("h100-sxm")
    for _ in range(10):
        if page.evaluate("document.activeElement && document.activeElement.id") == "id_config":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_config"
    page.keyboard.insert_text((CONFIGS / "llama-3.1-8b.json").read_text())
    expect(page.get_by_test_id("config-model")).to_contain_text("32 layers")
    expect(page.get_by_test_id("picked")).to_contain_text("NVIDIA H100 SXM: 80 GB")
    expect(page.get_by_test_id("roofline-chart")).to_be_visible()
    summary = page.get_by_text("The chart's figures as a table")
    for _ in range(200):
        if summary.evaluate("el => el === document.activeElement"):
            break
        page.keyboard.press("Tab")
    assert summary.evaluate("el => el === document.activeElement")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("roofline-table")).to_be_visible()
    assert not page.console_errors, page.console_errors
