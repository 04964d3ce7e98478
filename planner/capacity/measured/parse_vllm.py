"""vLLM's load-test result: the JSON `vllm bench serve --save-result` writes (and the older
`benchmarks/benchmark_serving.py --save-result` of v0.4-v0.6, whose key sets differ).

The keys (vllm/benchmarks/serve.py, "benchmark" result dict and `--save-result`):
completed, failed, duration (s), max_concurrency, request_rate ("inf" when unlimited),
total_input_tokens, total_output_tokens, request_throughput (v0.4 wrote `request_inthroughput`),
output_throughput, and per metric (ttft, tpot, itl, e2el) `mean_<m>_ms`, `median_<m>_ms`,
`std_<m>_ms` and `p<percentile>_<m>_ms` for each of --metric-percentiles; with --save-detailed
the per-request `input_lens`, `output_lens`, `ttfts` (s) and `itls` (lists, s).
"""

from __future__ import annotations

from typing import Any

from planner.capacity.measured.run import (
    MAX_CONCURRENCY,
    MAX_LIST_ITEMS,
    MAX_MS,
    MAX_REQUESTS,
    MAX_REQUESTS_PER_S,
    MAX_SECONDS,
    MAX_TOKENS_PER_REQUEST,
    MAX_TOKENS_PER_S,
    MAX_TOTAL_TOKENS,
    Distribution,
    MeasuredInputError,
    MeasuredRun,
    Reader,
    checked,
)

TOOL = "vllm bench serve"


def is_vllm_result(data: dict[str, Any]) -> bool:
    return "completed" in data or "mean_ttft_ms" in data or "total_output_tokens" in data


def _distribution(r: Reader, metric: str, *, required: bool) -> Distribution | None:
    mean = r.number(f"mean_{metric}_ms", 0, MAX_MS)
    if mean is None:
        if required:
            raise r.error(
                f"mean_{metric}_ms",
                "missing; run the load test with --percentile-metrics ttft,tpot,itl",
            )
        return None
    median = r.number(f"median_{metric}_ms", 0, MAX_MS)
    return Distribution(
        mean=mean,
        p50=median if median is not None else r.number(f"p50_{metric}_ms", 0, MAX_MS),
        p90=r.number(f"p90_{metric}_ms", 0, MAX_MS),
        p95=r.number(f"p95_{metric}_ms", 0, MAX_MS),
        p99=r.number(f"p99_{metric}_ms", 0, MAX_MS),
        std=r.number(f"std_{metric}_ms", 0, MAX_MS),
    )


def _request_rate(r: Reader) -> float | None:
    value = r.data.get("request_rate")
    if value is None or (isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}):
        return None
    if isinstance(value, str):
        raise r.error("request_rate", f'must be a number or "inf", not {value[:20]!r}')
    return r.number("request_rate", 0, MAX_REQUESTS_PER_S)


def _key_set(data: dict[str, Any]) -> str:
    if "request_inthroughput" in data:
        return "vLLM benchmark_serving.py v0.4-v0.5 keys (request_inthroughput)"
    if "max_concurrency" not in data:
        return "vLLM benchmark_serving.py keys before --max-concurrency (v0.6.2 and older)"
    return "vllm bench serve keys"


def read_vllm(data: dict[str, Any]) -> MeasuredRun:
    """A MeasuredRun from a vLLM result object; MeasuredInputError names the key otherwise."""
    r = Reader(data)
    completed = r.whole("completed", 0, MAX_REQUESTS, required=True)
    assert completed is not None
    if completed == 0:
        raise r.error("completed", "0: no request completed, so there is nothing to compare")
    notes: list[str] = []
    ttft = _distribution(r, "ttft", required=True)
    tpot = _distribution(r, "tpot", required=False)
    itl = _distribution(r, "itl", required=False)
    assert ttft is not None
    if itl is None:
        if tpot is None:
            raise r.error(
                "mean_itl_ms", "missing (and no mean_tpot_ms): the file has no decode times"
            )
        itl = tpot
        notes.append("The file has no inter-token latency (older vLLM): TPOT stands in for it.")
    duration, output_rate, request_rate_measured = _rates(r, completed)
    total_in = r.need("total_input_tokens", 0, MAX_TOTAL_TOKENS)
    total_out = r.need("total_output_tokens", 1, MAX_TOTAL_TOKENS)
    output_lens = r.numbers("output_lens", 0, MAX_TOKENS_PER_REQUEST)
    r.numbers("input_lens", 0, MAX_TOKENS_PER_REQUEST)
    r.numbers("ttfts", 0, MAX_MS / 1000)
    _check_itls(r)
    lens = [int(n) for n in output_lens or [] if n > 0]
    return MeasuredRun(
        tool=TOOL,
        key_set=_key_set(data),
        completed=completed,
        failed=r.whole("failed", 0, MAX_REQUESTS) or 0,
        ttft_ms=ttft,
        itl_ms=itl,
        tpot_ms=tpot,
        e2el_ms=_distribution(r, "e2el", required=False),
        output_tokens_per_s=output_rate,
        request_throughput=request_rate_measured,
        concurrency=r.whole("max_concurrency", 1, MAX_CONCURRENCY),
        request_rate=_request_rate(r),
        mean_input_tokens=total_in / completed,
        mean_output_tokens=total_out / completed,
        duration_s=duration,
        model_id=r.text("model_id"),
        output_tokens_min=min(lens) if lens else None,
        output_tokens_max=max(lens) if lens else None,
        notes=notes,
    )


def _rates(r: Reader, completed: int) -> tuple[float | None, float, float]:
    """(duration s, output tokens/s, requests/s): the file's, else worked out from its totals."""
    key = "request_inthroughput" if r.has("request_inthroughput") else "request_throughput"
    duration = r.number("duration", 0, MAX_SECONDS)
    output_rate = r.number("output_throughput", 0, MAX_TOKENS_PER_S)
    if output_rate is None:
        if not duration:
            raise r.error("output_throughput", "missing, and no duration to work it out from")
        output_rate = r.need("total_output_tokens", 1, MAX_TOTAL_TOKENS) / duration
    requests = r.number(key, 0, MAX_REQUESTS_PER_S)
    if requests is None:
        if not duration:
            raise r.error(key, "missing, and no duration to work it out from")
        requests = completed / duration
    return duration, output_rate, requests


def _check_itls(r: Reader) -> None:
    """`itls` is a list per request of its inter-token gaps (seconds); each gap is range-checked."""
    value = r.data.get("itls")
    if value is None:
        return
    if not isinstance(value, list):
        raise r.error("itls", "must be a list of lists")
    if len(value) > MAX_LIST_ITEMS:
        raise r.error("itls", f"has {len(value):,} items; at most {MAX_LIST_ITEMS:,}")
    for i, gaps in enumerate(value):
        if not isinstance(gaps, list):
            raise r.error(f"itls[{i}]", "must be a list of seconds")
        for j, gap in enumerate(gaps):
            checked(gap, f"itls[{i}][{j}]", 0, MAX_MS / 1000)


__all__ = ["TOOL", "MeasuredInputError", "is_vllm_result", "read_vllm"]
