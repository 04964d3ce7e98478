"""The throughput-latency frontier of one accelerator: tokens/s per device against tokens/s per
user, across batch sizes and tensor-parallel degrees, and the operating point the targets pick.

This is the Pareto view of `vllm bench sweep plot_pareto` (vLLM docs, "Parameter sweeps":
throughput per GPU against per-user output speed over a sweep of concurrency and parallelism)
and of NVIDIA's aiconfigurator, computed with the same serving estimate the comparison runs
(`estimate_serving`): for each tensor-parallel degree n and each batch B of streams decoding
together, per user = the predicted decode tokens/s per stream, per device = the batch's
aggregate tokens/s ÷ n. A point runs only when its B users' KV caches fit beside the weights.

A point is on the frontier when no other running point gives at least as many tokens/s per device
and per user, and more of one. The targets pick the point with the most tokens/s per device that
still meets every target (time to first token, decode speed per user).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import Accelerator
from planner.capacity.paths.options import GPU_COUNTS, TPU_COUNTS, engine_row
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.units import CapacityInputError, exact

# Concurrency levels of a sweep: powers of two, as `vllm bench sweep` examples step
# --max-concurrency (1 to 256 streams).
BATCHES: Final = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    tensor_parallel: int  # devices the model is split over
    batch: int  # streams decoding together
    tokens_per_s_per_user: float
    tokens_per_s_per_device: float
    time_to_first_token_ms: float | None
    meets: bool  # meets every target of the card
    reason: str  # the first target it misses (empty when it meets)
    on_frontier: bool = False


@dataclass(frozen=True, slots=True)
class Frontier:
    accelerator_id: str
    accelerator_name: str
    points: tuple[FrontierPoint, ...]  # running points, by tensor parallel then batch
    operating_point: FrontierPoint | None  # the targets' pick; None when no point meets them
    not_running: tuple[str, ...]  # splits and batches that do not run, in words
    ttft_target_ms: float | None
    min_tokens_per_s_per_user: float | None

    @property
    def frontier(self) -> list[FrontierPoint]:
        """The frontier's points from the fastest per user to the most per device."""
        return sorted(
            (p for p in self.points if p.on_frontier),
            key=lambda p: (-p.tokens_per_s_per_user, p.tokens_per_s_per_device),
        )


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """a is at least as good as b on both axes and better on one (both axes: more is better)."""
    return a[0] >= b[0] and a[1] >= b[1] and a != b


def pareto_front[T](items: Sequence[T], key: Callable[[T], tuple[float, float]]) -> list[T]:
    """The items no other item dominates (ties on both axes all stay), in their given order."""
    values = [key(item) for item in items]
    return [
        item
        for item, v in zip(items, values, strict=True)
        if not any(dominates(w, v) for w in values)
    ]


def tensor_parallel_degrees(acc: Accelerator) -> tuple[int, ...]:
    """The splits the comparison offers on this device: 1-8 GPUs in a node, TPU slices of 1, 4
    and 8 chips, one CPU server or one MIG slice."""
    if acc.mig_of or acc.kind not in ("gpu", "tpu"):
        return (1,)
    return TPU_COUNTS if acc.kind == "tpu" else GPU_COUNTS


def _estimate(inputs: ServingInputs, row: Accelerator, n: int, batch: int) -> ServingEstimate:
    return estimate_serving(
        replace(
            inputs,
            accelerator=row,
            tensor_parallel=n if n > 1 else None,
            gpu_memory_gb=None,
            memory_bandwidth_gb_s=None,
            users=batch,
            decode_batch=batch,
            max_num_seqs=batch,  # the engine started for this batch, as a sweep would
        )
    )


def _point(
    est: ServingEstimate, n: int, batch: int, min_per_user: Fraction | None
) -> FrontierPoint | None:
    """The point, or None where the batch does not run (weights or its KV caches do not fit)."""
    per_user = est.decode_tokens_per_s or est.decode_tokens_per_s_upper_bound
    if per_user is None or "weights_do_not_fit" in est.warning_codes:
        return None
    if est.max_active_users < batch:
        return None
    aggregate = est.aggregate_tokens_per_s or per_user * batch
    ttft = est.time_to_first_token_ms
    reason = ""
    target = est.ttft_target_ms
    required = [exact(r) for r in (est.required_decode_tokens_per_s,) if r is not None]
    if min_per_user is not None:
        required.append(min_per_user)
    if target is not None and (ttft is None or ttft > target):
        reason = f"first token after {ttft:,.0f} ms" if ttft is not None else "no first-token time"
    elif required and exact(per_user) < max(required):
        reason = f"{per_user:,.1f} tokens/s per user, below {float(max(required)):,.1f}"
    return FrontierPoint(
        tensor_parallel=n,
        batch=batch,
        tokens_per_s_per_user=float(per_user),
        tokens_per_s_per_device=round(float(aggregate) / n, 1),
        time_to_first_token_ms=ttft,
        meets=not reason,
        reason=reason,
    )


def pick_operating_point(points: Iterable[FrontierPoint]) -> FrontierPoint | None:
    """The most tokens/s per device among the points that meet every target; on a tie, the
    faster per user, then the smaller split."""
    meeting = [p for p in points if p.meets]
    if not meeting:
        return None
    return max(
        meeting,
        key=lambda p: (p.tokens_per_s_per_device, p.tokens_per_s_per_user, -p.tensor_parallel),
    )


def serving_frontier(
    inputs: ServingInputs,
    accelerator: Accelerator,
    *,
    degrees: Iterable[int] | None = None,
    batches: Iterable[int] = BATCHES,
    min_tokens_per_s_per_user: Fraction | None = None,
) -> Frontier:
    """Every (split, batch) that runs on the accelerator, its frontier and the targets' pick.

    `inputs` is the card as the comparison plans it (prompt and output lengths, targets);
    `min_tokens_per_s_per_user` adds a decode-speed target the card's inputs do not carry (an
    inter-token latency target from a preset: 1000 ÷ ITL ms)."""
    row = engine_row(accelerator)
    points: list[FrontierPoint] = []
    not_running: list[str] = []
    ttft_target: float | None = None
    for n in degrees or tensor_parallel_degrees(accelerator):
        largest, failed = 0, False
        for batch in sorted(set(batches)):
            try:
                est = _estimate(inputs, row, n, batch)
            except CapacityInputError as err:
                # e.g. the attention or KV heads do not split n ways: the engine says which.
                not_running.append(f"{n} × {accelerator.name}: {err.message}")
                failed = True
                break
            ttft_target = est.ttft_target_ms
            point = _point(est, n, batch, min_tokens_per_s_per_user)
            if point is None:
                break  # a larger batch holds more KV caches: it does not fit either
            points.append(point)
            largest = batch
        if largest and largest < max(batches):
            not_running.append(f"{n} × {accelerator.name}: batches above {largest} do not fit")
        elif not largest and not failed:
            not_running.append(f"{n} × {accelerator.name}: the model does not fit")
    front = pareto_front(points, key=lambda p: (p.tokens_per_s_per_user, p.tokens_per_s_per_device))
    marked = tuple(replace(p, on_frontier=p in front) for p in points)
    return Frontier(
        accelerator_id=accelerator.id,
        accelerator_name=accelerator.name,
        points=marked,
        operating_point=pick_operating_point(marked),
        not_running=tuple(not_running),
        ttft_target_ms=ttft_target,
        min_tokens_per_s_per_user=(
            float(min_tokens_per_s_per_user) if min_tokens_per_s_per_user is not None else None
        ),
    )
