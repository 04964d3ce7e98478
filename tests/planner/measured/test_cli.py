"""`manage.py capacity measured --result FILE`: the JSON contract, and a broken file is one line
and exit status 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from planner.capacity.measured import MAX_RESULT_BYTES
from tests.planner.measured.results import SAMPLES, text, vllm_current

ROOT = Path(__file__).resolve().parents[3]
CHAT = ("--gpu", "l40s", "--model", "llama-3.1-8b", "--context-tokens", "8192")


def run_json(*args: str) -> dict[str, object]:
    out = StringIO()
    call_command("capacity", "measured", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_json_contract_for_a_vllm_file(tmp_path: Path) -> None:
    path = tmp_path / "load-test-c16.json"
    path.write_text(text(vllm_current()))
    data = run_json("--result", str(path), *CHAT)
    measured, predicted, ratios = data["measured"], data["predicted"], data["ratios"]
    assert isinstance(measured, dict) and isinstance(predicted, dict) and isinstance(ratios, dict)
    for block in (measured, predicted):
        for key in (
            "ttft_ms",
            "itl_ms",
            "output_tokens_per_s",
            "request_throughput",
            "concurrency",
        ):
            assert key in block
    assert set(measured["ttft_ms"]) >= {"mean", "p50", "p99"}
    assert set(measured["itl_ms"]) >= {"mean", "p50", "p99"}
    assert measured["concurrency"] == predicted["concurrency"] == 16
    assert ratios["ttft_ms"] == measured["ttft_ms"]["mean"] / predicted["ttft_ms"]["mean"]
    assert ratios["itl_ms"] == measured["itl_ms"]["mean"] / predicted["itl_ms"]["mean"]
    largest = data["largest_gap"]
    assert isinstance(largest, dict) and set(largest) >= {"metric", "ratio", "likely_causes"}
    assert largest["metric"] in ratios and largest["likely_causes"]


def test_the_human_output_of_a_guidellm_sample_names_the_largest_gap_and_targets() -> None:
    out = StringIO()
    call_command(
        "capacity",
        "measured",
        "--result",
        str(SAMPLES / "chat-serving-guidellm.json"),
        *CHAT,
        "--ttft-target-ms",
        "2000",
        stdout=out,
    )
    output = out.getvalue()
    assert "Largest gap: Time to first token (ms, mean)" in output
    assert "likely: Queueing" in output
    assert "time to first token (ms) ≤ 2,000.0; measured p95 2,600.0: MISSES" in output


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"completed": 10, "mean_ttft_ms": 1', "--result: is not JSON"),
        ("[]", "--result: must be a JSON object"),
        (text(vllm_current(mean_ttft_ms=-1)), "--result: mean_ttft_ms: -1 cannot be negative"),
        ("", "--result: give the load test's result"),
    ],
)
def test_a_broken_file_raises_one_line_with_status_2(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "result.json"
    path.write_text(content)
    with pytest.raises(CommandError) as err:
        call_command("capacity", "measured", "--result", str(path), *CHAT)
    assert err.value.returncode == 2
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


def _real(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "capacity", "measured", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"completed": 10, "mean_ttft_ms": 12', "is the file cut short?"),
        ('{"completed": -4, "mean_ttft_ms": 12}', "completed: -4 cannot be negative"),
        ('"just text"', "must be a JSON object"),
        (None, "at most 4 MiB are read"),
    ],
)
def test_the_real_command_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path, content: str | None, says: str
) -> None:
    path = tmp_path / "result.json"
    if content is None:
        path.write_bytes(b" " * (MAX_RESULT_BYTES + 10))
    else:
        path.write_text(content)
    proc = _real("--result", str(path), *CHAT)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("CommandError: --result: ")
    assert says in lines[0] and "Traceback" not in proc.stderr


def test_a_missing_file_and_an_unknown_gpu_name_their_flags(tmp_path: Path) -> None:
    proc = _real("--result", str(tmp_path / "nowhere.json"), *CHAT)
    assert proc.returncode == 2 and "--result: no such file" in proc.stderr
    with pytest.raises(CommandError) as err:
        call_command(
            "capacity",
            "measured",
            "--result",
            str(SAMPLES / "chat-serving-vllm.json"),
            "--gpu",
            "warp-drive",
        )
    assert err.value.returncode == 2 and str(err.value).startswith("--gpu:")
