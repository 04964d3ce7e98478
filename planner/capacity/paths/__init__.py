"""Choose the path: one workload on every catalogue path (CPU, GPUs, TPUs, the managed API), each
judged against the card's targets and priced per useful result, with a recommendation.

Serving options are replicated to carry the day's requests at their peak (paths.volume) and
checked at a percentile (paths.queueing) against the card's targets, or a use case's preset
(paths.presets) where the card gives none. The recommendation is the cheapest option that meets
every target; the break-even traffic is the day's requests at which the cheapest meeting
self-hosted plan costs what the managed API does: self-hosted cost per day ÷ the API's cost per
request (self-hosted is sized for the peak and paid whether busy or idle, its failover replica
included under N+1; the API is paid per token).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from planner.capacity.batch import BatchInputs
from planner.capacity.catalogue import Catalogue
from planner.capacity.formatting import num, whole
from planner.capacity.paths.break_even import (
    break_even_formula,
    break_even_requests_per_day,
    cost_series,
)
from planner.capacity.paths.card import ServingCard, Traffic, serving_card
from planner.capacity.paths.comparison import (
    PathComparison,
    card_assumptions,
    check_exclude,
    rank,
    recommend,
)
from planner.capacity.paths.jobs import batch_options, training_options
from planner.capacity.paths.options import LIMITERS, PATHS, PathOption
from planner.capacity.paths.plans import (
    batch_load_test,
    deploy_command,
    model_repo,
    serving_load_test,
    training_load_test,
)
from planner.capacity.paths.presets import USE_CASES
from planner.capacity.paths.queueing import speculative_speedup
from planner.capacity.paths.serving import serving_options
from planner.capacity.results import FormulaLine
from planner.capacity.serving import ServingInputs
from planner.capacity.training import TrainingInputs
from planner.capacity.units import as_float

__all__ = [
    "LIMITERS",
    "PATHS",
    "USE_CASES",
    "PathComparison",
    "PathOption",
    "Traffic",
    "break_even_requests_per_day",
    "compare_batch",
    "compare_serving",
    "compare_training",
    "recommend",
]


def compare_serving(
    inputs: ServingInputs,
    *,
    catalogue: Catalogue,
    traffic: Traffic | None = None,
    exclude: Iterable[str] = (),
) -> PathComparison:
    """Every serving path for the card at its peak concurrency, priced for the day's traffic."""
    excluded = check_exclude(exclude)
    card = serving_card(inputs, traffic or Traffic())
    options, best, second = rank(serving_options(card, catalogue), excluded)
    even = break_even_requests_per_day(options)
    formulas = break_even_formula(options, even)
    repo = model_repo(inputs.model, inputs.params_b)
    return PathComparison(
        estimate="serving",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        break_even_requests_per_day=even,
        load_test=serving_load_test(card, best, repo) if best else None,
        deploy_command=deploy_command(best, repo, card) if best else None,
        requests_per_day=card.requests_per_day,
        peak_concurrency=card.users,
        cost_series=cost_series(options, best),
        assumptions=card_assumptions(card.assumptions, options),
        formulas=[*load_formulas(card), *formulas],
        service_level=service_level(card),
    )


def service_level(card: ServingCard) -> dict[str, Any]:
    """The load the plan carries and the targets it is checked against (the JSON's contract)."""
    peak = card.peak_requests_per_s
    tokens_per_step, _ = speculative_speedup(card.draft_tokens, card.acceptance_rate)
    return {
        "use_case": card.use_case.name,
        "use_case_source": card.use_case.source,
        "percentile": card.percentile,
        "ttft_target_ms": as_float(card.ttft_target_ms, 1) if card.ttft_target_ms else None,
        "itl_target_ms": as_float(card.itl_target_ms, 1) if card.itl_target_ms else None,
        "peak_factor": as_float(card.peak_factor, 3),
        "peak_requests_per_s": as_float(peak, 4),
        "required_prefill_tokens_per_s": as_float(peak * card.prefill_tokens, 1),
        "required_decode_tokens_per_s": as_float(peak * card.output_tokens, 1),
        "prompt_tokens": card.prompt_tokens,
        "prefill_tokens": card.prefill_tokens,
        "output_tokens": card.output_tokens,
        "availability": card.availability,
        "prefix_hit_rate": as_float(card.prefix_hit_rate, 3),
        "draft_tokens": card.draft_tokens,
        "acceptance_rate": as_float(card.acceptance_rate, 3),
        "tokens_per_decode_step": round(tokens_per_step, 3),
    }


def load_formulas(card: ServingCard) -> list[FormulaLine]:
    peak = card.peak_requests_per_s
    lines = [
        FormulaLine(
            "Peak arrival rate",
            "requests per day ÷ 86,400 s × peak factor",
            f"{whole(card.requests_per_day)} ÷ 86,400 × {num(card.peak_factor)} = "
            f"{num(peak, 3)} requests/s",
        ),
        FormulaLine(
            "Prefill and decode needed at the peak",
            "peak rate × prompt tokens not in the prefix cache; peak rate × output tokens",
            f"{num(peak, 3)} × {whole(card.prefill_tokens)} = {num(peak * card.prefill_tokens, 0)} "
            f"tokens/s in; {num(peak, 3)} × {whole(card.output_tokens)} = "
            f"{num(peak * card.output_tokens, 0)} tokens/s out",
        ),
    ]
    if card.draft_tokens:
        tokens, speedup = speculative_speedup(card.draft_tokens, card.acceptance_rate)
        lines.append(
            FormulaLine(
                "Speculative decoding (Leviathan et al. 2023)",
                "tokens per step (1 − a^(k+1)) ÷ (1 − a); speed-up ÷ (1 + k × draft cost)",
                f"k = {card.draft_tokens}, a = {num(card.acceptance_rate)}: {tokens:.2f} tokens "
                f"per step, {speedup:.2f} × the decode speed",
            )
        )
    return lines


def compare_batch(
    inputs: BatchInputs, *, catalogue: Catalogue, exclude: Iterable[str] = ()
) -> PathComparison:
    """Every device sized to the window (or the fixed pool), and the API, priced per run."""
    excluded = check_exclude(exclude)
    found, assumed = batch_options(inputs, catalogue)
    options, best, second = rank(found, excluded)
    margin = float(inputs.retry_margin or 0)
    return PathComparison(
        estimate="batch",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        load_test=batch_load_test(best, inputs.items, margin) if best else None,
        assumptions=card_assumptions(assumed, options),
    )


def compare_training(
    inputs: TrainingInputs, *, catalogue: Catalogue, exclude: Iterable[str] = ()
) -> PathComparison:
    """Each device at 1-8 (states sharded when several), priced per run; the API has no row."""
    excluded = check_exclude(exclude)
    found, assumed = training_options(inputs, catalogue)
    options, best, second = rank(found, excluded)
    total = best.figures.get("total_gb") if best else None
    return PathComparison(
        estimate="training",
        options=options,
        recommended=best,
        runner_up=second,
        excluded=excluded,
        load_test=training_load_test(best, total) if best else None,
        assumptions=card_assumptions(assumed, options),
    )
