"""The exercises' work: each calls the estimate functions and keeps the formula lines that
answer its question, so a changed engine changes every answer. Each also returns its facts: the
figures a prompt may state (`{weights_gb}`) and a hand formula may use, rounded as shown."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from planner.capacity import speed_model as sm
from planner.capacity.batch import BatchInputs, estimate_batch
from planner.capacity.catalogue import Accelerator, default_catalogue, mig_slices
from planner.capacity.exercises.inputs import Values
from planner.capacity.formatting import money, whole
from planner.capacity.results import FormulaLine, Severity
from planner.capacity.serving import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.units import (
    BYTES_PER_ELEMENT,
    QUANTISED_BYTES_PER_WEIGHT,
    CapacityInputError,
)

HOURS_PER_DAY: Final = 24
# The managed API's bill is priced for this many requests, then divided: the batch estimate
# rounds its dollars to the cent, and one request costs a fraction of one.
API_REQUESTS_PRICED: Final = 1_000_000

Facts = dict[str, Any]  # Decimal, int or str: what the prompt may show
Worked = tuple[float, list[FormulaLine], Facts]

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


def rounded(value: float | Fraction | Decimal, places: int = 2) -> Decimal:
    """A fact as the prompt shows it: a decimal to `places` places."""
    return Decimal(str(float(value))).quantize(Decimal(1).scaleb(-places))


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


def _precision_facts(values: Values, figures: dict[str, Any]) -> Facts:
    weight = figures.get("weight_precision") or values.get("precision") or "bf16"
    kv = figures.get("kv_precision") or values.get("kv_precision") or "bf16"
    return {
        "weight_precision": weight,
        "kv_precision": kv,
        "bytes_per_weight": rounded(
            QUANTISED_BYTES_PER_WEIGHT.get(weight, BYTES_PER_ELEMENT[weight]), 4
        ),
        "kv_bytes": rounded(BYTES_PER_ELEMENT[kv], 1),
    }


def _model_facts(values: Values) -> Facts:
    spec = values.get("model")
    if spec is None:
        return {}
    facts: Facts = {"params_b": rounded(spec.params_b, 2)}
    for name in ("layers", "kv_heads", "head_dim"):
        if getattr(spec, name, None):
            facts[name] = int(getattr(spec, name))
    return facts


def _memory_facts(values: Values, figures: dict[str, Any]) -> Facts:
    """The memory a serving question counts, each figure as the prompt states it."""
    return {
        **_model_facts(values),
        **_precision_facts(values, figures),
        "memory_gb": rounded(figures["gpu_memory_gb"], 3),
        "weights_gb": rounded(figures["weights_gb"], 3),
        "overhead_gb": rounded(figures["overhead_gb"], 3),
        "kv_per_user_gb": rounded(figures["kv_cache_per_user_gb"] or 0, 3),
    }


def memory_fit(values: Values) -> Worked:
    # Free memory before the KV cache does not depend on it: a placeholder keeps the engine
    # from asking for an architecture the question never needs.
    extra = {} if {"model", "layers", "kv_per_user_gb"} & set(values) else {"kv_per_user_gb": 1}
    estimate = _serving(values, **extra)
    figures = estimate.to_dict()
    return (
        estimate.available_for_cache_gb,
        _lines(estimate.formulas, *_MEMORY_LINES),
        _memory_facts(values, figures),
    )


def kv_bytes_per_token(values: Values) -> Worked:
    # Only the cache's shape matters: a device that holds anything and one token of context.
    device = {} if "gpu" in values else {"gpu_memory_gb": Decimal(100_000)}
    weights = {} if "model" in values else {"model_gb": Decimal(1), "overhead_gb": Decimal(0)}
    estimate = _serving(values, context_tokens=1, **device, **weights)
    answer = _answer(estimate.kv_bytes_per_token, "layers", "KV bytes per token")
    facts = {**_model_facts(values), **_precision_facts(values, estimate.to_dict())}
    return answer, _lines(estimate.formulas, "KV bytes per token"), facts


def max_users(values: Values) -> Worked:
    estimate = _serving(values)
    _runs(estimate)
    lines = _lines(estimate.formulas, *_MEMORY_LINES, "KV", "Max active users")
    return float(estimate.max_active_users), lines, _memory_facts(values, estimate.to_dict())


def _speed_facts(values: Values, figures: dict[str, Any]) -> Facts:
    gpu: Accelerator = values["gpu"]
    weight = figures.get("weight_precision") or "bf16"
    compute = sm.compute_precision(gpu, weight)
    peak = sm.peak_tflops(gpu, compute)
    return {
        **_memory_facts(values, figures),
        "bandwidth_gb_s": rounded(gpu.memory_bandwidth_gb_s or 0, 1),
        "efficiency": rounded(sm.bandwidth_efficiency(gpu, weight) * 100, 0),
        "fixed_ms": rounded(sm.decode_step_fixed(gpu) * 1000, 1),
        "request_fixed_ms": rounded(sm.FIRST_TOKEN_FIXED_S * 1000, 0),
        "tflops": rounded(peak or 0, 0),
        "mfu": rounded(sm.achieved_mfu(gpu, compute) * 100, 0),
        "price_per_hour": rounded(gpu.price_per_hour_usd or 0, 2),
    }


def decode_tokens_per_s(values: Values) -> Worked:
    estimate = _serving(values)
    _runs(estimate)
    figures = estimate.to_dict()
    # The speed model's prediction where the engine has one, else the bandwidth roofline.
    rate = figures.get("decode_tokens_per_s") or figures["decode_tokens_per_s_upper_bound"]
    lines = _lines(estimate.formulas, "Weights", "KV cache per user", "Decode", "Achieved")
    return _answer(rate, "gpu", "decode rate"), lines, _speed_facts(values, figures)


def time_to_first_token_ms(values: Values) -> Worked:
    estimate = _serving(values)
    _runs(estimate)
    answer = _answer(estimate.time_to_first_token_ms, "prompt_tokens", "time to first token")
    lines = _lines(estimate.formulas, "Time to first token", "Prefill", "Queue", "Achieved")
    return answer, lines, _speed_facts(values, estimate.to_dict())


def cost_per_million_output_tokens(values: Values) -> Worked:
    estimate = _serving(values)
    _runs(estimate)
    figures = estimate.to_dict()
    answer = _answer(estimate.cost_per_million_output_tokens_usd, "gpu", "price per hour")
    facts = _speed_facts(values, figures)
    facts["decode_tokens_per_s"] = rounded(figures["decode_tokens_per_s"] or 0, 2)
    return answer, _lines(estimate.formulas, "Decode", "Aggregate", "Cost"), facts


def api_break_even_requests_per_day(values: Values) -> Worked:
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
    facts: Facts = {"price_per_hour": rounded(price, 2)}
    if api is not None:
        facts["api_input_price"] = rounded(api.price_per_million_input_tokens_usd or 0, 2)
        facts["api_output_price"] = rounded(api.price_per_million_output_tokens_usd or 0, 2)
    return float(math.floor(break_even)), lines, facts


def batch_job_hours(values: Values) -> Worked:
    window = values.get("window_hours")
    estimate = estimate_batch(
        BatchInputs(
            items=values["items"],
            window_hours=window if window is not None else Decimal(HOURS_PER_DAY),
            items_per_s=values["items_per_s"],
            retry_margin=values.get("retry_margin"),
            workers=values.get("workers"),
        )
    )
    answer = _answer(estimate.hours_needed, "items_per_s", "hours")
    # Without a window the question has none: only the hours, from the quantities it gave.
    starts = ("Hours needed",) if window is None else ("Required rate", "Workers", "Hours needed")
    return answer, _lines(estimate.formulas, *starts), {}


def _profile(slice_: Accelerator) -> str:
    return slice_.id.rsplit(":", 1)[-1]


def mig_slice_fit(values: Values) -> Worked:
    gpu: Accelerator = values["gpu"]
    slices = sorted(mig_slices(gpu), key=lambda s: (s.memory_gb or 0, s.id))
    if not slices:
        raise CapacityInputError("gpu", f"{gpu.name} has no MIG profiles")
    tried: list[str] = []
    # Each slice's memory as the estimate counts it (what the prompt lists).
    estimates = [_serving({**values, "gpu": s}) for s in slices]
    memory = [e.to_dict()["gpu_memory_gb"] for e in estimates]
    listing = ", ".join(f"{_profile(s)}: {m:,.2f} GB" for s, m in zip(slices, memory, strict=True))
    for i, (slice_, estimate) in enumerate(zip(slices, estimates, strict=True)):
        if estimate.fits:
            figures = estimate.to_dict()
            lines = [
                FormulaLine(
                    "Smallest slice that fits",
                    "try the slices from the smallest memory up; the first that holds the "
                    "weights and every user's KV cache",
                    ", ".join([*tried, f"{_profile(slice_)}: fits"]),
                ),
                *_lines(estimate.formulas, *_MEMORY_LINES, "Max active users"),
            ]
            facts = {
                **_memory_facts(values, figures),
                "slices": listing,
                "smaller_memory_gb": rounded(memory[i - 1] if i else 0, 3),
            }
            return float(slice_.memory_gb or 0), lines, facts
        tried.append(f"{_profile(slice_)}: no")
    raise CapacityInputError("model", f"fits no MIG slice of {gpu.name}, not even the whole GPU")
