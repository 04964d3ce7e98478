"""`manage.py capacity paths`: the JSON contract the course's exercises rely on, exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[3]
CHAT = (
    "serving",
    "--model",
    "llama-3.1-8b",
    "--weight-precision",
    "bf16",
    "--users",
    "20",
    "--context-tokens",
    "8192",
    "--ttft-target-ms",
    "2000",
)


def run_json(*args: str) -> dict[str, object]:
    out = StringIO()
    call_command("capacity", "paths", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_json_contract_keys_and_the_chat_card_judgements() -> None:
    data = run_json(*CHAT, "--requests-per-day", "1000")
    for key in (
        "options",
        "recommended",
        "break_even_requests_per_day",
        "load_test",
        "deploy_command",
    ):
        assert key in data
    options = data["options"]
    assert isinstance(options, list)
    for option in options:
        assert {"path", "accelerator", "count", "meets", "limiter", "cost_usd"} <= set(option)
        assert option["path"] in {"cpu", "gpu", "tpu", "managed_api"}
        assert (option["limiter"] is None) == option["meets"]
    l4 = next(o for o in options if o["accelerator"] == "l4" and o["count"] == 1)
    # One L4 holds 3 users' KV caches (replicas would carry 20), but its 73 ms between tokens
    # misses the chat preset's p95 inter-token latency (50 ms).
    assert l4["meets"] is False and l4["limiter"] == "bandwidth"
    h100 = next(o for o in options if o["accelerator"] == "h100-sxm" and o["count"] == 1)
    assert h100["meets"] is True
    recommended = data["recommended"]
    assert isinstance(recommended, dict)
    assert recommended["path"] == "managed_api"
    assert {"path", "accelerator", "count"} <= set(recommended)
    assert isinstance(data["break_even_requests_per_day"], float)


def test_excluding_the_api_recommends_a_gpu_with_its_vllm_command() -> None:
    data = run_json(*CHAT, "--requests-per-day", "1000", "--exclude", "managed_api")
    recommended = data["recommended"]
    assert isinstance(recommended, dict) and recommended["path"] == "gpu"
    assert str(data["deploy_command"]).startswith(("vllm serve", "CUDA_VISIBLE_DEVICES"))
    load_test = data["load_test"]
    assert isinstance(load_test, dict)
    assert "vllm bench serve" in load_test["command"]
    assert data["break_even_requests_per_day"] is None  # no API to break even with


def test_batch_and_training_are_priced_per_run() -> None:
    batch = run_json(
        "batch",
        "--items",
        "50000",
        "--window-hours",
        "2",
        "--tokens-per-item",
        "512",
        "--output-tokens-per-item",
        "0",
        "--params-b",
        "0.335",
    )
    cpu = next(o for o in batch["options"] if o["path"] == "cpu")  # type: ignore[union-attr]
    assert cpu["meets"] is True
    assert batch["break_even_requests_per_day"] is None
    training = run_json("training", "--model", "mistral-7b", "--method", "lora", "--steps", "100")
    assert training["recommended"] is not None
    assert all(o["cost_usd"] is None or o["cost_usd"] >= 0 for o in training["options"])  # type: ignore[union-attr]


def test_options_carry_replicas_devices_capacity_and_percentiles() -> None:
    data = run_json(
        *CHAT,
        "--requests-per-day",
        "2000000",
        "--use-case",
        "chat",
        "--peak-factor",
        "3",
        "--availability",
        "n+1",
        "--prefix-hit-rate",
        "0.5",
        "--draft-tokens",
        "3",
        "--acceptance-rate",
        "0.6",
        "--exclude",
        "managed_api",
    )
    level = data["service_level"]
    assert isinstance(level, dict)
    assert (level["use_case"], level["peak_factor"], level["availability"]) == ("chat", 3, "n+1")
    assert (level["prefix_hit_rate"], level["draft_tokens"], level["acceptance_rate"]) == (
        0.5,
        3,
        0.6,
    )
    options = data["options"]
    assert isinstance(options, list)
    for option in options:
        keys = {"replicas", "devices", "capacity_requests_per_day", "ttft_ms_p95", "itl_ms_p99"}
        assert keys <= set(option)
        if option["meets"]:
            assert option["devices"] == option["count"] * (option["replicas"] + 1)
            assert option["ttft_ms_p50"] <= option["ttft_ms_p95"] <= option["ttft_ms_p99"]
            assert option["itl_ms_p50"] <= option["itl_ms_p95"] <= option["itl_ms_p99"]
            assert option["capacity_requests_per_day"] >= 2_000_000
    recommended = data["recommended"]
    assert isinstance(recommended, dict) and recommended["devices"] >= 2
    load_test = data["load_test"]
    assert isinstance(load_test, dict)
    # The chat preset's typical 512-token prompt, half of it a cached prefix.
    assert "--random-prefix-len 256 --random-input-len 256" in load_test["command"]
    assert "num_speculative_tokens" in str(data["deploy_command"])


def test_human_output_names_the_recommendation_and_the_break_even() -> None:
    out = StringIO()
    call_command("capacity", "paths", *CHAT, "--requests-per-day", "1000", stdout=out)
    text = out.getvalue()
    assert "Recommended: Managed model API" in text
    assert "Break-even:" in text
    assert "guidellm benchmark" in text
    assert (
        "Service level: chat, checked at p95 (first token ≤ 2,000 ms, between tokens ≤ 50 ms)"
        in text
    )
    assert "  --use-case: chat (Chat: p95 first token ≤ 500 ms" in text


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--users", "-3"), "--users"),
        (("--requests-per-day", "lots"), "--requests-per-day"),
        (("--peak-concurrency", "0"), "--peak-concurrency"),
        (("--exclude", "quantum"), "--exclude"),
        (("--requests-per-day", "1e400"), "--requests-per-day"),
        (("--use-case", "poetry"), "--use-case"),
        (("--percentile", "90"), "--percentile"),
        (("--peak-factor", "0.5"), "--peak-factor"),
        (("--peak-factor", "101"), "--peak-factor"),
        (("--peak-factor", "NaN"), "--peak-factor"),
        (("--availability", "n+2"), "--availability"),
        (("--prefix-hit-rate", "1"), "--prefix-hit-rate"),
        (("--prefix-hit-rate", "-0.1"), "--prefix-hit-rate"),
        (("--draft-tokens", "17"), "--draft-tokens"),
        (("--draft-tokens", "2.5"), "--draft-tokens"),
        (("--draft-tokens", "4"), "--acceptance-rate"),
        (("--draft-tokens", "4", "--acceptance-rate", "1"), "--acceptance-rate"),
        (("--acceptance-rate", "9" * 50), "--acceptance-rate"),
    ],
)
def test_bad_input_raises_one_line_naming_the_flag(args: tuple[str, ...], flag: str) -> None:
    with pytest.raises(CommandError) as err:
        call_command("capacity", "paths", *CHAT, *args)
    assert err.value.returncode == 2
    assert str(err.value).startswith(flag)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["paths", "serving", "--model", "llama-3.1-8b", "--users", "-1"], "--users"),
        (["paths", "serving", "--bogus", "1"], "--bogus"),
        (["paths", "quantum"], "invalid choice"),
        (["paths", "batch", "--items", "10"], "--window-hours"),
        (["paths", "serving", "--model", "llama-3.1-8b", "--peak-factor", "0"], "--peak-factor"),
        (["paths", "serving", "--model", "llama-3.1-8b", "--use-case", "x"], "--use-case"),
    ],
)
def test_the_real_command_exits_2_with_one_line(args: list[str], word: str) -> None:
    proc = subprocess.run(
        [sys.executable, "manage.py", "capacity", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert word in lines[0]
    assert "Traceback" not in proc.stderr


def test_config_takes_a_file_path_as_the_estimates_do(tmp_path: Path) -> None:
    """`--config PATH` reads the file (Qwen3-32B's config.json: 65.5 GB of bf16 weights, room for
    4 users of 4,096 tokens on one H100) and compares paths for it; a missing file is one line
    naming --config, exit 2."""
    config = ROOT / "tests" / "planner" / "data" / "configs" / "qwen3-32b.json"
    out = run_json("serving", "--config", str(config), "--users", "4", "--context-tokens", "4096")
    h100 = next(o for o in out["options"] if o["accelerator"] == "h100-sxm" and o["count"] == 1)
    l4 = next(o for o in out["options"] if o["accelerator"] == "l4" and o["count"] == 1)
    assert h100["meets"] and (l4["meets"], l4["limiter"]) == (False, "weights")
    with pytest.raises(CommandError) as err:
        call_command("capacity", "paths", "serving", "--config", str(tmp_path / "none.json"))
    assert err.value.returncode == 2 and str(err.value).startswith("--config: no such file")
