"""Reading load-test results: vLLM's --save-result (current and older key sets) and GuideLLM's
report, exactly; hostile files refused with one line naming what is wrong."""

from __future__ import annotations

import json

import pytest

from planner.capacity.measured import MAX_RESULT_BYTES, MeasuredInputError, read_result
from tests.planner.measured.results import sample, text, vllm_current, vllm_v04, vllm_v06


def within_1_percent(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 0.01 * abs(theirs)


def test_a_current_vllm_file_is_read_exactly() -> None:
    data = vllm_current()
    run = read_result(text(data))
    assert run.tool == "vllm bench serve"
    assert run.completed == 64 and run.failed == 0 and run.concurrency == 16
    assert run.request_rate is None  # "inf": as fast as it could
    for ours, key in (
        (run.ttft_ms.mean, "mean_ttft_ms"),
        (run.ttft_ms.p50, "median_ttft_ms"),
        (run.ttft_ms.p99, "p99_ttft_ms"),
        (run.itl_ms.mean, "mean_itl_ms"),
        (run.itl_ms.p50, "median_itl_ms"),
        (run.itl_ms.p99, "p99_itl_ms"),
        (run.output_tokens_per_s, "output_throughput"),
        (run.request_throughput, "request_throughput"),
    ):
        assert ours is not None and within_1_percent(ours, data[key]), key
    assert run.ttft_ms.p95 == data["p95_ttft_ms"]
    assert run.mean_input_tokens == 1024 and run.mean_output_tokens == 128
    assert run.output_tokens_min == run.output_tokens_max == 128
    assert run.model_id == "meta-llama/Llama-3.1-8B-Instruct"


def test_vllm_0_4_keys_request_inthroughput_and_no_itl() -> None:
    run = read_result(text(vllm_v04()))
    assert run.request_throughput == 3.84  # read from the typo'd key
    assert run.itl_ms.mean == 24.5  # TPOT stands in, and the run says so
    assert any("TPOT stands in" in n for n in run.notes)
    assert run.concurrency is None and run.request_rate == 4.0
    assert "v0.4" in run.key_set


def test_vllm_0_6_keys_without_max_concurrency() -> None:
    run = read_result(text(vllm_v06()))
    assert run.concurrency is None and run.request_rate is None
    assert run.itl_ms.mean == 60.0 and run.itl_ms.std == 20.0
    assert "before --max-concurrency" in run.key_set


def test_guidellm_report_is_read_from_its_successful_distributions() -> None:
    run = read_result(sample("chat-serving-guidellm.json"))
    vllm = read_result(sample("chat-serving-vllm.json"))
    assert run.tool == "guidellm"
    assert run.concurrency == 20 and run.completed == 200
    assert run.ttft_ms.mean == vllm.ttft_ms.mean and run.ttft_ms.p99 == vllm.ttft_ms.p99
    assert run.itl_ms.p50 == vllm.itl_ms.p50
    assert within_1_percent(run.output_tokens_per_s, vllm.output_tokens_per_s)
    assert run.e2el_ms is not None and within_1_percent(run.e2el_ms.mean, vllm.e2el_ms.mean)  # type: ignore[union-attr]
    assert run.mean_input_tokens == 4096 and run.mean_output_tokens == 256


def test_a_guidellm_sweep_is_read_one_benchmark_at_a_time() -> None:
    report = json.loads(sample("chat-serving-guidellm.json"))
    second = json.loads(json.dumps(report["benchmarks"][0]))
    second["args"]["strategy"] = {"type_": "constant", "rate": 2.5}
    second["metrics"]["time_to_first_token_ms"]["successful"]["mean"] = 99.0
    report["benchmarks"].append(second)
    run = read_result(json.dumps(report), benchmark=2)
    assert run.ttft_ms.mean == 99.0 and run.request_rate == 2.5 and run.concurrency is None
    with pytest.raises(MeasuredInputError) as err:
        read_result(json.dumps(report), benchmark=3)
    assert err.value.field == "benchmark" and "choose 1 to 2" in err.value.message


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"completed": 10, "mean_ttft_ms": 12.5', "is the file cut short?"),
        ("[1, 2, 3]", "must be a JSON object"),
        ('"a string"', "must be a JSON object"),
        ("", "is empty"),
        ('{"hello": 1}', "neither a vllm bench serve"),
        ("\xff\xfe{}", None),
        (text(vllm_current(mean_ttft_ms=-5.0)), "mean_ttft_ms: -5 cannot be negative"),
        (text(vllm_current(completed=-1)), "completed: -1 cannot be negative"),
        (text(vllm_current(completed=0)), "no request completed"),
        (text(vllm_current(completed=2.5)), "completed: must be a whole number"),
        (text(vllm_current(mean_itl_ms="fast")), "mean_itl_ms: must be a number, not a string"),
        (text(vllm_current(mean_ttft_ms=True)), "mean_ttft_ms: must be a number, not true/false"),
        (text(vllm_current(mean_ttft_ms=1e12)), "out of any physical range"),
        (text(vllm_current(max_concurrency=0)), "max_concurrency: 0 is below 1"),
        (text(vllm_current(request_rate="soon")), 'request_rate: must be a number or "inf"'),
        (text(vllm_current(output_lens=[128, -3])), "output_lens[1]: -3 cannot be negative"),
        (text(vllm_current(itls=[[0.02, "x"]])), "itls[0][1]: must be a number"),
        ('{"completed": 5, "mean_ttft_ms": NaN}', "NaN"),
        ('{"completed": 5, "mean_ttft_ms": Infinity}', "Infinity"),
        ('{"completed": 5, "completed": 6}', "appears twice"),
        ("[" * 100 + "]" * 100, "nests deeper"),
        ('{"benchmarks": []}', "the list is empty"),
        ('{"benchmarks": [3]}', "benchmarks[0]: must be an object"),
        ('{"benchmarks": [{"metrics": {}}]}', "time_to_first_token_ms: missing"),
    ],
)
def test_a_hostile_file_is_one_error_naming_what_is_wrong(content: str, says: str | None) -> None:
    with pytest.raises(MeasuredInputError) as err:
        read_result(content.encode("latin-1") if says is None else content)
    message = str(err.value)
    assert message.startswith("result: ") and "\n" not in message
    if says is not None:
        assert says in message


def test_a_missing_ttft_says_how_to_run_the_load_test() -> None:
    data = vllm_current()
    del data["mean_ttft_ms"]
    with pytest.raises(MeasuredInputError, match="--percentile-metrics ttft,tpot,itl"):
        read_result(text(data))


def test_an_oversized_file_is_refused_before_it_is_parsed() -> None:
    huge = '{"completed": 1, "pad": "' + "x" * MAX_RESULT_BYTES + '"}'
    with pytest.raises(MeasuredInputError, match="at most 4,194,304 are read"):
        read_result(huge)


def test_a_newer_guidellm_report_keeps_its_strategy_in_config_and_totals_in_metrics() -> None:
    """GuideLLM 0.4+: `config.strategy`, `metrics.request_totals`, `scheduler_metrics`."""
    report = json.loads(sample("chat-serving-guidellm.json"))
    bench = report["benchmarks"][0]
    args = bench.pop("args")
    totals = bench.pop("request_totals")
    bench.pop("duration")
    bench["config"] = {"run_id": "r", "run_index": 0, "strategy": args["strategy"]}
    bench["metrics"]["request_totals"] = {**totals, "errored": 2}
    bench["scheduler_metrics"] = {"requests_made": totals}
    run = read_result(json.dumps({"metadata": {"version": "0.4.0"}, "benchmarks": [bench]}))
    assert run.concurrency == 20 and run.failed == 2 and run.duration_s is None
    assert run.completed == 200
