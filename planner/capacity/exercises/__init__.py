"""Practice problems worked by the engine: a named exercise takes drawn numbers and catalogue rows,
calls the estimate functions and returns the answer, the engine's formula lines and the input
that mattered most. Calculated quiz items (quizzes.calculated) are drawn and graded with these.
Each exercise also returns its facts: the figures a prompt may state and a hand formula may use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from planner.capacity.exercises import gaps, training_work, work
from planner.capacity.exercises.inputs import (
    MONEY,
    VARIABLES,
    Values,
    Variable,
    checked_input,
    money_value,
    shown_value,
)
from planner.capacity.results import FormulaLine
from planner.capacity.units import CapacityInputError

__all__ = ["EXERCISES", "VARIABLES", "Exercise", "Solution", "Variable", "solve_exercise"]

# The perturbation that finds the input that mattered most: each number ±10 %.
SENSITIVITY_STEP: Final = Decimal("0.1")


@dataclass(frozen=True, slots=True)
class Solution:
    """One worked problem: the answer, the engine's formula lines with these numbers, the input
    whose ±10 % moved the answer most (None when no input is a number) and by how much."""

    exercise: str
    answer: float
    unit: str
    formulas: tuple[FormulaLine, ...]
    most_sensitive: str | None
    sensitivity: float | None
    shown: dict[str, str] = field(default_factory=dict)  # each input as the prompt shows it
    # The exercise's facts as the prompt shows them (weights_gb, overhead_gb, ...): never an input.
    facts: dict[str, str] = field(default_factory=dict)
    # The answer each known mistake gives with these numbers ("left out the CUDA context": 16.28).
    mistakes: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Exercise:
    name: str
    unit: str
    words: str
    # Each entry: the inputs of which one must be given (("gpu", "gpu_memory_gb"): either).
    required: tuple[tuple[str, ...], ...]
    optional: tuple[str, ...]
    work: Callable[[Values], work.Worked]

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(name for group in self.required for name in group) + self.optional


def _inputs(exercise: Exercise, variables: Mapping[str, object]) -> Values:
    allowed = set(exercise.inputs)
    for name in variables:
        if name not in allowed:
            raise CapacityInputError(
                name, f"not an input of {exercise.name}; it takes {', '.join(exercise.inputs)}"
            )
    for group in exercise.required:
        if not any(name in variables for name in group):
            raise CapacityInputError(group[0], f"{exercise.name} needs {' or '.join(group)}")
    return {name: checked_input(VARIABLES[name], raw) for name, raw in variables.items()}


EXERCISES: Final[dict[str, Exercise]] = {
    e.name: e
    for e in (
        Exercise(
            "memory_fit",
            "GB",
            "memory left for the KV cache after weights and overhead",
            (("gpu", "gpu_memory_gb"), ("model", "model_gb", "params_b")),
            ("precision", "overhead_gb", "gpus"),
            work.memory_fit,
        ),
        Exercise(
            "kv_bytes_per_token",
            "bytes",
            "KV cache bytes per token from an architecture",
            (("model", "layers"),),
            ("kv_heads", "head_dim", "kv_precision", "gpu"),
            work.kv_bytes_per_token,
        ),
        Exercise(
            "max_users",
            "users",
            "concurrent users whose KV caches fit",
            (("gpu", "gpu_memory_gb"), ("model", "model_gb", "params_b")),
            (
                "precision",
                "kv_precision",
                "overhead_gb",
                "kv_per_user_gb",
                "context_tokens",
                "gpus",
                "layers",
                "kv_heads",
                "head_dim",
            ),
            work.max_users,
        ),
        Exercise(
            "decode_tokens_per_s",
            "tokens/s",
            "decode rate per stream",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "gpus", "overhead_gb"),
            work.decode_tokens_per_s,
        ),
        Exercise(
            "time_to_first_token_ms",
            "ms",
            "time to first token",
            (("gpu",), ("model",), ("prompt_tokens",)),
            ("precision", "users", "context_tokens", "gpus", "overhead_gb"),
            work.time_to_first_token_ms,
        ),
        Exercise(
            "cost_per_million_output_tokens",
            "USD per million tokens",
            "cost per million output tokens",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "gpus", "overhead_gb"),
            work.cost_per_million_output_tokens,
        ),
        Exercise(
            "api_break_even_requests_per_day",
            "requests/day",
            "the daily traffic at which a rented GPU costs what the managed API does",
            (("gpu",), ("prompt_tokens",), ("output_tokens",)),
            ("gpus", "price_per_hour"),
            work.api_break_even_requests_per_day,
        ),
        Exercise(
            "training_memory_gb",
            "GB",
            "training memory per GPU (weights, gradients, optimizer states)",
            (("model", "params_b"), ("method",)),
            ("lora_rank", "seq_len", "batch_size", "gpus"),
            training_work.training_memory_gb,
        ),
        Exercise(
            "batch_job_hours",
            "hours",
            "hours a batch job takes",
            (("items",), ("items_per_s",)),
            ("workers", "window_hours", "retry_margin"),
            work.batch_job_hours,
        ),
        Exercise(
            "mig_slice_fit",
            "GB",
            "memory of the smallest MIG slice that serves the model",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "overhead_gb"),
            work.mig_slice_fit,
        ),
        *(Exercise(*row) for row in gaps.EXERCISES),
    )
}


# --- solving --------------------------------------------------------------------------------


def _exercise(name: str) -> Exercise:
    try:
        return EXERCISES[name]
    except KeyError:
        raise CapacityInputError(
            "exercise", f"unknown exercise {name!r}; use one of {', '.join(EXERCISES)}"
        ) from None


def _nudged(variable: Variable, value: int | Decimal, up: bool) -> int | Decimal | None:
    """The value 10 % up or down, inside its range; a whole number moves at least by one."""
    factor = 1 + SENSITIVITY_STEP if up else 1 - SENSITIVITY_STEP
    moved: int | Decimal
    if variable.kind == "whole":
        moved = round(value * factor)
        if moved == value:
            moved = value + (1 if up else -1)
    else:
        moved = Decimal(value) * factor
    if not variable.low <= moved <= variable.high or (moved == 0 and variable.low > 0):
        return None
    return moved


def _sensitivity(exercise: Exercise, values: Values, answer: float) -> tuple[str | None, float]:
    """The numeric input whose ±10 % moves the answer most, and the relative move. A whole
    number that had to move by more (4 KV heads → 5) is scaled back to a 10 % move."""
    best: tuple[str | None, float] = (None, 0.0)
    for name in sorted(values):
        variable = VARIABLES[name]
        if not variable.numeric:
            continue
        for up in (True, False):
            moved = _nudged(variable, values[name], up)
            if moved is None or moved == values[name] or not values[name]:
                continue
            try:
                other, _, _ = exercise.work({**values, name: moved})
            except CapacityInputError:
                continue
            change = abs(other - answer) / abs(answer) if answer else abs(other)
            moved_by = abs(Decimal(moved) - values[name]) / abs(Decimal(values[name]))
            change *= float(SENSITIVITY_STEP / moved_by) if moved_by else 1.0
            if change > best[1] or best[0] is None:
                best = (name, change)
    return best


def solve_exercise(
    name: str, variables: Mapping[str, object], *, sensitivity: bool = True
) -> Solution:
    """Work one exercise with these inputs (catalogue ids for gpu and model, numbers for the
    rest). Raises CapacityInputError naming the input that is unknown, missing or out of range,
    or that makes the estimate meaningless (weights that do not fit, no price). Without
    `sensitivity` the input that mattered most is not sought (a tenth of the work)."""
    exercise = _exercise(name)
    values = _inputs(exercise, variables)
    answer, formulas, facts = exercise.work(values)
    if not math.isfinite(answer):
        raise CapacityInputError("exercise", f"{name} gives no finite answer for these inputs")
    sensitive, change = _sensitivity(exercise, values, answer) if sensitivity else (None, 0.0)
    mistakes = training_work.known_mistakes(name, values, answer, facts)
    return Solution(
        exercise=name,
        answer=answer,
        unit=exercise.unit,
        formulas=tuple(formulas),
        most_sensitive=sensitive,
        sensitivity=round(change, 4) if sensitive is not None else None,
        shown={k: money_value(v) if k in MONEY else shown_value(v) for k, v in values.items()},
        facts={
            k: money_value(v) if k in MONEY else shown_value(v)
            for k, v in facts.items()
            if k not in values
        },
        mistakes=mistakes,
    )
