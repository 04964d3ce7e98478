"""vLLM's --max-num-seqs on the page, the JSON API and the CLI: it sizes the sampler rows of the
engine's start-up profile. Each expected figure is the engine's own, computed here directly."""

from __future__ import annotations

import json
import re
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from planner.capacity import ServingInputs, default_catalogue, estimate_serving

# vLLM 0.8.4 on an L40S: 256 sequences by default, 2,048 batched tokens (vllm serve).
SERVING = {
    "gpu": "l40s",
    "model": "llama-3.1-8b",
    "context_tokens": "32768",
    "engine_profile": "vllm-v1-0.8.4",
}


def serving(**given: Any) -> dict[str, Any]:
    cat = default_catalogue()
    inputs = ServingInputs(
        accelerator=cat.accelerator("l40s"),
        model=cat.model("llama-3.1-8b"),
        context_tokens=32768,
        engine_profile="vllm-v1-0.8.4",
        **given,
    )
    return estimate_serving(inputs).to_dict()


def api(data: dict[str, str]) -> tuple[int, dict[str, Any]]:
    response = Client().get(reverse("planner:api_serving"), data)
    return response.status_code, response.json()


def test_the_api_takes_max_num_seqs() -> None:
    expected = serving(max_num_seqs=1024)
    assert expected["kv_cache_tokens"] < serving()["kv_cache_tokens"]
    status, data = api({**SERVING, "max_num_seqs": "1024"})
    assert status == 200
    assert data["overhead_parts_gb"] == expected["overhead_parts_gb"]
    assert data["kv_cache_tokens"] == expected["kv_cache_tokens"]


def test_the_api_refuses_max_num_seqs_vllm_would_refuse() -> None:
    for value in ("0", "2.5", "2049"):  # 2,049 sequences > 2,048 batched tokens
        status, data = api({**SERVING, "max_num_seqs": value})
        assert status == 400 and list(data["errors"]) == ["max_num_seqs"], value


def test_the_page_takes_max_num_seqs(client: Client) -> None:
    expected = serving(max_num_seqs=1024)
    response = client.get(
        reverse("planner:calculator"),
        {"estimate": "serving", **SERVING, "max_num_seqs": "1024"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    match = re.search(r'id="max-users"[^>]*>(\d+)<', html)
    assert match is not None and int(match.group(1)) == expected["max_active_users"]
    for part in expected["overhead_parts_gb"].values():
        assert f"{part:,.2f} GB" in html
    page = client.get(reverse("planner:calculator")).content.decode()
    assert re.search(r'<input[^>]*name="max_num_seqs"', page)


def test_the_cli_takes_max_num_seqs() -> None:
    expected = serving(max_num_seqs=1024)
    out = StringIO()
    options = [f"--{k.replace('_', '-')}={v}" for k, v in SERVING.items()]
    call_command("capacity", "serving", *options, "--max-num-seqs", "1024", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["overhead_parts_gb"] == expected["overhead_parts_gb"]
    assert data["kv_cache_tokens"] == expected["kv_cache_tokens"]
