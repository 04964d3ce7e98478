"""The engine's prediction of the run a load-test file describes.

N requests in flight (--max-concurrency or GuideLLM's streams) decode together, each with the
file's mean prompt and output lengths. A closed loop (no request rate) replaces each request as
it finishes, so new requests arrive at N ÷ (request time) a second (Little's law, L = λW;
Little 1961), and their prefills take the GPUs' time as the engine's arrivals model says; a fixed
rate arrives at that rate, capped by the same capacity. Request time = first token + (output
tokens − 1) × time per output token; output throughput = requests a second × output tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final

from planner.capacity.measured.run import MeasuredRun
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.units import CapacityInputError

LITTLE_PASSES: Final = 3  # requests in flight at a fixed rate settle within a few passes
BISECTION_STEPS: Final = 30  # the closed loop's arrival rate to about 1 part in 10^9


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


def whole_tokens(value: float) -> int:
    return max(1, round(value))


def run_inputs(
    run: MeasuredRun, base: ServingInputs, *, users: int, arrivals: float | None
) -> ServingInputs:
    """The base inputs (model, GPU, TP, precisions) with the run's lengths and load."""
    return replace(
        base,
        prompt_tokens=whole_tokens(run.mean_input_tokens),
        output_tokens=whole_tokens(run.mean_output_tokens),
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


def request_seconds(ttft_ms: float, itl_ms: float, output_tokens: int) -> float:
    return (ttft_ms + (output_tokens - 1) * itl_ms) / 1000


def _closed_loop(run: MeasuredRun, base: ServingInputs, users: int) -> ServingEstimate:
    """`users` clients, each sending its next request when one ends: the arrival rate λ solves
    λ = users ÷ request time(λ); bisection between no arrivals and the rate whose prefills
    would fill the GPUs' time (as bench/serving_speed.py runs published closed loops)."""
    output_tokens = whole_tokens(run.mean_output_tokens)
    best = estimate_serving(run_inputs(run, base, users=users, arrivals=None))
    _speed(best)
    low, high = 0.0, None
    for _ in range(BISECTION_STEPS):
        rate = (low + high) / 2 if high is not None else max(2 * low, 0.01)
        trial = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
        if trial.decode_tokens_per_s is None or trial.time_to_first_token_ms is None:
            high = rate
            continue
        seconds = request_seconds(*_speed(trial), output_tokens)
        if rate < users / seconds:
            low, best = rate, trial
        else:
            high = rate
    return best


def _at_rate(run: MeasuredRun, base: ServingInputs, rate: float) -> tuple[int, ServingEstimate]:
    """A fixed arrival rate with no concurrency limit: requests in flight = rate × request time
    (Little's law), found by a few passes."""
    output_tokens = whole_tokens(run.mean_output_tokens)
    users = 1
    estimate = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
    for _ in range(LITTLE_PASSES):
        seconds = request_seconds(*_speed(estimate), output_tokens)
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
    output_tokens = whole_tokens(run.mean_output_tokens)
    if run.concurrency is None and rate is not None:
        users, estimate = _at_rate(run, base, rate)
    else:
        # No limit and no rate: what the tool saw in flight, else the caller's users; else the
        # tool sent every prompt at once, each finished one's slot going to the next.
        users = run.concurrency or _silent_concurrency(run, base)
        estimate = _closed_loop(run, base, users)
        if rate is not None:
            seconds = request_seconds(*_speed(estimate), output_tokens)
            if rate < users / seconds:
                estimate = estimate_serving(run_inputs(run, base, users=users, arrivals=rate))
    ttft_ms, itl_ms = _speed(estimate)
    seconds = request_seconds(ttft_ms, itl_ms, output_tokens)
    capacity = users / seconds
    request_rate = capacity if rate is None else min(rate, capacity)
    alone = estimate_serving(run_inputs(run, base, users=1, arrivals=None))
    prompt = whole_tokens(run.mean_input_tokens)
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
