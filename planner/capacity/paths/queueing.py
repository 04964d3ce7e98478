"""Percentiles of the first token and of the gap between tokens for one replica at its planned
load, and the tokens per decode step speculative decoding buys.

The model, stated (planner/calculator/README.md repeats it for the command line):

- Arrivals are Poisson at the replica's share of the peak rate (a load balancer spreading requests
  at random). Prefills queue for the replica as one server of deterministic service time s (every
  prompt of the card's length): an M/D/1 queue, utilisation ρ = λ × s.
- Its waiting time W has P(W > 0) = ρ exactly (any M/G/1 queue) and, beyond that, the
  exponential tail of Kingman's heavy-traffic approximation (J. F. C. Kingman, "The single server
  queue in heavy traffic", 1961), scaled so its mean is Pollaczek-Khinchine's
  E[W] = ρ s (1 + C²) ÷ (2 (1 − ρ)) with C = 0 for deterministic service:
  P(W > t) ≈ ρ exp(−t ρ ÷ E[W]), so the q-quantile is E[W] ÷ ρ × ln(ρ ÷ (1 − q)) when ρ > 1 − q,
  else 0. The first token at q is fixed cost + s + W_q.
- Decode with chunked prefill (vLLM's default scheduler): a step decodes every stream's next token
  in d seconds; a step that also carries a prompt chunk (up to the step's token budget) takes
  d + the chunk's prefill time. The share of steps carrying a chunk is
  f = chunks per second × d ÷ (1 − ρ), so the gap at quantile q is d when q ≤ 1 − f, else d plus
  one chunk; the mean is d + f × chunk.

Known failure modes: bursty or diurnal arrivals inside the peak hour (compound-Poisson, agents'
fan-out) queue longer than Poisson; prompt lengths that vary (C > 0) lengthen the tail; the tail
is loose at light load (the approximation's heavy-traffic origin) and meaningless as ρ → 1; a
KV pool that fills preempts streams (not modelled: the plan keeps each replica within its KV
slots); the decode steps a prompt rides with are not added to its first token. Floating point:
a logarithm has no exact rational value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

PERCENTILES: Final = (50, 95, 99)
# vLLM's token budget per step with chunked prefill (max_num_batched_tokens, 2,048 by default for
# the OpenAI server on most GPUs; vLLM engine arguments, docs.vllm.ai configuration/engine_args).
STEP_TOKEN_BUDGET: Final = 2048
# Speculative decoding's draft cost: c, the draft's step time ÷ the target's (Leviathan, Kalman and
# Matias 2023, "Fast Inference from Transformers via Speculative Decoding", §3.5, a small draft of
# the same family); taken as 1/20, indicative.
DRAFT_COST_RATIO: Final = 0.05


@dataclass(frozen=True, slots=True)
class Percentiles:
    """Seconds at p50, p95, p99, and the mean."""

    p50: float
    p95: float
    p99: float
    mean: float

    def at(self, percentile: int) -> float:
        return {50: self.p50, 95: self.p95, 99: self.p99}.get(percentile, self.p95)

    def ms(self) -> dict[str, float]:
        return {f"p{q}": round(self.at(q) * 1000, 1) for q in PERCENTILES}


def wait_quantile(rho: float, service_s: float, q: float) -> float:
    """The q-quantile of an M/D/1 queue's waiting time (see the module's docstring)."""
    if rho <= 1 - q:
        return 0.0
    if rho >= 1:
        return math.inf
    return service_s / (2 * (1 - rho)) * math.log(rho / (1 - q))  # E[W] ÷ ρ × ln(ρ ÷ (1 − q))


def first_token(fixed_s: float, prefill_s: float, rho: float) -> Percentiles:
    """Time to first token at p50, p95, p99 and its mean (Pollaczek-Khinchine)."""
    base = fixed_s + prefill_s
    if rho >= 1:
        return Percentiles(math.inf, math.inf, math.inf, math.inf)
    p50, p95, p99 = (base + wait_quantile(rho, prefill_s, q / 100) for q in PERCENTILES)
    return Percentiles(p50, p95, p99, base + rho * prefill_s / (2 * (1 - rho)))


def chunk_share(
    arrivals_per_s: float, prompt: int, prefill_s: float, batch: int, step_s: float
) -> tuple[float, float]:
    """(share of decode steps that carry a prompt chunk, one chunk's seconds)."""
    chunk_tokens = max(1, STEP_TOKEN_BUDGET - batch)
    chunks = max(1, math.ceil(prompt / chunk_tokens))
    chunk_s = prefill_s / chunks
    rho = arrivals_per_s * prefill_s
    if rho >= 1:
        return 1.0, chunk_s
    return min(1.0, arrivals_per_s * chunks * step_s / (1 - rho)), chunk_s


def token_gaps(step_s: float, share: float, chunk_s: float) -> Percentiles:
    """Inter-token latency at p50, p95, p99 and its mean."""
    p50, p95, p99 = (step_s + (chunk_s if share > 1 - q / 100 else 0.0) for q in PERCENTILES)
    return Percentiles(p50, p95, p99, step_s + share * chunk_s)


def speculative_speedup(draft_tokens: int, acceptance: Fraction | float) -> tuple[float, float]:
    """(expected tokens per target step, walltime speed-up) for k draft tokens each accepted with
    probability a: E = (1 − a^(k+1)) ÷ (1 − a) (Leviathan et al. 2023, eq. 1); a step then costs
    1 + k × c target steps, so the speed-up is E ÷ (1 + k c) (their Theorem 3.8)."""
    if draft_tokens <= 0:
        return 1.0, 1.0
    a = float(acceptance)
    tokens = (1 - a ** (draft_tokens + 1)) / (1 - a) if a < 1 else float(draft_tokens + 1)
    return tokens, tokens / (1 + draft_tokens * DRAFT_COST_RATIO)
