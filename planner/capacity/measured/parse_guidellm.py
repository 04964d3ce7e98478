"""GuideLLM's JSON report (`guidellm benchmark ... --output-path report.json`): a `benchmarks`
list, one per rate or concurrency it ran, each with `metrics` whose entries are status
distributions (`successful`, `errored`, `incomplete`, `total`), each a summary with mean, median,
std_dev, count and `percentiles` (p50, p90, p95, p99 ...). Times: `time_to_first_token_ms`,
`inter_token_latency_ms`, `time_per_output_token_ms` in ms, `request_latency` in seconds
(guidellm/benchmark/schemas/generative/metrics.py, GenerativeMetrics). The benchmark's strategy
(`concurrent` with `streams`, `constant`/`poisson` with `rate`, `synchronous`) is its
configuration.
"""

from __future__ import annotations

from typing import Any

from planner.capacity.hf.json_text import kind_of
from planner.capacity.measured.run import (
    MAX_CONCURRENCY,
    MAX_MS,
    MAX_REQUESTS,
    MAX_REQUESTS_PER_S,
    MAX_SECONDS,
    MAX_TOKENS_PER_REQUEST,
    MAX_TOKENS_PER_S,
    Distribution,
    MeasuredInputError,
    MeasuredRun,
    Reader,
)

TOOL = "guidellm"
MAX_BENCHMARKS = 1000


def is_guidellm_report(data: dict[str, Any]) -> bool:
    return "benchmarks" in data


def _successful(metrics: Reader, key: str, *, required: bool) -> Reader | None:
    status = metrics.child(key, required=required)
    if status is None:
        return None
    return status.child("successful", required=required)


def _distribution(
    metrics: Reader, key: str, *, scale: float = 1.0, required: bool = False
) -> Distribution | None:
    summary = _successful(metrics, key, required=required)
    if summary is None:
        return None
    high = MAX_MS / scale
    mean = summary.need("mean", 0, high)
    percentiles = summary.child("percentiles")
    p = percentiles.number if percentiles is not None else (lambda *_a, **_k: None)
    median = summary.number("median", 0, high)
    p50 = p("p50", 0, high)

    def ms(value: float | None) -> float | None:
        return value * scale if value is not None else None

    return Distribution(
        mean=mean * scale,
        p50=ms(median if median is not None else p50),
        p90=ms(p("p90", 0, high)),
        p95=ms(p("p95", 0, high)),
        p99=ms(p("p99", 0, high)),
        std=ms(summary.number("std_dev", 0, high)),
    )


def _strategy(bench: Reader) -> tuple[int | None, float | None]:
    """(concurrent streams, requests/s) the benchmark was configured with."""
    for parent in ("config", "args", "scheduler"):
        holder = bench.child(parent)
        strategy = holder.child("strategy") if holder is not None else None
        if strategy is None:
            continue
        kind = strategy.text("type_") or strategy.text("type")
        if kind == "synchronous":
            return 1, None
        if kind == "concurrent":
            return strategy.whole("streams", 1, MAX_CONCURRENCY, required=True), None
        if kind in {"constant", "poisson", "async"}:
            return strategy.whole("max_concurrency", 1, MAX_CONCURRENCY), strategy.number(
                "rate", 0, MAX_REQUESTS_PER_S
            )
        if kind == "throughput":
            return strategy.whole("max_concurrency", 1, MAX_CONCURRENCY), None
    return None, None


def _totals(bench: Reader, metrics: Reader) -> tuple[int | None, int]:
    for holder in (metrics, bench):
        totals = holder.child("request_totals")
        if totals is not None:
            return (
                totals.whole("successful", 0, MAX_REQUESTS),
                totals.whole("errored", 0, MAX_REQUESTS) or 0,
            )
    return None, 0


def _benchmark(data: dict[str, Any], benchmark: int) -> Reader:
    """Benchmark number `benchmark` (1-based) of the report's list, checked."""
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise MeasuredInputError(f"benchmarks: must be a list, not {kind_of(benchmarks)}")
    if not benchmarks:
        raise MeasuredInputError("benchmarks: the list is empty; the run saved no benchmark")
    if len(benchmarks) > MAX_BENCHMARKS:
        raise MeasuredInputError(
            f"benchmarks: {len(benchmarks):,} of them; at most {MAX_BENCHMARKS}"
        )
    if not 1 <= benchmark <= len(benchmarks):
        raise MeasuredInputError(
            f"the report has {len(benchmarks)} benchmark(s); choose 1 to {len(benchmarks)}",
            field="benchmark",
        )
    where = f"benchmarks[{benchmark - 1}]"
    raw = benchmarks[benchmark - 1]
    if not isinstance(raw, dict):
        raise MeasuredInputError(f"{where}: must be an object, not {kind_of(raw)}")
    return Reader(raw, f"{where}.")


def read_guidellm(data: dict[str, Any], benchmark: int = 1) -> MeasuredRun:
    """A MeasuredRun from benchmark number `benchmark` (1-based) of a GuideLLM report."""
    bench = _benchmark(data, benchmark)
    metrics = bench.child("metrics", required=True)
    assert metrics is not None
    ttft = _distribution(metrics, "time_to_first_token_ms", required=True)
    itl = _distribution(metrics, "inter_token_latency_ms")
    tpot = _distribution(metrics, "time_per_output_token_ms")
    assert ttft is not None
    notes: list[str] = []
    if itl is None:
        if tpot is None:
            raise metrics.error("inter_token_latency_ms", "missing: the report has no decode times")
        itl = tpot
        notes.append("The report has no inter-token latency: time per output token stands in.")
    successful, errored = _totals(bench, metrics)
    count = _successful(metrics, "time_to_first_token_ms", required=True)
    assert count is not None
    completed = successful if successful is not None else count.whole("count", 0, MAX_REQUESTS)
    if not completed:
        raise metrics.error(
            "request_totals", "no successful request, so there is nothing to compare"
        )
    output_rate = _successful(metrics, "output_tokens_per_second", required=True)
    request_rate = _successful(metrics, "requests_per_second", required=True)
    prompt = _successful(metrics, "prompt_token_count", required=True)
    output = _successful(metrics, "output_token_count", required=True)
    in_flight = _successful(metrics, "request_concurrency", required=False)
    assert output_rate and request_rate and prompt and output
    concurrency, rate = _strategy(bench)
    out_min = output.number("min", 0, MAX_TOKENS_PER_REQUEST)
    out_max = output.number("max", 0, MAX_TOKENS_PER_REQUEST)
    return MeasuredRun(
        tool=TOOL,
        key_set="GuideLLM report",
        completed=completed,
        failed=errored,
        ttft_ms=ttft,
        itl_ms=itl,
        tpot_ms=tpot,
        e2el_ms=_distribution(metrics, "request_latency", scale=1000.0),
        output_tokens_per_s=output_rate.need("mean", 0, MAX_TOKENS_PER_S),
        request_throughput=request_rate.need("mean", 0, MAX_REQUESTS_PER_S),
        concurrency=concurrency,
        request_rate=rate,
        mean_input_tokens=prompt.need("mean", 0, MAX_TOKENS_PER_REQUEST),
        mean_output_tokens=output.need("mean", 1, MAX_TOKENS_PER_REQUEST),
        duration_s=bench.number("duration", 0, MAX_SECONDS),
        output_tokens_min=int(out_min) if out_min is not None else None,
        output_tokens_max=int(out_max) if out_max is not None else None,
        observed_concurrency=in_flight.number("mean", 0, MAX_CONCURRENCY) if in_flight else None,
        notes=notes,
    )
