"""The first token of a serving estimate: one forward pass over the prompt, and the queueing
before it (a burst prefilled together, a wait for a KV slot, steady arrivals' prefills)."""

from __future__ import annotations

import math
from fractions import Fraction

from planner.capacity import speed_model as sm
from planner.capacity.formatting import num, whole
from planner.capacity.results import Severity, Trail, WarningCode
from planner.capacity.serving.decode import Shape
from planner.capacity.serving.inputs import ServingInputs
from planner.capacity.serving.pool import Pool


def prefill_seconds(model: sm.DecodeModel, shape: Shape, n: int, trail: Trail) -> Fraction | None:
    """One forward pass over the prompt, seconds."""
    if shape.prompt is None:
        return None
    parts = model.prefill(shape.prompt)
    if model.flops is None:
        trail.formula(
            "Prefill",
            "prompt FLOPs ÷ achieved FLOP/s",
            "not estimated: the GPU's TFLOPS or the parameters are unknown",
        )
        return None
    trail.formula(
        "Prefill (one prompt)",
        "weights read ÷ achieved bandwidth + (prompt tokens × matmul FLOPs per token + "
        "prompt² ÷ 2 × attention FLOPs per query-key pair) ÷ achieved FLOP/s"
        + (" + all-reduces" if n > 1 else ""),
        f"{num(parts.memory * 1000, 2)} ms + ({whole(shape.prompt)} × "
        f"{num(model.flops_per_token or 0, 0)} + {whole(shape.prompt)}² ÷ 2 × "
        f"{num(model.attention_flops, 0)}) FLOPs ÷ {num(model.flops / 10**12)} TFLOPS = "
        f"{num(parts.compute * 1000, 2)} ms"
        + (f" + {num(parts.all_reduce * 1000, 2)} ms" if n > 1 else "")
        + f" = {num(parts.total * 1000, 1)} ms",
    )
    return parts.total


def arrivals_share(arrivals: Fraction | None, prefill: Fraction | None, trail: Trail) -> Fraction:
    """The share of the GPUs' time new requests' prefills take: arrival rate × one prefill."""
    if not arrivals or prefill is None:
        return Fraction(0)
    share = arrivals * prefill
    trail.formula(
        "Time spent prefilling new arrivals",
        "arrival rate × prefill time",
        f"{num(arrivals)} per s × {num(prefill * 1000, 1)} ms = {num(share * 100, 1)} % of the time",
    )
    if share >= 1:
        trail.warn(
            WarningCode.ARRIVALS_EXCEED_PREFILL,
            Severity.ERROR,
            f"{num(arrivals)} new requests a second need {num(share * 100, 0)} % of the GPUs' time "
            "for their prompts alone: the queue grows without end. Add replicas or shorten the prompts.",
        )
    return share


def kv_slots(pool: Pool, shape: Shape) -> int:
    """Streams the KV pool holds at once while serving: an engine allocates KV blocks as tokens
    arrive (PagedAttention, Kwon et al. 2023), so a stream holds prompt + output ÷ 2 tokens on
    average; the pool's max users (each at the full context) when the lengths are unknown."""
    if pool.kv_cache_tokens is None or shape.prompt is None or shape.output is None:
        return pool.max_users
    return max(
        pool.max_users,
        math.floor(pool.kv_cache_tokens / Fraction(2 * shape.prompt + shape.output, 2)),
    )


def burst_extra_wait(
    model: sm.DecodeModel,
    prefill: Fraction | None,
    burst: int | None,
    shape: Shape,
    trail: Trail,
) -> Fraction:
    """Requests that arrive together are prefilled together (the engine admits them into the same
    prefill steps), so every first token of the burst waits for all of its prompts: one forward
    pass over burst x prompt tokens, the weights read once. A mean that is also the worst."""
    if prefill is None or shape.prompt is None or not burst or burst < 2:
        return Fraction(0)
    together = model.prefill(shape.prompt, burst).total
    trail.formula(
        f"Prefill of a burst of {burst} arrivals",
        "weights read ÷ achieved bandwidth + burst × (prompt FLOPs, attention included) ÷ "
        "achieved FLOP/s",
        f"{whole(burst)} × {whole(shape.prompt)} tokens in one pass = {num(together * 1000, 1)} ms, "
        f"{num((together - prefill) * 1000, 1)} ms more than one prompt alone",
    )
    return together - prefill


def first_token_seconds(
    inputs: ServingInputs,
    prefill: Fraction | None,
    burst_wait: Fraction,
    share: Fraction,
    users: int | None,
    max_users: int,
    per_user: Fraction | None,
    shape: Shape,
    trail: Trail,
) -> Fraction | None:
    """The mean time to first token: fixed cost + prefill + the mean queueing of each cause."""
    if prefill is None:
        if shape.prompt is None and inputs.ttft_target_ms is not None:
            trail.assume("prompt_tokens", "unknown: the time to first token was not estimated")
        return None
    if share >= 1:
        return None
    base = sm.FIRST_TOKEN_FIXED_S + prefill
    arrival_wait = share * prefill / (2 * (1 - share))  # M/D/1 (Pollaczek-Khinchine)
    slot_wait = _slot_wait(users, max_users, base, per_user, shape.output, trail)
    ttft = base + burst_wait + arrival_wait + slot_wait
    trail.formula(
        "Time to first token (mean)",
        "fixed cost + prefill + the rest of a burst's prefill + arrivals' queue ρ × prefill ÷ "
        "2(1 − ρ) + wait for a KV slot",
        f"{num(sm.FIRST_TOKEN_FIXED_S * 1000, 1)} + {num(prefill * 1000, 1)} + "
        f"{num(burst_wait * 1000, 1)} + {num(arrival_wait * 1000, 1)} + {num(slot_wait * 1000, 1)} ms = "
        f"{num(ttft * 1000, 1)} ms",
    )
    return ttft


def _slot_wait(
    users: int | None,
    max_users: int,
    base: Fraction,
    per_user: Fraction | None,
    output: int | None,
    trail: Trail,
) -> Fraction:
    """Users beyond the KV pool's slots wait: the k-th waits ⌈k ÷ slots⌉ requests; the mean over
    all users."""
    if not users or users <= max_users or max_users < 1 or per_user is None or output is None:
        return Fraction(0)
    request = base + output / per_user
    waiting = users - max_users
    rounds, extra = divmod(waiting, max_users)
    total = max_users * rounds * (rounds + 1) // 2 + extra * (rounds + 1)
    mean = Fraction(total, users) * request
    trail.formula(
        "Waiting for a KV slot (mean over users)",
        "Σ ⌈k ÷ slots⌉ over the waiting users × request time ÷ users",
        f"{whole(waiting)} users beyond {whole(max_users)} slots, requests of {num(request, 2)} s: "
        f"{num(mean * 1000, 0)} ms",
    )
    return mean
