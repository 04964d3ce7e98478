"""What a self-hosted serving option shows: its figures at the planned load (the mean and the
percentiles), the formulas behind them, its always-on cost per day and its notes."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Final

from planner.capacity.catalogue import Accelerator
from planner.capacity.formatting import money, num
from planner.capacity.paths.card import ServingCard
from planner.capacity.paths.options import COLD_START, path_of
from planner.capacity.paths.volume import ReplicaLoad, Sizing
from planner.capacity.results import FormulaLine
from planner.capacity.serving import ServingEstimate
from planner.capacity.units import exact

HOURS_PER_DAY: Final = 24
# What a catalogue price per device-hour covers. GPU clouds that rent whole machines bill per GPU
# with the host included (e.g. AWS p5/g6 instances ÷ their GPUs); Google Compute Engine bills
# GPUs apart from the VM's vCPUs and memory (cloud.google.com/compute/gpus-pricing), where the
# host adds to the GPU's price. TPU prices are per chip-hour with the host (cloud.google.com/tpu/
# pricing); a CPU server's is the whole machine.
PRICE_BASIS: Final[dict[str, str]] = {
    "gpu": "per GPU, host included; on Google Compute Engine add the VM's vCPUs and memory",
    "tpu": "per chip, host included",
    "cpu": "the whole server",
}


def load_figures(load: ReplicaLoad) -> dict[str, float | int | None]:
    """The replica's figures at the planned peak: the mean and the percentiles."""
    ttft, itl = load.ttft.ms(), load.itl.ms()
    finite = math.isfinite(load.ttft.mean) and math.isfinite(load.itl.mean)
    return {
        "decode_tokens_per_s": round(load.decode_per_stream, 2) if finite else None,
        "time_to_first_token_ms": round(load.ttft.mean * 1000, 1) if finite else None,
        "inter_token_latency_ms": round(load.itl.mean * 1000, 2) if finite else None,
        "streams_per_replica": load.streams,
        "requests_per_s_per_replica": round(load.arrivals_per_s, 4),
        **({f"ttft_ms_{k}": v for k, v in ttft.items()} if finite else {}),
        **({f"itl_ms_{k}": v for k, v in itl.items()} if finite else {}),
    }


def volume_formulas(card: ServingCard, n: int, sizing: Sizing | None) -> list[FormulaLine]:
    if sizing is None:
        return []
    load = sizing.load
    peak = card.peak_requests_per_s
    lines = [
        FormulaLine(
            "Replicas for the peak",
            "fewest replicas whose share of the peak (rate ÷ replicas, users ÷ replicas) meets "
            f"every target at p{card.percentile}",
            f"{num(peak, 3)} requests/s ÷ {sizing.replicas} = {load.arrivals_per_s:,.3f} per "
            f"replica, {load.streams} streams at once; {sizing.replicas} × {n} device(s)",
        )
    ]
    if math.isfinite(load.ttft.mean):
        ttft = load.ttft.ms()
        lines.append(
            FormulaLine(
                "First token at p50 / p95 / p99 (M/D/1 prefill queue)",
                "fixed cost + prefill + wait, P(wait > t) ≈ ρ·exp(−2(1 − ρ)t ÷ prefill)",
                f"ρ = {load.rho:.3f}: {ttft['p50']:,} / {ttft['p95']:,} / {ttft['p99']:,} ms",
            )
        )
        itl = load.itl.ms()
        lines.append(
            FormulaLine(
                "Inter-token latency at p50 / p95 / p99 (chunked prefill)",
                "decode step, plus one prompt chunk on the share of steps that carry one",
                f"{itl['p50']:,} / {itl['p95']:,} / {itl['p99']:,} ms",
            )
        )
    return lines


# The estimate's formulas behind the table's figures (users, first token, decode speed).
SHOWN_FORMULAS: Final = (
    "KV cache per user",
    "Max active users",
    "Prefill",
    "Decode",
    "Time to first",
)


def shown_formulas(est: ServingEstimate) -> list[FormulaLine]:
    return [f for f in est.formulas if f.label.startswith(SHOWN_FORMULAS)]


def figures_of(est: ServingEstimate, decode: float | None) -> dict[str, float | int | None]:
    return {
        "weights_gb": est.weights_gb,
        "kv_cache_per_user_gb": est.kv_cache_per_user_gb,
        "max_active_users": est.max_active_users,
        "decode_tokens_per_s": decode,
        "decode_tokens_per_s_upper_bound": est.decode_tokens_per_s_upper_bound,
        "time_to_first_token_ms": est.time_to_first_token_ms,
        "required_decode_tokens_per_s": est.required_decode_tokens_per_s,
    }


def always_on_cost(
    card: ServingCard, acc: Accelerator, n: int, replicas: int = 1, failover: int = 0
) -> tuple[Fraction | None, list[FormulaLine]]:
    if not acc.price_per_hour_usd:
        return None, []
    price = exact(acc.price_per_hour_usd)
    devices = n * (replicas + failover)
    cost = price * devices * HOURS_PER_DAY
    spare = " + 1 failover" if failover else ""
    return cost, [
        FormulaLine(
            "Cost per day (always on, sized for the peak)",
            f"price per device-hour ({PRICE_BASIS[path_of(acc)]}) × devices × 24 h",
            f"{money(price)} × {n} × ({replicas}{spare}) × 24 = {money(cost)}",
        )
    ]


def serving_notes(acc: Accelerator, est: ServingEstimate) -> tuple[str, ...]:
    path = path_of(acc)
    notes = [
        COLD_START[path],
        "spot or preemptible capacity does not fit live traffic alone: an interruption drops "
        "the streams; keep an on-demand floor",
    ]
    if acc.mig_of:
        notes.append(
            "a MIG slice: priced as its share of the GPU; you pay the whole GPU unless other "
            "workloads use the other slices"
        )
    if path == "tpu":
        notes.append("sold as slices of chips; the software stack changes from CUDA to XLA")
    notes += [w.message for w in est.warnings if str(w.severity) == "warning"][:2]
    return tuple(notes)
