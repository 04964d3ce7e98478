"""The calculator as a newcomer reads it (issue 44): nothing posted reaches the address bar, one
user count per card, and words instead of identifiers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from planner.calculator.page import config_model_name, fitted_speed
from planner.calculator.rendering import readable_error, readable_note

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
LONG_CHAT = {
    "estimate": "serving",
    "gpu": "l40s",
    "model": "mistral-7b",
    "context_tokens": "32768",
    "users": "20",
}


def test_an_invalid_htmx_post_pushes_no_url_and_a_valid_one_only_its_inputs(
    client: Client,
) -> None:
    """The page's form posts the CSRF token and any pasted config: an invalid post leaves the
    address bar alone ("false"), a valid one pushes the canonical link only."""
    client.get(reverse("planner:calculator"))
    bad = {**LONG_CHAT, "context_tokens": "-5", "csrfmiddlewaretoken": "secret-token"}
    response = client.post(reverse("planner:calculator"), bad, headers=HTMX)
    assert response.status_code == 200
    assert response.headers["HX-Push-Url"] == "false"
    assert 'id="card-query"' not in response.content.decode()
    bad_config = {**LONG_CHAT, "config": '{"num_hidden_layers": 32,}', "csrfmiddlewaretoken": "t"}
    response = client.post(reverse("planner:calculator"), bad_config, headers=HTMX)
    assert response.headers["HX-Push-Url"] == "false"
    good = {**LONG_CHAT, "csrfmiddlewaretoken": "secret-token"}
    pushed = client.post(reverse("planner:calculator"), good, headers=HTMX).headers["HX-Push-Url"]
    assert pushed.startswith("/planner/?") and "context_tokens=32768" in pushed
    assert "csrfmiddlewaretoken" not in pushed and "secret-token" not in pushed


def test_the_decode_figures_are_for_the_users_that_fit(client: Client) -> None:
    """6 of a target of 20 fit: the sentence, the announcement and the chart speak of 6; the
    figures table keeps the engine's own decode_batch."""
    html = client.get(reverse("planner:calculator"), LONG_CHAT).content.decode()
    assert re.search(r'data-testid="max-users">6<', html)
    assert "with 6 decoding together" in html and "20 would not fit in memory" in html
    assert "Your batch of 6" in html and "Your batch of 20" not in html
    assert re.search(r"<code>decode_batch</code></th><td>20<", html)


def test_fitted_speed_reads_the_curve_at_the_users_that_fit() -> None:
    result = {
        "max_active_users": 6,
        "decode_batch": 20,
        "decode_tokens_per_s": 6.76,
        "aggregate_tokens_per_s": 135.1,
        "cost_per_million_output_tokens_usd": 3.9,
        "speed_curve": [
            {"batch": 4, "decode_tokens_per_s": 18.0, "aggregate_tokens_per_s": 72.0},
            {
                "batch": 6,
                "decode_tokens_per_s": 16.63,
                "decode_tokens_per_s_upper_bound": 21.46,
                "aggregate_tokens_per_s": 99.8,
            },
        ],
    }
    shown = fitted_speed(result)
    assert shown is not None
    assert shown["decode_batch"] == 6 and shown["asked_decode_batch"] == 20
    assert shown["decode_tokens_per_s"] == 16.63
    # The same hourly price over fewer tokens: 3.9 × 135.1 ÷ 99.8.
    assert shown["cost_per_million_output_tokens_usd"] == pytest.approx(3.9 * 135.1 / 99.8)
    fits = {**result, "decode_batch": 6}
    assert fitted_speed(fits) is fits
    assert fitted_speed({**result, "max_active_users": 0}) == {**result, "max_active_users": 0}


def test_a_json_error_says_where_after_which_key_and_what_was_expected() -> None:
    text = '{\n  "num_hidden_layers": 32,\n}'
    message = "is not JSON: Expecting property name enclosed in double quotes (line 3, column 1)"
    readable = readable_error(message, text)
    assert readable.startswith('is not valid JSON at line 3, column 1 after the key "num_hidden_')
    assert "a key in double quotes was expected" in readable
    assert readable_error("must be greater than zero.") == "must be greater than zero."


def test_the_page_names_the_field_and_the_json_error(client: Client) -> None:
    data = {**LONG_CHAT, "config": '{"num_hidden_layers": 32,}'}
    html = client.post(reverse("planner:calculator"), data, headers=HTMX).content.decode()
    assert "Model config.json: is not valid JSON at line 1, column 26" in html
    assert "Expecting property name" not in html


def test_a_pasted_config_is_called_by_its_model(client: Client) -> None:
    config = json.loads((CONFIGS / "qwen2.5-7b.json").read_text())
    config["_name_or_path"] = "Qwen/Qwen2.5-7B-Instruct"
    assert config_model_name(json.dumps(config)) == "Qwen/Qwen2.5-7B-Instruct"
    assert config_model_name(json.dumps({**config, "_name_or_path": "/models/qwen-7b/"})) == (
        "qwen-7b"
    )
    data = {**LONG_CHAT, "model": "", "config": json.dumps(config)}
    html = client.post(reverse("planner:calculator"), data, headers=HTMX).content.decode()
    assert "From your config.json: <strong>Qwen/Qwen2.5-7B-Instruct</strong>" in html
    del config["_name_or_path"]
    data["config"] = json.dumps(config)
    html = client.post(reverse("planner:calculator"), data, headers=HTMX).content.decode()
    assert "<strong>your Qwen2ForCausalLM model</strong>" in html
    assert "Qwen2ForCausalLM (config.json)</strong>" not in html


def test_words_instead_of_identifiers_and_plurals(client: Client) -> None:
    serving = client.get(reverse("planner:calculator"), LONG_CHAT).content.decode()
    assert "planner.capacity" not in serving and "the calculator&#x27;s speed model" in serving
    training = client.get(
        reverse("planner:calculator"),
        {"estimate": "training", "model": "llama-3.1-8b", "method": "lora", "gpu": "h100-sxm"},
    ).content.decode()
    assert "to train (LoRA)" in training
    batch = client.get(
        reverse("planner:calculator"),
        {"estimate": "batch", "items": "1000", "window_hours": "2", "items_per_s": "10"},
    ).content.decode()
    assert "worker(s)" not in batch.split('id="calc-result"', 1)[1].split("</section>", 1)[0]
    assert re.search(r'data-testid="workers-needed">1</strong> worker at', batch)
    assert readable_note("fixed costs in planner.capacity.speed_model") == (
        "fixed costs in the calculator's speed model"
    )
