"""The calculator page: pre-fill from the query string, htmx fragment, URL kept in sync, CSP-safe."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

BASELINE = (
    "/planner/?estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6"
)


def test_lesson_link_prefills_and_shows_the_baseline(client: Client) -> None:
    html = client.get(BASELINE).content.decode()
    assert 'name="gpu_memory_gb" value="24"' in html
    assert 'name="kv_per_user_gb" value="0.6"' in html
    assert re.search(r'id="max-users"[^>]*>11<', html)
    assert "⌊7.0 GB ÷ 0.6 GB⌋ = 11" in html
    assert (
        'data-hx-trigger="input changed delay:300ms' in html and 'data-hx-push-url="true"' in html
    )


def test_no_style_attributes_and_an_svg_bar(client: Client) -> None:
    """CSP forbids inline styles: the bar is SVG geometry coloured by class."""
    html = client.get(BASELINE).content.decode()
    assert "style=" not in html
    assert (
        'data-segment="weights"' in html
        and 'data-segment="kv"' in html
        and 'data-segment="free"' in html
    )
    # 14 of 24 GB is 583.33 of 1000 units
    assert 'data-segment="weights" x="0.0" y="0" width="583.33"' in html


def test_htmx_request_returns_the_fragment_and_pushes_a_clean_url(client: Client) -> None:
    response = client.get(BASELINE + "&users=&layers=", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html and 'id="max-users"' in html
    assert response.headers["HX-Push-Url"] == (
        reverse("planner:calculator")
        + "?estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6"
    )


def test_errors_name_the_field(client: Client) -> None:
    html = client.get(
        "/planner/?estimate=serving&gpu_memory_gb=-3&model_gb=14&kv_per_user_gb=1"
    ).content.decode()
    assert "GPU memory (GB): must be greater than zero." in html


@pytest.mark.parametrize("kind", ["serving", "training", "batch"])
def test_each_estimate_renders_with_defaults(client: Client, kind: str) -> None:
    response = client.get(reverse("planner:calculator"), {"estimate": kind})
    assert response.status_code == 200
    assert "Formulas, with your numbers" in response.content.decode()


def test_pickers_list_the_catalogue(client: Client) -> None:
    html = client.get(reverse("planner:calculator")).content.decode()
    assert '<option value="h100-sxm"' in html and '<option value="a100-80gb:3g.40gb"' in html
    assert '<option value="qwen2.5-7b"' in html


def test_weights_overflow_draws_the_capacity_line(client: Client) -> None:
    html = client.get(
        "/planner/?estimate=serving&gpu=a100-80gb&model=llama-3.1-70b&weight_precision=bf16&overhead_gb=3"
    ).content.decode()
    assert "weights_do_not_fit" in html and 'class="capacity-line"' in html


@pytest.mark.django_db
def test_logged_in_learner_sees_the_save_form(client: Client, learner: object) -> None:
    from tests.factories import PASSWORD

    client.login(email=learner.email, password=PASSWORD)  # type: ignore[attr-defined]
    html = client.get(BASELINE).content.decode()
    assert "Save as a workload card" in html
    assert 'name="query" value="estimate=serving&amp;gpu_memory_gb=24' in html


def test_page_lists_the_catalogue_with_sources(client: Client) -> None:
    html = client.get(reverse("planner:calculator")).content.decode()
    assert "huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json" in html
    assert "per million tokens" in html and "3g.40gb" in html


def test_batch_bar_shows_hours_against_the_window(client: Client) -> None:
    html = client.get(
        "/planner/?estimate=batch&items=50000&window_hours=2&items_per_s=5&retry_margin=0.2&workers=1"
    ).content.decode()
    # 60,000 items at 5/s on one worker = 3.33 h: over the 2 h window, so the capacity line shows.
    assert 'data-segment="work"' in html and "3.33 h" in html
    assert "window_too_short" in html and 'class="capacity-line"' in html
    assert "longer than the window" in html


def test_share_link_shows_the_full_url_with_every_input(client: Client) -> None:
    """The link's visible text is the whole absolute URL (not a bare `/planner/?`), and it is the
    address the page pushes, so it reopens the same result."""
    html = client.get(BASELINE + "&users=20").content.decode()
    query = "estimate=serving&amp;gpu_memory_gb=24&amp;model_gb=14&amp;overhead_gb=3&amp;kv_per_user_gb=0.6&amp;users=20"
    match = re.search(r'data-testid="share-link"[^>]*href="([^"]+)">([^<]+)</a>', html)
    assert match is not None
    assert match.group(1) == f"/planner/?{query}"
    assert match.group(2) == f"http://testserver/planner/?{query}"
    assert f'data-copy="http://testserver/planner/?{query}"' in html


def test_picked_gpu_and_model_show_what_they_supply(client: Client) -> None:
    """Llama-3.1-8B on an H100 SXM: the empty fields show the catalogue's figures, the result lists
    them, and 80 − 16.06 − 3 GB over 0.537 GB per user (4,096 tokens) is 113 users."""
    html = client.get(
        "/planner/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&overhead_gb=3"
    ).content.decode()
    assert re.search(
        r'name="gpu_memory_gb" value="" inputmode="decimal" placeholder="80 \(from the GPU\)"', html
    )
    assert re.search(r'id="id_layers"[^>]*placeholder="32 \(from the model\)"', html)
    assert (
        'placeholder="8 (from the model)"' in html and 'placeholder="128 (from the model)"' in html
    )
    assert "<strong>NVIDIA H100 SXM</strong>: 80 GB, 3350 GB/s" in html
    assert "8 KV heads × 128 head dim" in html
    assert re.search(r'id="max-users"[^>]*>113<', html)
    assert 'id="picker-data" type="application/json"' in html
    assert "planner/calculator.js" in html


def test_training_and_batch_tabs_render_their_headlines(client: Client) -> None:
    training = client.get(
        "/planner/?estimate=training&model=llama-3.1-8b&gpu=h100-sxm&method=qlora&batch_size=4&seq_len=2048"
    ).content.decode()
    assert 'data-testid="training-total"' in training
    assert "Llama 3.1 8B" in training and re.search(
        r'name="hidden_size"[^>]*placeholder="4096 \(from the model\)"', training
    )
    batch = client.get(
        "/planner/?estimate=batch&items=50000&window_hours=2&items_per_s=10&price_per_hour=0.8&tokens_per_item=500"
    ).content.decode()
    assert re.search(r'data-testid="workers-needed"[^>]*>1<', batch)
    # An embedding job (no output tokens) at the embedding price: 50,000 × 500 × $0.02 / 10⁶.
    assert "$1.11 on your own workers; $0.50 on the managed API." in batch


def test_batch_errors_name_the_field(client: Client) -> None:
    """The batch form's `items` field once shadowed the errors dict's items() in the template."""
    response = client.get("/planner/?estimate=batch&items=0&window_hours=abc")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Items (e.g. chunks to embed): must be greater than zero." in html
    assert "Window (hours): Enter a number." in html
    htmx = client.get(
        "/planner/?estimate=batch&items=-1&window_hours=2", headers={"HX-Request": "true"}
    )
    assert htmx.status_code == 200
    assert "Items (e.g. chunks to embed): must be greater than zero." in htmx.content.decode()


def test_headline_says_too_slow_when_only_the_speed_target_fails(client: Client) -> None:
    """Four users fit on the L4 with no overhead (7 would), but 256 tokens in 2 s need 128
    tokens/s: too slow."""
    html = client.get(
        "/planner/?estimate=serving&gpu=l4&model=llama-3.1-8b&context_tokens=8192"
        "&latency_target_ms=2000&output_tokens=256&users=4&overhead_gb=0"
    ).content.decode()
    assert re.search(r'id="max-users"[^>]*>7<', html)
    assert re.search(r'data-testid="serving-badge">too slow<', html)
    over = client.get(BASELINE + "&users=20").content.decode()
    assert re.search(r'data-testid="serving-badge">does not fit<', over)
