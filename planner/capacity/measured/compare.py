"""Measured beside predicted: the run's configuration drives the engine's prediction for the same
run, then each metric's ratio (measured ÷ predicted), the largest gap first, and its likely causes
in plain words from what the file shows.

The prediction of a load test (vllm bench serve, guidellm): N requests in flight (--max-concurrency
or GuideLLM's streams) decode together, each with the file's mean prompt and output lengths. A
closed loop (no request rate) replaces each request as it finishes, so new requests arrive at
N ÷ (request time) a second (Little's law, L = λW; Little 1961), and their prefills take the GPUs'
time as the engine's arrivals model says; a fixed rate arrives at that rate, capped by the same
capacity. Request time = first token + (output tokens − 1) × time per output token; output
throughput = requests a second × output tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Final

from planner.capacity.measured.run import Distribution, MeasuredRun
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.units import CapacityInputError

# When to name a cause. Thresholds chosen by the course, each tied to the symptom it reads:
# a p99 first token 3x its median is queueing, not prefill (prefill time grows with the prompt,
# which the random dataset keeps fixed); a first token under half of one prompt's prefill cost
# means the prompt was not computed (prefix caching: aiconfigurator issue #1070, "TTFT 4-6x off",
# a load test that reused its prompts); fewer than 80 % of the planned requests in flight is a
# smaller batch than planned; outputs whose shortest is under 90 % of the longest ended early.
QUEUEING_P99_OVER_P50: Final = 3.0
PREFIX_CACHE_SHARE: Final = 0.5
SMALLER_BATCH_SHARE: Final = 0.8
EARLY_STOP_SHARE: Final = 0.9
# A gap beyond this factor with no other cause read from the file points at the engine or its
# settings (the speed model's goal is ±25 % on decode and 2x on the first token: docs/speed-model.md).
ENGINE_GAP: Final = 1.5
LITTLE_PASSES: Final = 3  # requests in flight at a fixed rate settle within a few passes
BISECTION_STEPS: Final = 30  # the closed loop's arrival rate to about 1 part in 10^9

METRICS: Final = ("ttft_ms", "itl_ms", "output_tokens_per_s")
LABELS: Final = {
    "ttft_ms": "Time to first token (ms, mean)",
    "itl_ms": "Time between tokens (ms, mean)",
    "output_tokens_per_s": "Output throughput (tokens/s)",
}


@dataclass(frozen=True, slots=True)
class Prediction:
    """The engine's figures for the same run (means: the engine predicts no percentiles)."""

    ttft_ms: float
    itl_ms: float
    output_tokens_per_s: float
    request_throughput: float
    concurrency: int
    prompt_tokens: int
    output_tokens: int
    request_rate: float | None
    arrival_rate_per_s: float
    prefill_ms: float | None  # one prompt's first token with nothing ahead of it
    kv_slots: int  # requests the KV pool holds at once at these lengths
    estimate: ServingEstimate

    def to_dict(self) -> dict[str, Any]:
        return {
            "ttft_ms": {"mean": self.ttft_ms},
            "itl_ms": {"mean": self.itl_ms},
            "output_tokens_per_s": self.output_tokens_per_s,
            "request_throughput": self.request_throughput,
            "concurrency": self.concurrency,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "request_rate": self.request_rate,
            "arrival_rate_per_s": self.arrival_rate_per_s,
            "prefill_ms": self.prefill_ms,
            "kv_slots": self.kv_slots,
            "accelerator": self.estimate.accelerator_id,
            "model": self.estimate.model_id,
            "tensor_parallel": self.estimate.tensor_parallel,
        }


@dataclass(frozen=True, slots=True)
class Cause:
    code: str
    text: str
    metrics: tuple[str, ...]  # the gaps it can explain


@dataclass(frozen=True, slots=True)
class Gap:
    metric: str
    measured: float
    predicted: float
    ratio: float
    optimistic: bool  # the engine promised better than the run got
    likely_causes: tuple[str, ...]

    @property
    def size(self) -> float:
        return abs(math.log(self.ratio)) if self.ratio > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": LABELS[self.metric],
            "measured": self.measured,
            "predicted": self.predicted,
            "ratio": self.ratio,
            "optimistic": self.optimistic,
            "likely_causes": list(self.likely_causes),
        }


@dataclass(frozen=True, slots=True)
class TargetCheck:
    target: str
    limit: float
    measured: float
    statistic: str  # "p95", "p99" or "mean": the file's figure compared
    meets: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "limit": self.limit,
            "measured": self.measured,
            "statistic": self.statistic,
            "meets": self.meets,
        }


@dataclass(frozen=True, slots=True)
class MeasuredComparison:
    run: MeasuredRun
    predicted: Prediction
    gaps: list[Gap]
    causes: list[Cause]
    targets: list[TargetCheck] = field(default_factory=list)

    @property
    def ratios(self) -> dict[str, float | None]:
        by_metric = {g.metric: g.ratio for g in self.gaps}
        return {m: by_metric.get(m) for m in METRICS}

    @property
    def largest_gap(self) -> Gap | None:
        return self.gaps[0] if self.gaps else None

    @property
    def targets_missed(self) -> list[TargetCheck]:
        return [t for t in self.targets if not t.meets]

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the CLI (`capacity measured --json`) and the API; the keys are a contract."""
        gap = self.largest_gap
        return {
            "measured": self.run.to_dict(),
            "predicted": self.predicted.to_dict(),
            "ratios": self.ratios,
            "largest_gap": (
                {
                    "metric": gap.metric,
                    "ratio": gap.ratio,
                    "optimistic": gap.optimistic,
                    "likely_causes": list(gap.likely_causes),
                }
                if gap
                else None
            ),
            "gaps": [g.to_dict() for g in self.gaps],
            "causes": [{"code": c.code, "text": c.text} for c in self.causes],
            "targets": [t.to_dict() for t in self.targets],
            "notes": list(self.run.notes),
            "warnings": [w.to_dict() for w in self.predicted.estimate.warnings],
            "assumptions": [a.to_dict() for a in self.predicted.estimate.assumptions],
        }


def _whole(value: float) -> int:
    return max(1, round(value))


def run_inputs(
    run: MeasuredRun, base: ServingInputs, *, users: int, arrivals: float | None
) -> ServingInputs:
    """The base inputs (model, GPU, TP, precisions) with the run's lengths and load."""
    return replace(
        base,
        prompt_tokens=_whole(run.mean_input_tokens),
        output_tokens=_whole(run.mean_output_tokens),
        users=users,
        decode_batch=users,
        arrival_rate_per_s=Decimal(repr(arrivals)) if arrivals else None,
        burst_arrivals=None,
    )


def _speed(estimate: ServingEstimate) -> tuple[float, float]:
    """(first token ms, ms per output token) of an estimate; an error names what is missing."""
    if estimate.decode_tokens_per_s is None or estimate.time_to_first_token_ms is None:
        errors = [w.message for w in estimate.warnings if w.severity == "error"]
        raise CapacityInputError(
            "gpu",
            "the engine cannot predict this run's speed: "
            + (
                errors[0]
                if errors
                else "give the GPU and the model (or their bandwidth, TFLOPS and parameters)"
            ),
        )
    return estimate.time_to_first_token_ms, 1000 / estimate.decode_tokens_per_s


def _request_seconds(ttft_ms: float, itl_ms: float, output_tokens: int) -> float:
    return (ttft_ms + (output_tokens - 1) * itl_ms) / 1000


def _closed_loop(run: MeasuredRun, base: ServingInputs, users: int) -> ServingEstimate:
    """`users` clients, each sending its next request when one ends: the arrival rate λ solves
    λ = users ÷ request time(λ); bisection between no arrivals and the rate whose prefills
    would fill the GPUs' time (as bench/serving_speed.py runs published closed loops)."""
    output_tokens = _whole(run.mean_output_tokens)
    best = estimate_serving(run_inputs(run, base, users=users, arrivals=None))
    _speed(best)
    low, high = 0.0, None
    for _ in range(BISECTION_STEPS):
        rate = (low + high) / 2 if high is not None else max(2 * low, 0.01)
        trial = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
        if trial.decode_tokens_per_s is None or trial.time_to_first_token_ms is None:
            high = rate
            continue
        seconds = _request_seconds(*_speed(trial), output_tokens)
        if rate < users / seconds:
            low, best = rate, trial
        else:
            high = rate
    return best


def _at_rate(run: MeasuredRun, base: ServingInputs, rate: float) -> tuple[int, ServingEstimate]:
    """A fixed arrival rate with no concurrency limit: requests in flight = rate × request time
    (Little's law), found by a few passes."""
    output_tokens = _whole(run.mean_output_tokens)
    users = 1
    estimate = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
    for _ in range(LITTLE_PASSES):
        seconds = _request_seconds(*_speed(estimate), output_tokens)
        users = max(1, math.ceil(rate * seconds))
        estimate = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
    return users, estimate


def _silent_concurrency(run: MeasuredRun, base: ServingInputs) -> int:
    if run.observed_concurrency:
        return max(1, round(run.observed_concurrency))
    if base.users:
        return int(base.users)
    return run.completed


def predict_run(run: MeasuredRun, base: ServingInputs) -> Prediction:
    """The engine's prediction for the run the file describes (see the module's docstring)."""
    rate = run.request_rate
    output_tokens = _whole(run.mean_output_tokens)
    if run.concurrency is None and rate is not None:
        users, estimate = _at_rate(run, base, rate)
    else:
        # No limit and no rate: what the tool saw in flight, else the caller's users; else the
        # tool sent every prompt at once, each finished one's slot going to the next.
        users = run.concurrency or _silent_concurrency(run, base)
        estimate = _closed_loop(run, base, users)
        if rate is not None:
            seconds = _request_seconds(*_speed(estimate), output_tokens)
            if rate < users / seconds:
                estimate = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
    ttft_ms, itl_ms = _speed(estimate)
    seconds = _request_seconds(ttft_ms, itl_ms, output_tokens)
    capacity = users / seconds
    request_rate = capacity if rate is None else min(rate, capacity)
    alone = estimate_serving(run_inputs(run, base, users=1, arrivals=None))
    prompt = _whole(run.mean_input_tokens)
    kv_tokens = estimate.kv_cache_tokens
    slots = (
        max(estimate.max_active_users, kv_tokens // (prompt + output_tokens))
        if kv_tokens
        else estimate.max_active_users
    )
    return Prediction(
        ttft_ms=ttft_ms,
        itl_ms=itl_ms,
        output_tokens_per_s=request_rate * output_tokens,
        request_throughput=request_rate,
        concurrency=users,
        prompt_tokens=prompt,
        output_tokens=output_tokens,
        request_rate=rate,
        arrival_rate_per_s=request_rate,
        prefill_ms=alone.time_to_first_token_ms,
        kv_slots=slots,
        estimate=estimate,
    )


def ratio(measured: float, predicted: float) -> float | None:
    """measured ÷ predicted; None when the prediction is zero."""
    return measured / predicted if predicted > 0 else None


def in_flight(run: MeasuredRun) -> float | None:
    """Requests in flight on average: the tool's own figure, else Little's law over the file."""
    if run.observed_concurrency is not None:
        return run.observed_concurrency
    if run.e2el_ms is not None:
        return run.request_throughput * run.e2el_ms.mean / 1000
    seconds = _request_seconds(run.ttft_ms.mean, run.itl_ms.mean, _whole(run.mean_output_tokens))
    return run.request_throughput * seconds


def likely_causes(run: MeasuredRun, predicted: Prediction) -> list[Cause]:
    """What the file shows, each in plain words with the figures that show it."""
    causes: list[Cause] = []
    ttft = run.ttft_ms
    if ttft.p50 and ttft.p99 and ttft.p99 >= QUEUEING_P99_OVER_P50 * ttft.p50:
        causes.append(
            Cause(
                "queueing",
                f"Queueing: the p99 first token ({ttft.p99:,.0f} ms) is {ttft.p99 / ttft.p50:.1f}× "
                f"the median ({ttft.p50:,.0f} ms), so some requests waited behind others' prompts "
                "or for a free slot. Lower the concurrency or rate, or add a replica.",
                ("ttft_ms",),
            )
        )
    if predicted.prefill_ms and ttft.mean < PREFIX_CACHE_SHARE * predicted.prefill_ms:
        causes.append(
            Cause(
                "prefix_caching",
                f"Prefix caching (or shorter prompts than the file says): the first token came in "
                f"{ttft.mean:,.0f} ms on average, under half of one prompt's prefill "
                f"({predicted.prefill_ms:,.0f} ms), so most prompts were not computed. Run with "
                "prompts that do not repeat (--dataset-name random) to measure prefill.",
                ("ttft_ms",),
            )
        )
    if predicted.concurrency > predicted.kv_slots:
        causes.append(
            Cause(
                "kv_pressure",
                f"KV-cache pressure: the run kept {predicted.concurrency} requests in flight, but "
                f"the KV pool holds about {predicted.kv_slots} at these lengths; the engine "
                "preempts and recomputes requests, so throughput plateaus below the plan.",
                ("output_tokens_per_s", "itl_ms", "ttft_ms"),
            )
        )
    flying = in_flight(run)
    if flying is not None and flying < SMALLER_BATCH_SHARE * predicted.concurrency:
        causes.append(
            Cause(
                "smaller_batch",
                f"A smaller batch than planned: about {flying:,.1f} requests were in flight on "
                f"average, not {predicted.concurrency} (too few prompts, a client limit or a rate "
                "below the capacity), so tokens came faster and throughput was lower.",
                ("output_tokens_per_s", "itl_ms"),
            )
        )
    low, high = run.output_tokens_min, run.output_tokens_max
    if low is not None and high and low < EARLY_STOP_SHARE * high:
        causes.append(
            Cause(
                "outputs_ended_early",
                f"Outputs ended early: they ran from {low} to {high} tokens, so the run was not the "
                "planned one (add --ignore-eos so every output is as long as planned).",
                ("output_tokens_per_s",),
            )
        )
    if run.failed:
        causes.append(
            Cause(
                "failed_requests",
                f"{run.failed} request(s) failed; the figures count only the {run.completed} that "
                "completed.",
                METRICS,
            )
        )
    if run.key_set.startswith("vLLM benchmark_serving.py"):
        causes.append(
            Cause(
                "engine_version",
                f"A different engine version: the file has the {run.key_set}, older than the "
                "vLLM runs the speed model is calibrated on.",
                METRICS,
            )
        )
    return causes


WITHIN: Final = (
    "Within the speed model's usual error (decode ±25 %, first token 2×): nothing in the file "
    "needs explaining."
)


def _engine_fallback(gap: Gap) -> str:
    side = "slower" if gap.optimistic else "faster"
    return (
        f"Nothing in the file explains it: the run was {side} than the speed model predicts. A "
        "different engine version or settings (CUDA graphs, chunked prefill, the attention "
        "backend) or another GPU clock than the model's calibration are the usual causes."
    )


def _gaps(run: MeasuredRun, predicted: Prediction, causes: list[Cause]) -> list[Gap]:
    pairs = {
        "ttft_ms": (run.ttft_ms.mean, predicted.ttft_ms),
        "itl_ms": (run.itl_ms.mean, predicted.itl_ms),
        "output_tokens_per_s": (run.output_tokens_per_s, predicted.output_tokens_per_s),
    }
    gaps = []
    for metric, (measured, pred) in pairs.items():
        r = ratio(measured, pred)
        if r is None:
            continue
        optimistic = r < 1 if metric == "output_tokens_per_s" else r > 1
        texts = tuple(c.text for c in causes if metric in c.metrics)
        gap = Gap(metric, measured, pred, r, optimistic, texts)
        if not texts:
            wide = r > ENGINE_GAP or r < 1 / ENGINE_GAP
            gap = replace(gap, likely_causes=(_engine_fallback(gap) if wide else WITHIN,))
        gaps.append(gap)
    return sorted(gaps, key=lambda g: -g.size)


def _statistic(d: Distribution) -> tuple[float, str]:
    for name in ("p95", "p99"):
        value = getattr(d, name)
        if value is not None:
            return value, name
    return d.mean, "mean"


def target_checks(run: MeasuredRun, estimate: ServingEstimate) -> list[TargetCheck]:
    """The plan's targets against the file: the first token against its target, the time between
    tokens against the decode speed the targets need (the load test's pass criteria use p95)."""
    checks = []
    if estimate.ttft_target_ms is not None:
        value, stat = _statistic(run.ttft_ms)
        checks.append(
            TargetCheck(
                "ttft_target_ms",
                estimate.ttft_target_ms,
                value,
                stat,
                value <= estimate.ttft_target_ms,
            )
        )
    need = estimate.required_decode_tokens_per_s
    if need:
        value, stat = _statistic(run.tpot_ms or run.itl_ms)
        limit = 1000 / need
        checks.append(TargetCheck("time_per_output_token_ms", limit, value, stat, value <= limit))
    return checks


def measured_comparison(run: MeasuredRun, base: ServingInputs) -> MeasuredComparison:
    """Predict the run, then set measured beside predicted (largest gap first)."""
    predicted = predict_run(run, base)
    causes = likely_causes(run, predicted)
    return MeasuredComparison(
        run=run,
        predicted=predicted,
        gaps=_gaps(run, predicted, causes),
        causes=causes,
        targets=target_checks(run, predicted.estimate),
    )
