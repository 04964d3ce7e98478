"""What an exercise may be given: catalogue rows, words from a list and bounded numbers, each
checked before any arithmetic and shown as a learner reads it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from planner.capacity.catalogue import Accelerator, ModelSpec, default_catalogue
from planner.capacity.formatting import whole
from planner.capacity.training import METHODS
from planner.capacity.units import PRECISIONS, CapacityInputError


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
        _number(
            "window_hours", "window (hours)", "0.0167", "8760"
        ),  # a minute: batch.MIN_WINDOW_HOURS
        _number("retry_margin", "retry margin", "0", "10"),
        _number("price_per_hour", "price per hour (USD)", "0.01", "10000"),
        _number("work_hours", "hours of work in the run", "0.01", "100000"),
        _number("checkpoint_every_minutes", "minutes between checkpoints", "0.1", "100000"),
        _number("checkpoint_save_minutes", "minutes to save a checkpoint", "0", "1000"),
        _number("interruptions_per_day", "interruptions per day", "0.001", "1000"),
        _number("restart_minutes", "minutes to restart after an interruption", "0", "1000"),
    )
}

Values = dict[str, Any]  # checked: Accelerator, ModelSpec, str, int or Decimal


def checked_input(variable: Variable, raw: object) -> Any:
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


# Inputs and facts in dollars: shown with cents ("1.20", not "1.2").
MONEY: Final = frozenset({"price_per_hour", "api_input_price", "api_output_price"})


def money_value(value: Any) -> str:
    return f"{Decimal(value):,.2f}"


# Words a prompt shows for a choice: the course writes LoRA, not "lora".
CHOICE_WORDS: Final = {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}


def shown_value(value: Any) -> str:
    """An input as a learner reads it: a catalogue row by its name, a number in plain digits."""
    if isinstance(value, Accelerator | ModelSpec):
        return value.name
    if isinstance(value, int):
        return whole(value)
    if isinstance(value, Decimal):
        text = f"{value:,f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return CHOICE_WORDS.get(value, str(value)) if isinstance(value, str) else str(value)
