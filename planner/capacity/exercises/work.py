"""The exercises' work: each calls the estimate functions and keeps the formula lines that
answer its question, so a changed engine changes every answer."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from planner.capacity.batch import BatchInputs, estimate_batch
from planner.capacity.catalogue import Accelerator, default_catalogue, mig_slices
from planner.capacity.exercises.inputs import Values
from planner.capacity.formatting import money, whole
from planner.capacity.results import FormulaLine, Severity
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.training import TrainingInputs, estimate_training
from planner.capacity.units import CapacityInputError

HOURS_PER_DAY: Final = 24
# The managed API's bill is priced for this many requests, then divided: the batch estimate
# rounds its dollars to the cent, and one request costs a fraction of one.
API_REQUESTS_PRICED: Final = 1_000_000

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
    """The estimate's formula lines whose label starts with one of `starts`; all of them if
    none does (a step the engine renamed still shows its working)."""
    picked = [f for f in formulas if f.label.startswith(starts)]
    return picked or list(formulas)


_MEMORY_LINES = ("Usable memory", "Weights", "Overhead", "Available for cache", "KV pool")


def _answer(value: float | int | None, field: str, what: str) -> float:
    if value is None:
        raise CapacityInputError(field, f"the estimate gives no {what} for these inputs")
    return float(value)


def memory_fit(values: Values) -> tuple[float, list[FormulaLine]]:
    # Free memory before the KV cache does not depend on it: a placeholder keeps the engine
    # from asking for an architecture the question never needs.
    extra = {} if {"model", "layers", "kv_per_user_gb"} & set(values) else {"kv_per_user_gb": 1}
    estimate = _serving(values, **extra)
    return estimate.available_for_cache_gb, _lines(estimate.formulas, *_MEMORY_LINES)


def kv_bytes_per_token(values: Values) -> tuple[float, list[FormulaLine]]:
    # Only the cache's shape matters: a device that holds anything and one token of context.
    device = {} if "gpu" in values else {"gpu_memory_gb": Decimal(100_000)}
    weights = {} if "model" in values else {"model_gb": Decimal(1), "overhead_gb": Decimal(0)}
    estimate = _serving(values, context_tokens=1, **device, **weights)
    answer = _answer(estimate.kv_bytes_per_token, "layers", "KV bytes per token")
    return answer, _lines(estimate.formulas, "KV bytes per token")


def max_users(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    lines = _lines(estimate.formulas, *_MEMORY_LINES, "KV", "Max active users")
    return float(estimate.max_active_users), lines


def decode_tokens_per_s(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    figures = estimate.to_dict()
    # The speed model's prediction where the engine has one, else the bandwidth roofline.
    rate = figures.get("decode_tokens_per_s") or figures["decode_tokens_per_s_upper_bound"]
    lines = _lines(estimate.formulas, "Weights", "KV cache per user", "Decode", "Achieved")
    return _answer(rate, "gpu", "decode rate"), lines


def time_to_first_token_ms(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    answer = _answer(estimate.time_to_first_token_ms, "prompt_tokens", "time to first token")
    return answer, _lines(estimate.formulas, "Time to first token", "Prefill", "Queue")


def cost_per_million_output_tokens(values: Values) -> tuple[float, list[FormulaLine]]:
    estimate = _serving(values)
    _runs(estimate)
    answer = _answer(estimate.cost_per_million_output_tokens_usd, "gpu", "price per hour")
    return answer, _lines(estimate.formulas, "Decode", "Aggregate", "Cost")


def api_break_even_requests_per_day(values: Values) -> tuple[float, list[FormulaLine]]:
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


def training_memory_gb(values: Values) -> tuple[float, list[FormulaLine]]:
    given = {_TRAINING_NAMES[k]: v for k, v in values.items() if k in _TRAINING_NAMES}
    estimate = estimate_training(TrainingInputs(**given))
    return estimate.total_gb, list(estimate.formulas)


def batch_job_hours(values: Values) -> tuple[float, list[FormulaLine]]:
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


def mig_slice_fit(values: Values) -> tuple[float, list[FormulaLine]]:
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
