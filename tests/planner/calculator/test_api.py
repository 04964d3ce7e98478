"""The JSON API: same keys and numbers as the CLI; 400 with field errors on bad input."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

CASES = [
    (
        "serving",
        {
            "gpu_memory_gb": "24",
            "model_gb": "14",
            "overhead_gb": "3",
            "kv_per_user_gb": "0.6",
            "users": "20",
        },
    ),
    (
        "serving",
        {
            "gpu": "l4",
            "model": "qwen2.5-7b",
            "context_tokens": "32768",
            "users": "4",
            "min_decode_tokens_per_s": "30",
        },
    ),
    (
        "serving",
        {
            "gpu": "a100-80gb",
            "model": "llama-3.1-70b",
            "weight_precision": "bf16",
            "overhead_gb": "3",
            "users": "1",
        },
    ),
    (
        "serving",
        {
            "gpu": "h100-sxm:3g.40gb",
            "params_b": "7",
            "weight_precision": "fp8",
            "layers": "32",
            "kv_heads": "8",
            "head_dim": "128",
            "kv_precision": "fp8",
            "context_tokens": "16384",
            "overhead_gb": "2.5",
        },
    ),
    (
        "serving",
        {
            "gpu": "l4",
            "model": "llama-3.1-8b",
            "context_tokens": "8192",
            "latency_target_ms": "2000",
            "output_tokens": "256",
        },
    ),
    (
        "training",
        {
            "model": "llama-3.1-8b",
            "method": "qlora",
            "lora_rank": "64",
            "batch_size": "4",
            "seq_len": "4096",
            "checkpointing": "true",
            "gpu": "l40s",
            "steps": "500",
        },
    ),
    ("training", {"params_b": "70", "method": "full"}),
    (
        "batch",
        {
            "items": "50000",
            "window_hours": "2",
            "items_per_s": "5",
            "retry_margin": "0.2",
            "price_per_hour": "0.8",
        },
    ),
    ("batch", {"items": "1000000", "window_hours": "1.5", "items_per_s": "40", "workers": "3"}),
    (
        "batch",
        {
            "items": "50000",
            "window_hours": "2",
            "items_per_s": "10",
            "price_per_hour": "0.8",
            "tokens_per_item": "500",
            "output_tokens_per_item": "100",
        },
    ),
]


def cli_args(kind: str, params: dict[str, str]) -> list[str]:
    args = [kind]
    for key, value in params.items():
        if key == "checkpointing":
            args.append("--checkpointing" if value == "true" else "--no-checkpointing")
        else:
            args += ["--" + key.replace("_", "-"), value]
    return args


@pytest.mark.parametrize(("kind", "params"), CASES)
def test_cli_and_api_give_the_same_numbers(
    client: Client, kind: str, params: dict[str, str]
) -> None:
    response = client.get(reverse(f"planner:api_{kind}"), params)
    assert response.status_code == 200
    out = StringIO()
    call_command("capacity", *cli_args(kind, params), "--json", stdout=out)
    assert response.json() == json.loads(out.getvalue())


def test_api_baseline(client: Client) -> None:
    data = client.get(reverse("planner:api_serving"), CASES[0][1]).json()
    assert (data["available_for_cache_gb"], data["max_active_users"], data["fits"]) == (
        7.0,
        11,
        False,
    )
    assert data["warnings"][0]["code"] == "target_users_do_not_fit"


@pytest.mark.parametrize(
    ("kind", "params", "field"),
    [
        (
            "serving",
            {"gpu_memory_gb": "-24", "model_gb": "14", "kv_per_user_gb": "1"},
            "gpu_memory_gb",
        ),
        (
            "serving",
            {"gpu_memory_gb": "x", "model_gb": "14", "kv_per_user_gb": "1"},
            "gpu_memory_gb",
        ),
        ("serving", {"gpu": "nope", "model_gb": "14", "kv_per_user_gb": "1"}, "gpu"),
        ("serving", {"gpu_memory_gb": "24", "model_gb": "14"}, "kv_per_user_gb"),
        (
            "serving",
            {
                "gpu_memory_gb": "24",
                "model_gb": "14",
                "kv_per_user_gb": "1",
                "weight_precision": "int2",
            },
            "weight_precision",
        ),
        ("training", {"params_b": "0"}, "params_b"),
        ("training", {"params_b": "7", "method": "lora"}, "model"),
        ("batch", {"items": "10", "window_hours": "-1"}, "window_hours"),
    ],
)
def test_bad_input_is_400_with_field_errors(
    client: Client, kind: str, params: dict[str, str], field: str
) -> None:
    response = client.get(reverse(f"planner:api_{kind}"), params)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert field in errors and errors[field][0]


def test_api_answers_get_and_post_only(client: Client) -> None:
    """POST carries what is too long for a query (a config.json); other methods are refused."""
    url = reverse("planner:api_serving")
    assert client.put(url, {}).status_code == 405
    assert client.delete(url).status_code == 405
    baseline = {
        "gpu_memory_gb": "24",
        "model_gb": "14",
        "overhead_gb": "3",
        "kv_per_user_gb": "0.6",
    }
    posted = client.post(url, baseline)
    got = client.get(url, baseline)
    assert posted.status_code == got.status_code == 200
    assert posted.json() == got.json()


def test_serving_reports_the_engines_accounting_keys(client: Client) -> None:
    """No overhead given: the pool in tokens, whole requests, the overhead's parts, the notes."""
    data = client.get(
        reverse("planner:api_serving"),
        {
            "gpu": "h100-sxm",
            "model": "llama-3.1-70b",
            "weight_precision": "bf16",
            "tensor_parallel": "4",
            "gpu_memory_utilization": "0.95",
            "context_tokens": "8192",
            "users": "20",
            "decode_batch": "8",
            "prompt_tokens": "2000",
        },
    ).json()
    assert data["tensor_parallel"] == 4 and data["gpu_memory_utilization"] == 0.95
    assert data["kv_cache_tokens"] > 0 and data["fits"] is True
    assert data["max_active_users"] == data["kv_cache_tokens"] // 8192
    assert set(data["overhead_parts_gb"]) == {
        "utilization_headroom",
        "activation_peak",
        "non_torch",
    }
    assert data["decode_batch"] == 8 and data["time_to_first_token_ms"] > 0
    assert data["not_modelled"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"tensor_parallel": "3"}, "tensor_parallel"),
        ({"tensor_parallel": "65"}, "tensor_parallel"),
        ({"gpu_memory_utilization": "1.5"}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": "0"}, "gpu_memory_utilization"),
        ({"vocab_size": "2.5"}, "vocab_size"),
        ({"hidden_size": "1e99"}, "hidden_size"),
        ({"decode_batch": "-1"}, "decode_batch"),
        ({"kv_precision": "int4"}, "kv_precision"),
    ],
)
def test_new_serving_inputs_are_bounded_and_named(
    client: Client, params: dict[str, str], field: str
) -> None:
    response = client.get(
        reverse("planner:api_serving"),
        {"gpu": "h100-sxm", "model": "llama-3.1-8b", **params},
    )
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_absurd_batch_rates_are_refused(client: Client) -> None:
    """1e-30 items/s once sized a pool of 10^31 workers; now it names the field."""
    response = client.get(
        reverse("planner:api_batch"), {"items": "10", "window_hours": "1", "items_per_s": "1e-30"}
    )
    assert response.status_code == 400
    assert "items_per_s" in response.json()["errors"]
