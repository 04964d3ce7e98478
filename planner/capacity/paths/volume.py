"""Volume as a requirement: how many replicas of a serving unit (one GPU, a tensor-parallel
group, TPU chips, a MIG slice or a CPU server) carry the day's peak under the targets.

The peak arrival rate is the day's requests ÷ 86,400 s × the peak factor; it needs prefill at
rate × prompt tokens per second and decode at rate × output tokens per second. One replica at an
arrival rate λ holds c streams at once, the larger of its share of the peak users and Little's law
λ × (first token + output ÷ per-stream speed) (J. D. C. Little, 1961); c must fit its KV slots
and vLLM's --max-num-seqs, its prefills must leave the replica time to decode (ρ < 1), and the
first token and the gap between tokens at the checked percentile (paths.queueing) must meet the
targets. The replicas are the fewest that do so (every check only improves as each carries
less); the capacity is the rate at which they stop meeting, as requests per day at the same peak.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from planner.capacity import speed_model as sm
from planner.capacity.paths.card import SECONDS_PER_DAY, ServingCard, required_decode
from planner.capacity.paths.queueing import (
    Percentiles,
    chunk_share,
    first_token,
    speculative_speedup,
    token_gaps,
)

MAX_NUM_SEQS: Final = 1024  # half of vLLM's smallest default max_num_batched_tokens (2,048)
# The most devices one option may use: 64 nodes of 8 (a large cluster behind one load balancer;
# beyond it a plan is a capacity reservation across regions, which this planner does not price).
MAX_DEVICES: Final = 512
LITTLE_ITERATIONS: Final = 8
CAPACITY_STEPS: Final = 24  # bisection steps: the capacity to 1 part in 10⁷ of its bracket


@dataclass(frozen=True, slots=True)
class Unit:
    """What one replica does, from its serving estimate: KV slots, the decode step at each batch
    (seconds, from the estimate's speed curve), one prefill's seconds."""

    devices: int
    slots: int
    curve: tuple[tuple[int, float], ...]  # (batch, seconds per decode step)
    prefill_s: float | None

    def step(self, batch: int) -> float | None:
        """Seconds per decode step at `batch`, linear between the curve's batches."""
        points = self.curve
        if not points or batch > points[-1][0]:
            return None
        for (b0, s0), (b1, s1) in itertools.pairwise(points):
            if b0 <= batch <= b1:
                return s0 + (s1 - s0) * (batch - b0) / (b1 - b0)
        return points[0][1] if batch <= points[0][0] else None


def unit_from_curve(
    devices: int, slots: int, curve: list[dict[str, object]], prefill_s: float | None
) -> Unit:
    points = []
    for point in curve:
        rate = point.get("decode_tokens_per_s")
        batch = point.get("batch")
        if isinstance(rate, int | float) and rate > 0 and isinstance(batch, int):
            points.append((batch, 1 / float(rate)))
    return Unit(devices, slots, tuple(points), prefill_s)


@dataclass(frozen=True, slots=True)
class ReplicaLoad:
    """One replica at its share of the peak, with the figures the targets are checked on."""

    arrivals_per_s: float
    streams: int
    rho: float
    ttft: Percentiles
    itl: Percentiles
    decode_per_stream: float  # tokens/s, mean
    miss: str | None  # the limiter of the first target missed
    reason: str


@dataclass(frozen=True, slots=True)
class Sizing:
    replicas: int  # that carry the peak (a failover replica is added on top)
    load: ReplicaLoad  # each replica's, at the planned peak
    capacity_per_replica_per_s: float  # the peak rate one replica carries under the targets
    for_users: int = 1  # the replicas the peak users alone need, whatever the day's volume


def check_replica(card: ServingCard, unit: Unit, rate: float, users: int) -> ReplicaLoad:
    """The replica at `rate` arrivals a second and at least `users` streams, against the targets."""
    fixed = float(sm.FIRST_TOKEN_FIXED_S)
    prefill = unit.prefill_s or 0.0
    rho = rate * prefill
    tokens, speedup = speculative_speedup(card.draft_tokens, card.acceptance_rate)
    cap = min(unit.slots, MAX_NUM_SEQS)
    ttft = first_token(fixed, prefill, rho)
    streams = max(users, 1)
    itl = Percentiles(math.inf, math.inf, math.inf, math.inf)
    decode = 0.0
    for _ in range(LITTLE_ITERATIONS if rho < 1 else 0):
        step = unit.step(min(streams, cap))
        if step is None:
            break
        d = step / speedup
        share, chunk = chunk_share(rate, card.prefill_tokens, prefill, streams, d)
        itl = token_gaps(d, share, chunk)
        decode = 1 / itl.mean
        busy = ttft.mean + card.output_tokens / decode
        need = max(users, 1, math.ceil(min(rate * busy, 1e9) - 1e-9))
        if need == streams:
            break
        streams = need
    load = ReplicaLoad(rate, streams, rho, ttft, itl, decode, None, "")
    miss, reason = _miss(card, load, cap, tokens)
    return ReplicaLoad(rate, streams, rho, ttft, itl, decode, miss, reason)


def _miss(card: ServingCard, load: ReplicaLoad, cap: int, tokens: float) -> tuple[str | None, str]:
    q = card.percentile
    if load.rho >= 1:
        return "throughput", f"its prefills alone need {load.rho:.0%} of the replica's time"
    if load.streams > cap:
        return "throughput", f"{load.streams} streams at once, over its {cap} slots"
    if card.ttft_target_ms is not None and load.ttft.at(q) * 1000 > card.ttft_target_ms:
        return "compute", (
            f"p{q} first token after {load.ttft.at(q) * 1000:,.0f} ms, over the "
            f"{float(card.ttft_target_ms):,.0f} ms target"
        )
    if card.itl_target_ms is not None and load.itl.at(q) * 1000 > card.itl_target_ms:
        return "bandwidth", (
            f"p{q} inter-token latency {load.itl.at(q) * 1000:,.1f} ms, over the "
            f"{float(card.itl_target_ms):,.0f} ms target"
        )
    need = required_decode(card, Fraction(load.ttft.at(q)).limit_denominator(10**6))
    if need is not None and load.decode_per_stream < need:
        return "bandwidth", (
            f"{load.decode_per_stream:,.1f} tokens/s per stream, below the {float(need):,.1f} needed"
        )
    return None, ""


def size_replicas(card: ServingCard, unit: Unit) -> Sizing:
    """The fewest replicas that carry the peak under the targets (or the most allowed, missing)."""
    peak = float(card.peak_requests_per_s)
    most = max(1, MAX_DEVICES // unit.devices)

    def load_at(replicas: int) -> ReplicaLoad:
        return check_replica(card, unit, peak / replicas, math.ceil(card.users / replicas))

    replicas = _fewest(lambda r: load_at(r).miss is None, most)
    load = load_at(replicas)
    if load.miss is not None:
        alone = check_replica(card, unit, 0.0, 1)
        if alone.miss is not None:  # not even one stream alone meets: more replicas cannot help
            load = alone
        return Sizing(most if alone.miss is None else 1, load, 0.0)
    users = card.users
    floor = _fewest(
        lambda r: check_replica(card, unit, 0.0, math.ceil(users / r)).miss is None, replicas
    )
    per_replica = math.ceil(users / replicas)
    return Sizing(replicas, load, _capacity(card, unit, peak / replicas, per_replica), floor)


def _fewest(meets: Callable[[int], bool], most: int) -> int:
    """The smallest n in 1..most with meets(n) (meets only turns true as n grows); most if none."""
    if meets(1):
        return 1
    low, high = 1, 2
    while high < most and not meets(high):
        low, high = high, min(most, high * 2)
    if not meets(high):
        return most
    while high - low > 1:
        mid = (low + high) // 2
        if meets(mid):
            high = mid
        else:
            low = mid
    return high


def _capacity(card: ServingCard, unit: Unit, planned: float, users: int) -> float:
    """The highest arrival rate one replica carries under the targets with its share of the
    peak users (bisection; the planned rate meets)."""
    low, high = planned, max(planned * 2, 1e-6)
    while high < 1e9 and check_replica(card, unit, high, users).miss is None:
        low, high = high, high * 2
    for _ in range(CAPACITY_STEPS):
        mid = (low + high) / 2
        if check_replica(card, unit, mid, users).miss is None:
            low = mid
        else:
            high = mid
    return low


def requests_per_day(rate_per_s: float, card: ServingCard) -> Fraction:
    """A peak arrival rate as the day's requests at the card's peak factor."""
    return Fraction(rate_per_s * SECONDS_PER_DAY).limit_denominator(1000) / card.peak_factor
