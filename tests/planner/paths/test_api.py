"""The JSON API: the comparison as the CLI prints it; 400 naming the field on bad input."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

CHAT = {
    "estimate": "serving",
    "model": "llama-3.1-8b",
    "weight_precision": "bf16",
    "users": "20",
    "context_tokens": "8192",
    "ttft_target_ms": "2000",
    "requests_per_day": "1000",
}


def test_the_api_and_the_cli_agree(client: Client) -> None:
    response = client.get(reverse("planner:api_paths"), CHAT)
    assert response.status_code == 200
    out = StringIO()
    args = [f"--{k.replace('_', '-')}={v}" for k, v in CHAT.items() if k != "estimate"]
    call_command("capacity", "paths", "serving", *args, "--json", stdout=out)
    assert response.json() == json.loads(out.getvalue())


def test_exclude_repeats_in_the_query(client: Client) -> None:
    response = client.get(reverse("planner:api_paths"), {**CHAT, "exclude": ["managed_api", "tpu"]})
    data = response.json()
    assert data["excluded"] == ["managed_api", "tpu"]
    assert {o["path"] for o in data["options"]} <= {"cpu", "gpu"}
    assert data["recommended"]["path"] == "gpu"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("requests_per_day", "-1"),
        ("requests_per_day", "NaN"),
        ("peak_concurrency", "99999999999"),
        ("exclude", "cloud"),
        ("users", "1.5"),
        ("model", "no-such-model"),
        ("context_tokens", "9" * 400),
        ("use_case", "poetry"),
        ("peak_factor", "0.99"),
        ("peak_factor", "Infinity"),
        ("availability", "always"),
        ("prefix_hit_rate", "1.5"),
        ("draft_tokens", "-1"),
        ("acceptance_rate", "2"),
    ],
)
def test_bad_input_is_400_naming_the_field(client: Client, field: str, value: str) -> None:
    response = client.get(reverse("planner:api_paths"), {**CHAT, field: value})
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_draft_tokens_without_an_acceptance_rate_is_400_naming_it(client: Client) -> None:
    response = client.get(reverse("planner:api_paths"), {**CHAT, "draft_tokens": "4"})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["acceptance_rate"]


def test_the_api_takes_the_service_level_as_the_cli_does(client: Client) -> None:
    query = {**CHAT, "use_case": "rag", "availability": "n+1", "peak_factor": "4"}
    data = client.get(reverse("planner:api_paths"), query).json()
    level = data["service_level"]
    assert (level["use_case"], level["availability"], level["peak_factor"]) == ("rag", "n+1", 4)
    assert level["ttft_target_ms"] == 2000 and level["itl_target_ms"] == 60  # the card's TTFT wins
    best = data["recommended"]
    assert best["path"] == "managed_api" or best["devices"] >= 2  # a failover replica


def test_an_unknown_estimate_is_400(client: Client) -> None:
    response = client.get(reverse("planner:api_paths"), {"estimate": "quantum"})
    assert response.status_code == 400
    assert "estimate" in response.json()["errors"]


def test_a_card_no_device_can_run_names_what_it_lacks(client: Client) -> None:
    """Parameters without an architecture: no path can size the KV cache, so the answer is a 400
    naming the input, not a comparison of the API alone."""
    response = client.get(
        reverse("planner:api_paths"), {"estimate": "serving", "params_b": "8", "users": "4"}
    )
    assert response.status_code == 400
    assert "kv_per_user_gb" in response.json()["errors"]
