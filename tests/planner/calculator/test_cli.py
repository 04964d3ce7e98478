"""`manage.py capacity`: human and JSON output, and bad input exiting 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[3]
# The source's baseline: 24 GB GPU, 14 GB weights, 3 GB overhead, 0.6 GB KV cache per user.
BASELINE = (
    "serving",
    "--gpu-memory-gb",
    "24",
    "--model-gb",
    "14",
    "--overhead-gb",
    "3",
    "--kv-per-user-gb",
    "0.6",
)


def run_json(*args: str) -> dict[str, object]:
    out = StringIO()
    call_command("capacity", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_serving_baseline_json_keys_and_values() -> None:
    data = run_json(*BASELINE)
    for key in (
        "weights_gb",
        "kv_bytes_per_token",
        "kv_cache_per_user_gb",
        "available_for_cache_gb",
        "max_active_users",
        "fits",
        "warnings",
        "missing_assumptions",
        "decode_tokens_per_s_upper_bound",
    ):
        assert key in data
    assert data["available_for_cache_gb"] == 7.0
    assert data["max_active_users"] == 11
    assert data["missing_assumptions"] == ["users"]


def test_serving_from_catalogue_names() -> None:
    data = run_json(
        "serving",
        "--gpu",
        "H100-SXM",
        "--model",
        "llama-3.1-8b",
        "--weight-precision",
        "bf16",
        "--kv-precision",
        "bf16",
        "--context-tokens",
        "8192",
        "--overhead-gb",
        "4",
        "--users",
        "32",
    )
    assert data["kv_bytes_per_token"] == 131_072
    assert data["gpu_memory_gb"] == 80.0
    # (80 - 16.06 - 4) GB / (131,072 × 8,192) bytes = 55.8 -> 55 users
    assert data["max_active_users"] == 55
    # 32 streams decode together: each step reads the weights once plus 32 KV caches.
    assert data["decode_batch"] == 32
    assert data["decode_tokens_per_s_upper_bound"] == pytest.approx(
        3350e9 / (16.06e9 + 32 * 131_072 * 8192), abs=0.01
    )


def test_training_json_keys() -> None:
    data = run_json(
        "training",
        "--params-b",
        "7",
        "--method",
        "full",
        "--batch-size",
        "1",
        "--seq-len",
        "1024",
        "--model",
        "mistral-7b",
        "--checkpointing",
    )
    for key in ("weights_gb", "gradients_gb", "optimizer_state_gb", "activations_gb", "total_gb"):
        assert key in data
    assert data["optimizer_state_gb"] == 84.0
    assert data["checkpointing"] is True


def test_batch_json_keys() -> None:
    data = run_json(
        "batch",
        "--items",
        "50000",
        "--window-hours",
        "2",
        "--items-per-s",
        "5",
        "--retry-margin",
        "0.2",
        "--price-per-hour",
        "0.8",
    )
    assert data["required_items_per_s"] == pytest.approx(8.3333, abs=1e-4)
    assert data["workers_needed"] == 2
    assert data["fits_window"] is True


def test_human_output_names_the_figures_and_the_warning() -> None:
    out = StringIO()
    call_command("capacity", *BASELINE, "--users", "20", stdout=out)
    text = out.getvalue()
    assert "Max active users: 11" in text
    assert "[target_users_do_not_fit]" in text
    assert "⌊7.0 GB ÷ 0.6 GB⌋ = 11" in text


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (
            ["serving", "--gpu-memory-gb", "-24", "--model-gb", "14", "--kv-per-user-gb", "1"],
            "--gpu-memory-gb",
        ),
        (
            ["serving", "--gpu-memory-gb", "lots", "--model-gb", "14", "--kv-per-user-gb", "1"],
            "--gpu-memory-gb",
        ),
        (
            ["serving", "--gpu-memory-gb", "24", "--model-gb", "14", "--kv-per-user-gb", "0"],
            "--kv-per-user-gb",
        ),
        (["serving", "--gpu", "rtx-9090", "--model-gb", "14", "--kv-per-user-gb", "1"], "--gpu"),
        (["serving", "--gpu", "l4", "--model", "gpt-7"], "--model"),
        (["serving", "--gpu-memory-gb", "24", "--model-gb", "14"], "--kv-per-user-gb"),
        (["training", "--params-b", "7", "--method", "sgd"], "--method"),
        (["batch", "--items", "0", "--window-hours", "2"], "--items"),
        (["batch", "--items", "10"], "--window-hours"),
    ],
)
def test_bad_input_is_a_command_error_naming_the_option(args: list[str], option: str) -> None:
    with pytest.raises(CommandError) as err:
        call_command("capacity", *args, stdout=StringIO())
    assert err.value.returncode == 2
    assert str(err.value).startswith(option + ":")
    assert "\n" not in str(err.value)


def test_bad_input_exits_2_with_one_line_and_no_traceback() -> None:
    """The real process: exit status 2, one line on stderr naming the option."""
    proc = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "capacity",
            "serving",
            "--gpu-memory-gb",
            "-1",
            "--model-gb",
            "14",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "--gpu-memory-gb" in lines[0]
    assert "Traceback" not in proc.stderr
    ok = subprocess.run(
        [sys.executable, "manage.py", "capacity", *BASELINE, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["max_active_users"] == 11


@pytest.mark.parametrize(
    ("args", "start"),
    [
        ([*BASELINE, "--bogus", "3"], "--bogus: unknown option"),
        ([*BASELINE, "--gpu-memroy-gb=24"], "--gpu-memroy-gb: unknown option"),
        (["serving", "--gpu-memory-gb"], "--gpu-memory-gb: expected one argument"),
        (["nope"], "unknown estimate: use serving, training, batch or paths"),
        ([], "give the estimate: serving, training, batch or paths"),
    ],
)
def test_usage_errors_are_one_line_naming_the_option(args: list[str], start: str) -> None:
    """argparse's own errors (unknown option, missing value) read like the engine's: one line, 2."""
    with pytest.raises(CommandError) as err:
        call_command("capacity", *args, stdout=StringIO())
    assert err.value.returncode == 2
    assert str(err.value).startswith(start)
    assert "\n" not in str(err.value)


def test_unknown_option_exits_2_with_one_line_and_no_usage_block() -> None:
    proc = subprocess.run(
        [sys.executable, "manage.py", "capacity", *BASELINE, "--gpu-mem-gigs", "24"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [
        "CommandError: --gpu-mem-gigs: unknown option; see `manage.py capacity <estimate> --help`"
    ]
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--tensor-parallel", "3"], "--tensor-parallel"),
        (["--gpu-memory-utilization", "1.2"], "--gpu-memory-utilization"),
        (["--vocab-size", "abc"], "--vocab-size"),
        (["--kv-precision", "int4"], "--kv-precision"),
    ],
)
def test_new_serving_options_fail_with_one_line_naming_them(extra: list[str], option: str) -> None:
    with pytest.raises(CommandError) as err:
        call_command(
            "capacity",
            "serving",
            "--gpu",
            "h100-sxm",
            "--model",
            "llama-3.1-8b",
            *extra,
            stdout=StringIO(),
        )
    assert err.value.returncode == 2
    assert str(err.value).startswith(option) and "\n" not in str(err.value)


def test_human_output_lists_overhead_parts_and_what_is_not_modelled() -> None:
    out = StringIO()
    call_command(
        "capacity",
        "serving",
        "--gpu",
        "h100-sxm",
        "--model",
        "llama-3.1-8b",
        "--context-tokens",
        "8192",
        "--users",
        "20",
        stdout=out,
    )
    text = out.getvalue()
    assert "KV cache tokens:" in text and "activation_peak:" in text
    assert "Not modelled:" in text and "Prefix caching" in text
