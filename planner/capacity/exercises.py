"""Practice problems worked by the engine: a named exercise takes drawn numbers and catalogue rows,
calls the estimate functions and returns the answer, the engine's formula lines and the input
that mattered most. Calculated quiz items (quizzes.calculated) are drawn and graded with these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Final

from planner.capacity.batch import BatchInputs, estimate_batch
from planner.capacity.catalogue import Accelerator, ModelSpec, default_catalogue, mig_slices
from planner.capacity.formatting import money, whole
from planner.capacity.results import FormulaLine, Severity
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.training import METHODS, TrainingInputs, estimate_training
from planner.capacity.units import PRECISIONS, CapacityInputError

__all__ = ["EXERCISES", "VARIABLES", "Exercise", "Solution", "Variable", "solve_exercise"]

# The perturbation that finds the input that mattered most: each number ±10 %.
SENSITIVITY_STEP: Final = Decimal("0.1")
HOURS_PER_DAY: Final = 24
# The managed API's bill is priced for this many requests, then divided: the batch estimate
# rounds its dollars to the cent, and one request costs a fraction of one.
API_REQUESTS_PRICED: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class Variable:
    """An input an exercise may take: a catalogue row, a word from a list, or a bounded number."""

    name: str
    kind: str  # "gpu", "model", "choice", "whole" or "number"
    words: str  # what it is, in the course's words
    low: Decimal = Decimal(0)
    high: Decimal = Decimal(0)
    choices: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return self.kind in {"whole", "number"}


def _whole(name: str, words: str, low: int, high: int) -> Variable:
    return Variable(name, "whole", words, Decimal(low), Decimal(high))


def _number(name: str, words: str, low: str, high: str) -> Variable:
    return Variable(name, "number", words, Decimal(low), Decimal(high))


# Physical ranges: wide enough for any real deployment, narrow enough that arithmetic stays sane.
VARIABLES: Final[dict[str, Variable]] = {
    v.name: v
    for v in (
        Variable("gpu", "gpu", "accelerator (catalogue id, or a MIG slice id)"),
        Variable("model", "model", "model (catalogue id)"),
        Variable("precision", "choice", "weight precision", choices=PRECISIONS),
        Variable("kv_precision", "choice", "KV cache precision", choices=PRECISIONS),
        Variable("method", "choice", "training method", choices=METHODS),
        _number("gpu_memory_gb", "GPU memory (GB)", "1", "2000"),
        _number("model_gb", "model weights (GB)", "0.01", "2000"),
        _number("params_b", "parameters (billions)", "0.01", "3000"),
        _number("overhead_gb", "runtime overhead (GB)", "0", "200"),
        _number("kv_per_user_gb", "KV cache per user (GB)", "0.0001", "1000"),
        _whole("layers", "layers", 1, 1000),
        _whole("kv_heads", "KV heads", 1, 1024),
        _whole("head_dim", "head dimension", 1, 4096),
        _whole("context_tokens", "context tokens", 1, 10_000_000),
        _whole("users", "concurrent users", 1, 100_000),
        _whole("prompt_tokens", "prompt tokens", 1, 1_000_000),
        _whole("output_tokens", "output tokens", 1, 1_000_000),
        _whole("gpus", "GPUs", 1, 1024),
        _whole("lora_rank", "LoRA rank", 1, 4096),
        _whole("seq_len", "sequence length", 1, 1_000_000),
        _whole("batch_size", "batch size", 1, 100_000),
        _whole("items", "items", 1, 10**12),
        _number("items_per_s", "items per second per worker", "0.0001", "1000000000"),
        _whole("workers", "workers", 1, 1_000_000),
        _number("window_hours", "window (hours)", "0.01", "8760"),
        _number("retry_margin", "retry margin", "0", "10"),
        _number("price_per_hour", "price per hour (USD)", "0.01", "10000"),
    )
}

Values = dict[str, Any]  # checked: Accelerator, ModelSpec, str, int or Decimal


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


@dataclass(frozen=True, slots=True)
class Exercise:
    name: str
    unit: str
    words: str
    # Each entry: the inputs of which one must be given (("gpu", "gpu_memory_gb"): either).
    required: tuple[tuple[str, ...], ...]
    optional: tuple[str, ...]
    work: Callable[[Values], tuple[float, list[FormulaLine]]]

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(name for group in self.required for name in group) + self.optional


# --- checking the inputs --------------------------------------------------------------------


def _checked(variable: Variable, raw: object) -> Any:
    """One input as the engine takes it, or CapacityInputError naming it."""
    name = variable.name
    if variable.kind in {"gpu", "model", "choice"}:
        if not isinstance(raw, str) or not raw.strip() or len(raw) > 100:
            raise CapacityInputError(name, f"must be a {variable.words}")
        if variable.kind == "gpu":
            return default_catalogue().accelerator(raw, field=name)
        if variable.kind == "model":
            return default_catalogue().model(raw, field=name)
        if raw not in variable.choices:
            raise CapacityInputError(name, f"use one of {', '.join(variable.choices)}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, int | float | Decimal):
        raise CapacityInputError(name, f"must be a number ({variable.words})")
    try:
        value = Decimal(str(raw)) if not isinstance(raw, int) else Decimal(raw)
    except InvalidOperation:
        raise CapacityInputError(name, "must be a number") from None
    if not value.is_finite() or not variable.low <= value <= variable.high:
        raise CapacityInputError(
            name, f"must be between {variable.low} and {variable.high} ({variable.words})"
        )
    if variable.kind == "whole":
        if value != value.to_integral_value():
            raise CapacityInputError(name, "must be a whole number")
        return int(value)
    return value


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
    return {name: _checked(VARIABLES[name], raw) for name, raw in variables.items()}


def shown_value(value: Any) -> str:
    """An input as a learner reads it: a catalogue row by its name, a number in plain digits."""
    if isinstance(value, Accelerator | ModelSpec):
        return value.name
    if isinstance(value, int):
        return whole(value)
    if isinstance(value, Decimal):
        text = f"{value:,f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(value)


# --- the estimate calls ---------------------------------------------------------------------

_SERVING_NAMES: Final = {
    "gpu": "accelerator",
    "model": "model",
    "precision": "weight_precision",
    "kv_precision": "kv_precision",
    "gpu_memory_gb": "gpu_memory_gb",
    "model_gb": "model_gb",
    "params_b": "params_b",
    "overhead_gb": "overhead_gb",
    "kv_per_user_gb": "kv_per_user_gb",
    "layers": "layers",
    "kv_heads": "kv_heads",
    "head_dim": "head_dim",
    "context_tokens": "context_tokens",
    "users": "users",
    "prompt_tokens": "prompt_tokens",
    "output_tokens": "output_tokens",
    "gpus": "tensor_parallel",
}


def _serving(values: Values, **extra: Any) -> ServingEstimate:
    given = {_SERVING_NAMES[k]: v for k, v in values.items() if k in _SERVING_NAMES}
    return estimate_serving(ServingInputs(**{**given, **extra}))


def _runs(estimate: ServingEstimate) -> None:
    """The deployment must hold its weights for a speed, user or cost question to mean anything."""
    for warning in estimate.warnings:
        if warning.severity == Severity.ERROR and str(warning.code) == "weights_do_not_fit":
            raise CapacityInputError("model", warning.message)


def _lines(formulas: list[FormulaLine], *starts: str) -> list[FormulaLine]:
    """The estimate's formula lines whose label starts with one of `starts` (all if none)."""
    return [f for f in formulas if not starts or f.label.startswith(starts)]


_MEMORY_LINES = ("Usable memory", "Weights", "Overhead", "Available for cache", "KV pool")


def _answer(value: float | int | None, field: str, what: str) -> float:
    if value is None:
        raise CapacityInputError(field, f"the estimate gives no {what} for these inputs")
    return float(value)


def _memory_fit(values: Values) -> tuple[float, list[FormulaLine]]:
    # Free memory before the KV cache does not depend on it: a placeholder keeps the engine
    # from asking for an architecture the question never needs.
    extra = {} if {"model", "layers", "kv_per_user_gb"} & set(values) else {"kv_per_user_gb": 1}
    estimate = _serving(values, **extra)
    return estimate.available_for_cache_gb, _lines(estimate.formulas, *_MEMORY_LINES)


def _kv_bytes_per_token(values: Values) -> tuple[float, list[FormulaLine]]:
    # Only the cache's shape matters: a device that holds anything and one token of context.
    device = {} if "gpu" in values else {"gpu_memory_gb": Decimal(100_000)}
    weights = {} if "model" in values else {"model_gb": Decimal(1), "overhead_gb": Decimal(0)}
    estimate = _serving(values, context_tokens=1, **device, **weights)
    answer = _answer(estimate.kv_bytes_per_token, "layers", "KV bytes per token")
    return answer, _lines(estimate.formulas, "KV bytes per token")


def _max_users(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    lines = _lines(estimate.formulas, *_MEMORY_LINES, "KV", "Max active users")
    return float(estimate.max_active_users), lines


def _decode_tokens_per_s(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    figures = estimate.to_dict()
    # The speed model's prediction where the engine has one, else the bandwidth roofline.
    rate = figures.get("decode_tokens_per_s") or figures["decode_tokens_per_s_upper_bound"]
    lines = _lines(estimate.formulas, "Weights", "KV cache per user", "Decode", "Achieved")
    return _answer(rate, "gpu", "decode rate"), lines


def _time_to_first_token_ms(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    answer = _answer(estimate.time_to_first_token_ms, "prompt_tokens", "time to first token")
    return answer, _lines(estimate.formulas, "Time to first token", "Prefill", "Queue")


def _cost_per_million_output_tokens(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    answer = _answer(estimate.cost_per_million_output_tokens_usd, "gpu", "price per hour")
    return answer, _lines(estimate.formulas, "Decode", "Aggregate", "Cost")


def _api_break_even_requests_per_day(values: Values) -> tuple[float, list[FormulaLine]]:
    gpu: Accelerator = values["gpu"]
    gpus = values.get("gpus", 1)
    price = values.get("price_per_hour")
    if price is None:
        if gpu.price_per_hour_usd is None:
            raise CapacityInputError("gpu", f"{gpu.name} has no price per hour in the catalogue")
        price = Decimal(str(gpu.price_per_hour_usd))
    per_day = Fraction(price) * gpus * HOURS_PER_DAY
    own = FormulaLine(
        "Self-hosted cost per day",
        "price per hour × GPUs × 24 h",
        f"{money(Fraction(price))} × {gpus} × 24 = {money(per_day)}",
    )
    api = default_catalogue().managed_api()
    bill = estimate_batch(
        BatchInputs(
            items=API_REQUESTS_PRICED,
            window_hours=HOURS_PER_DAY,
            tokens_per_item=values["prompt_tokens"],
            output_tokens_per_item=values["output_tokens"],
            api=api,
        )
    )
    per_million = _answer(bill.api_cost_usd, "prompt_tokens", "managed API price")
    if per_million <= 0:
        raise CapacityInputError("prompt_tokens", "a million requests cost nothing on the API")
    per_request = Fraction(str(per_million)) / API_REQUESTS_PRICED
    break_even = per_day / per_request
    lines = [
        own,
        *_lines(bill.formulas, "Managed API cost"),
        FormulaLine(
            "Break-even traffic",
            "self-hosted cost per day ÷ API cost per request",
            f"{money(per_day)} ÷ ${float(per_request):.6f} = {whole(math.floor(break_even))} "
            "requests per day",
        ),
    ]
    return float(math.floor(break_even)), lines


_TRAINING_NAMES: Final = {
    "model": "model",
    "params_b": "params_b",
    "method": "method",
    "lora_rank": "lora_rank",
    "seq_len": "seq_len",
    "batch_size": "batch_size",
    "gpus": "gpus",
}


def _training_memory_gb(values: Values) -> tuple[float, list[FormulaLine]]:
    given = {_TRAINING_NAMES[k]: v for k, v in values.items() if k in _TRAINING_NAMES}
    estimate = estimate_training(TrainingInputs(**given))
    return estimate.total_gb, list(estimate.formulas)


def _batch_job_hours(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = estimate_batch(
        BatchInputs(
            items=values["items"],
            window_hours=values.get("window_hours", Decimal(HOURS_PER_DAY)),
            items_per_s=values["items_per_s"],
            retry_margin=values.get("retry_margin"),
            workers=values.get("workers"),
        )
    )
    answer = _answer(estimate.hours_needed, "items_per_s", "hours")
    return answer, _lines(estimate.formulas, "Required rate", "Workers needed", "Hours needed")


def _profile(slice_: Accelerator) -> str:
    return slice_.id.rsplit(":", 1)[-1]


def _mig_slice_fit(values: Values) -> tuple[float, list[FormulaLine]]:
    gpu: Accelerator = values["gpu"]
    slices = sorted(mig_slices(gpu), key=lambda s: (s.memory_gb or 0, s.id))
    if not slices:
        raise CapacityInputError("gpu", f"{gpu.name} has no MIG profiles")
    tried: list[str] = []
    for slice_ in slices:
        estimate = _serving({**values, "gpu": slice_})
        if estimate.fits:
            lines = [
                FormulaLine(
                    "Smallest slice that fits",
                    "try the slices from the smallest memory up; the first that holds the "
                    "weights and every user's KV cache",
                    ", ".join([*tried, f"{_profile(slice_)}: fits"]),
                ),
                *_lines(estimate.formulas, *_MEMORY_LINES, "Max active users"),
            ]
            return float(slice_.memory_gb or 0), lines
        tried.append(f"{_profile(slice_)}: no")
    raise CapacityInputError("model", f"fits no MIG slice of {gpu.name}, not even the whole GPU")


EXERCISES: Final[dict[str, Exercise]] = {
    e.name: e
    for e in (
        Exercise(
            "memory_fit",
            "GB",
            "memory left for the KV cache after weights and overhead",
            (("gpu", "gpu_memory_gb"), ("model", "model_gb", "params_b")),
            ("precision", "overhead_gb", "gpus"),
            _memory_fit,
        ),
        Exercise(
            "kv_bytes_per_token",
            "bytes",
            "KV cache bytes per token from an architecture",
            (("model", "layers"),),
            ("kv_heads", "head_dim", "kv_precision", "gpu"),
            _kv_bytes_per_token,
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
            _max_users,
        ),
        Exercise(
            "decode_tokens_per_s",
            "tokens/s",
            "decode rate per stream",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "gpus", "overhead_gb"),
            _decode_tokens_per_s,
        ),
        Exercise(
            "time_to_first_token_ms",
            "ms",
            "time to first token",
            (("gpu",), ("model",), ("prompt_tokens",)),
            ("precision", "users", "context_tokens", "gpus", "overhead_gb"),
            _time_to_first_token_ms,
        ),
        Exercise(
            "cost_per_million_output_tokens",
            "USD per million tokens",
            "cost per million output tokens",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "gpus", "overhead_gb"),
            _cost_per_million_output_tokens,
        ),
        Exercise(
            "api_break_even_requests_per_day",
            "requests/day",
            "the daily traffic at which a rented GPU costs what the managed API does",
            (("gpu",), ("prompt_tokens",), ("output_tokens",)),
            ("gpus", "price_per_hour"),
            _api_break_even_requests_per_day,
        ),
        Exercise(
            "training_memory_gb",
            "GB",
            "training memory per GPU (weights, gradients, optimizer states)",
            (("model", "params_b"), ("method",)),
            ("lora_rank", "seq_len", "batch_size", "gpus"),
            _training_memory_gb,
        ),
        Exercise(
            "batch_job_hours",
            "hours",
            "hours a batch job takes",
            (("items",), ("items_per_s",)),
            ("workers", "window_hours", "retry_margin"),
            _batch_job_hours,
        ),
        Exercise(
            "mig_slice_fit",
            "GB",
            "memory of the smallest MIG slice that serves the model",
            (("gpu",), ("model",)),
            ("precision", "kv_precision", "users", "context_tokens", "overhead_gb"),
            _mig_slice_fit,
        ),
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
                other, _ = exercise.work({**values, name: moved})
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
    answer, formulas = exercise.work(values)
    if not math.isfinite(answer):
        raise CapacityInputError("exercise", f"{name} gives no finite answer for these inputs")
    sensitive, change = _sensitivity(exercise, values, answer) if sensitivity else (None, 0.0)
    return Solution(
        exercise=name,
        answer=answer,
        unit=exercise.unit,
        formulas=tuple(formulas),
        most_sensitive=sensitive,
        sensitivity=round(change, 4) if sensitive is not None else None,
        shown={k: shown_value(v) for k, v in values.items()},
    )
