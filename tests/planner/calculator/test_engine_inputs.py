"""The engine's newer inputs on the page, the JSON API and the CLI: the serving engine profile,
activation offloading, a fused loss and 8-bit AdamW. Each expected figure is the engine's own,
computed here by calling it directly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from planner.capacity import (
    ServingInputs,
    TrainingInputs,
    default_catalogue,
    estimate_serving,
    estimate_training,
)
from planner.capacity.engine_profiles import DEFAULT_ENGINE_PROFILE, ENGINE_PROFILES
from planner.capacity.formatting import num

ROOT = Path(__file__).resolve().parents[3]
# vLLM's own accounting (no overhead given), so the engine generation decides the overhead.
SERVING = {"gpu": "h100-sxm", "model": "llama-3.1-8b", "context_tokens": "8192", "users": "8"}
TRAINING = {
    "model": "llama-3.1-8b",
    "method": "lora",
    "batch_size": "4",
    "seq_len": "4096",
    "checkpointing": "true",
    "gpu": "a100-80gb",
}
OTHER_PROFILES = [p for p in ENGINE_PROFILES if p != DEFAULT_ENGINE_PROFILE]


def serving(**given: Any) -> dict[str, Any]:
    cat = default_catalogue()
    inputs = ServingInputs(
        accelerator=cat.accelerator("h100-sxm"),
        model=cat.model("llama-3.1-8b"),
        context_tokens=8192,
        users=8,
        **given,
    )
    return estimate_serving(inputs).to_dict()


def training(**given: Any) -> dict[str, Any]:
    cat = default_catalogue()
    inputs = TrainingInputs(
        accelerator=cat.accelerator("a100-80gb"),
        model=cat.model("llama-3.1-8b"),
        method=given.pop("method", "lora"),
        batch_size=4,
        seq_len=4096,
        checkpointing=True,
        **given,
    )
    return estimate_training(inputs).to_dict()


def api(kind: str, data: dict[str, str]) -> tuple[int, dict[str, Any]]:
    response = Client().get(reverse(f"planner:api_{kind}"), data)
    return response.status_code, response.json()


def fragment(kind: str, data: dict[str, str]) -> str:
    response = Client().get(
        reverse("planner:calculator"), {"estimate": kind, **data}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    return response.content.decode()


def cli_json(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("capacity", *args, "--json", stdout=out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def options(data: dict[str, str]) -> list[str]:
    return [f"--{k.replace('_', '-')}={v}" for k, v in data.items()]


def max_users(html: str) -> int:
    match = re.search(r'id="max-users"[^>]*>(\d+)<', html)
    assert match is not None
    return int(match.group(1))


def training_total(html: str) -> str:
    match = re.search(r'id="training-total"[^>]*>([^<]+) GB<', html)
    assert match is not None
    return match.group(1)


# --- engine_profile -------------------------------------------------------------------------


@pytest.mark.parametrize("profile", OTHER_PROFILES)
def test_each_engine_profile_changes_the_api_overhead(profile: str) -> None:
    expected = serving(engine_profile=profile)
    assert expected["overhead_parts_gb"] != serving()["overhead_parts_gb"]
    status, data = api("serving", {**SERVING, "engine_profile": profile})
    assert status == 200
    assert data["overhead_parts_gb"] == expected["overhead_parts_gb"]
    assert data["max_active_users"] == expected["max_active_users"]


@pytest.mark.parametrize("profile", OTHER_PROFILES)
def test_each_engine_profile_shows_its_overhead_on_the_page(profile: str) -> None:
    expected = serving(engine_profile=profile)
    html = fragment("serving", {**SERVING, "engine_profile": profile})
    assert max_users(html) == expected["max_active_users"]
    for part in expected["overhead_parts_gb"].values():
        assert f"{part:,.2f} GB" in html
    assert f"engine_profile={profile}" in html  # kept in the share link


def test_the_engine_profile_select_lists_the_engines_registry_by_name(client: Client) -> None:
    html = client.get(reverse("planner:calculator"), SERVING).content.decode()
    select = re.search(r'<select name="engine_profile".*?</select>', html, re.S)
    assert select is not None
    values = re.findall(r'<option value="([^"]*)"', select.group(0))
    assert values == ["", *ENGINE_PROFILES]
    for profile in ENGINE_PROFILES.values():
        assert profile.name.replace(">", "&gt;") in select.group(0)


def test_an_unknown_engine_profile_is_a_400_naming_it() -> None:
    status, data = api("serving", {**SERVING, "engine_profile": "vllm-v9"})
    assert status == 400 and list(data["errors"]) == ["engine_profile"]
    assert all(p in data["errors"]["engine_profile"][0] for p in ENGINE_PROFILES)


def test_the_cli_takes_the_engine_profile() -> None:
    expected = serving(engine_profile="vllm-v0")
    data = cli_json("serving", *options(SERVING), "--engine-profile", "vllm-v0")
    assert data["overhead_parts_gb"] == expected["overhead_parts_gb"]


# --- activation_offload, fused_loss, adam_bytes 6 -------------------------------------------


TRAINING_CASES = [
    ({"activation_offload": "true"}, {"activation_offload": True}, "activations_gb"),
    ({"fused_loss": "true"}, {"fused_loss": True}, "activations_gb"),
    (
        {"method": "full", "adam_bytes": "6"},
        {"method": "full", "adam_bytes": 6},
        "optimizer_state_gb",
    ),
]


@pytest.mark.parametrize(("query", "engine", "figure"), TRAINING_CASES)
def test_each_training_input_changes_the_api_figure(
    query: dict[str, str], engine: dict[str, Any], figure: str
) -> None:
    expected = training(**engine)
    baseline = training(method=engine.get("method", "lora"))
    assert expected[figure] < baseline[figure]
    status, data = api("training", {**TRAINING, **query})
    assert status == 200
    assert data[figure] == expected[figure] and data["total_gb"] == expected["total_gb"]


@pytest.mark.parametrize(("query", "engine", "figure"), TRAINING_CASES)
def test_each_training_input_changes_the_page_total(
    query: dict[str, str], engine: dict[str, Any], figure: str
) -> None:
    expected = training(**engine)
    html = fragment("training", {**TRAINING, **query})
    assert training_total(html) == num(expected["total_gb"])
    assert training_total(fragment("training", TRAINING)) == num(training()["total_gb"])


@pytest.mark.parametrize(("query", "engine", "figure"), TRAINING_CASES)
def test_each_training_input_through_the_cli(
    query: dict[str, str], engine: dict[str, Any], figure: str
) -> None:
    expected = training(**engine)
    flags = [
        f"--{k.replace('_', '-')}" if v == "true" else f"--{k.replace('_', '-')}={v}"
        for k, v in query.items()
    ]
    data = cli_json("training", *options(TRAINING), *flags)
    assert data[figure] == expected[figure] and data["total_gb"] == expected["total_gb"]


def test_the_switches_are_checkboxes_that_stay_ticked(client: Client) -> None:
    html = client.get(
        reverse("planner:calculator"),
        {"estimate": "training", **TRAINING, "fused_loss": "true"},
    ).content.decode()
    assert re.search(
        r'type="checkbox" id="id_fused_loss" name="fused_loss" value="true" checked', html
    )
    assert re.search(r'name="activation_offload" value="true" aria', html)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("activation_offload", "maybe"),
        ("fused_loss", "2"),
        ("adam_bytes", "7"),
        ("adam_bytes", "x"),
    ],
)
def test_a_bad_training_value_is_a_400_naming_the_field(field: str, value: str) -> None:
    status, data = api("training", {**TRAINING, field: value})
    assert status == 400 and list(data["errors"]) == [field]


def test_offloading_without_checkpointing_is_a_400_naming_it() -> None:
    status, data = api(
        "training", {**TRAINING, "checkpointing": "false", "activation_offload": "true"}
    )
    assert status == 400 and list(data["errors"]) == ["activation_offload"]


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--engine-profile", "vllm-v9"], "--engine-profile"),
        (["--activation-offload=maybe"], "--activation-offload"),
        (["--fused-loss=2"], "--fused-loss"),
        (["--adam-bytes", "7"], "--adam-bytes"),
    ],
)
def test_a_bad_value_on_the_cli_exits_2_with_one_line_naming_the_option(
    argv: list[str], option: str
) -> None:
    kind, base = ("serving", SERVING) if option == "--engine-profile" else ("training", TRAINING)
    proc = subprocess.run(
        [sys.executable, "manage.py", "capacity", kind, *options(base), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


# --- the CUDA context in the training breakdown ---------------------------------------------


def test_the_cuda_context_is_in_the_api_the_page_bar_and_the_cli() -> None:
    expected = training()
    status, data = api("training", TRAINING)
    assert status == 200 and data["cuda_context_gb"] == expected["cuda_context_gb"] > 0
    html = fragment("training", TRAINING)
    context = f"{expected['cuda_context_bytes'] / 1e9:,.2f} GB"
    assert re.search(rf'CUDA context <span data-testid="legend-non-torch">{context}</span>', html)
    out = StringIO()
    call_command("capacity", "training", *options(TRAINING), stdout=out)
    assert f"  CUDA context (GB): {expected['cuda_context_gb']}" in out.getvalue()
