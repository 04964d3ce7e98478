"""Likely causes of a gap between a load test and its prediction, read from the file, each in
plain words with the figures that show it.

Thresholds chosen by the course, each tied to the symptom it reads: a p99 first token 3x its
median is queueing, not prefill (prefill time grows with the prompt, which the random dataset
keeps fixed); a first token under half of one prompt's prefill cost means the prompt was not
computed (prefix caching: aiconfigurator issue #1070, "TTFT 4-6x off", a load test that reused
its prompts); fewer than 80 % of the planned requests in flight is a smaller batch than planned;
outputs whose shortest is under 90 % of the longest ended early.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from planner.capacity.measured.predict import Prediction, request_seconds, whole_tokens
from planner.capacity.measured.run import MeasuredRun

QUEUEING_P99_OVER_P50: Final = 3.0
PREFIX_CACHE_SHARE: Final = 0.5
SMALLER_BATCH_SHARE: Final = 0.8
EARLY_STOP_SHARE: Final = 0.9
METRICS: Final = ("ttft_ms", "itl_ms", "output_tokens_per_s")


@dataclass(frozen=True, slots=True)
class Cause:
    code: str
    text: str
    metrics: tuple[str, ...]  # the gaps it can explain


def in_flight(run: MeasuredRun) -> float | None:
    """Requests in flight on average: the tool's own figure, else Little's law over the file."""
    if run.observed_concurrency is not None:
        return run.observed_concurrency
    if run.e2el_ms is not None:
        return run.request_throughput * run.e2el_ms.mean / 1000
    seconds = request_seconds(
        run.ttft_ms.mean, run.itl_ms.mean, whole_tokens(run.mean_output_tokens)
    )
    return run.request_throughput * seconds


def _queueing(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    ttft = run.ttft_ms
    if not (ttft.p50 and ttft.p99 and ttft.p99 >= QUEUEING_P99_OVER_P50 * ttft.p50):
        return None
    return Cause(
        "queueing",
        f"Queueing: the p99 first token ({ttft.p99:,.0f} ms) is {ttft.p99 / ttft.p50:.1f}× "
        f"the median ({ttft.p50:,.0f} ms), so some requests waited behind others' prompts "
        "or for a free slot. Lower the concurrency or rate, or add a replica.",
        ("ttft_ms",),
    )


def _prefix_caching(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    prefill = predicted.prefill_ms
    if not prefill or run.ttft_ms.mean >= PREFIX_CACHE_SHARE * prefill:
        return None
    return Cause(
        "prefix_caching",
        f"Prefix caching (or shorter prompts than the file says): the first token came in "
        f"{run.ttft_ms.mean:,.0f} ms on average, under half of one prompt's prefill "
        f"({prefill:,.0f} ms), so most prompts were not computed. Run with "
        "prompts that do not repeat (--dataset-name random) to measure prefill.",
        ("ttft_ms",),
    )


def _kv_pressure(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    if predicted.concurrency <= predicted.kv_slots:
        return None
    return Cause(
        "kv_pressure",
        f"KV-cache pressure: the run kept {predicted.concurrency} requests in flight, but "
        f"the KV pool holds about {predicted.kv_slots} at these lengths; the engine "
        "preempts and recomputes requests, so throughput plateaus below the plan.",
        ("output_tokens_per_s", "itl_ms", "ttft_ms"),
    )


def _smaller_batch(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    flying = in_flight(run)
    if flying is None or flying >= SMALLER_BATCH_SHARE * predicted.concurrency:
        return None
    return Cause(
        "smaller_batch",
        f"A smaller batch than planned: about {flying:,.1f} requests were in flight on "
        f"average, not {predicted.concurrency} (too few prompts, a client limit or a rate "
        "below the capacity), so tokens came faster and throughput was lower.",
        ("output_tokens_per_s", "itl_ms"),
    )


def _outputs_ended_early(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    low, high = run.output_tokens_min, run.output_tokens_max
    if low is None or not high or low >= EARLY_STOP_SHARE * high:
        return None
    return Cause(
        "outputs_ended_early",
        f"Outputs ended early: they ran from {low} to {high} tokens, so the run was not the "
        "planned one (add --ignore-eos so every output is as long as planned).",
        ("output_tokens_per_s",),
    )


def _failed_requests(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    if not run.failed:
        return None
    return Cause(
        "failed_requests",
        f"{run.failed} request(s) failed; the figures count only the {run.completed} that "
        "completed.",
        METRICS,
    )


def _engine_version(run: MeasuredRun, predicted: Prediction) -> Cause | None:
    if not run.key_set.startswith("vLLM benchmark_serving.py"):
        return None
    return Cause(
        "engine_version",
        f"A different engine version: the file has the {run.key_set}, older than the "
        "vLLM runs the speed model is calibrated on.",
        METRICS,
    )


READINGS: Final = (
    _queueing,
    _prefix_caching,
    _kv_pressure,
    _smaller_batch,
    _outputs_ended_early,
    _failed_requests,
    _engine_version,
)


def likely_causes(run: MeasuredRun, predicted: Prediction) -> list[Cause]:
    """What the file shows, each in plain words with the figures that show it."""
    return [c for reading in READINGS if (c := reading(run, predicted)) is not None]
