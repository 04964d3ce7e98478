"""Exercises for what a practitioner's exam asks beyond memory and speed: mixture-of-experts
weights, the batch at which decode turns compute-bound, spot capacity and quantised models."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Final

from planner.capacity import speed_model as sm
from planner.capacity.catalogue import Accelerator, ModelSpec
from planner.capacity.exercises.inputs import Values
from planner.capacity.exercises.work import Facts, Worked, _serving, rounded
from planner.capacity.formatting import money, num
from planner.capacity.quantisation import kernel_path
from planner.capacity.results import FormulaLine
from planner.capacity.serving import ServingInputs
from planner.capacity.serving.memory import embedding_params
from planner.capacity.spot import spot_run, young_interval_minutes
from planner.capacity.units import BYTES_PER_ELEMENT, QUANTISED_BYTES_PER_WEIGHT, CapacityInputError


def _moe(spec: ModelSpec) -> tuple[Fraction, Fraction, int, int]:
    """(total, active) parameters in billions and (experts, experts per token)."""
    experts = sm.moe_experts(spec)
    if experts is None or not spec.active_params_b:
        raise CapacityInputError("model", f"{spec.name} is not a mixture of experts")
    return Fraction(str(spec.params_b)), Fraction(str(spec.active_params_b)), *experts


def moe_weights_read_gb(values: Values) -> Worked:
    """GB of weights one decode step reads at a batch of B streams: the shared weights, and the
    experts the batch touches, E × (1 − (1 − k/E)^B) of them (uniform routing)."""
    spec: ModelSpec = values["model"]
    precision = values.get("precision", "bf16")
    per = BYTES_PER_ELEMENT[precision]
    total, active, experts, routed = _moe(spec)
    batch = values.get("users", 1)
    expert = (total - active) / (experts - routed)
    shared = active - routed * expert
    touched = sm.experts_read(experts, routed, batch)
    read = (shared + touched * expert) * per
    lines = [
        FormulaLine(
            "One expert, and the weights every token reads",
            "expert = (total − active) ÷ (E − k); shared = active − k × expert",
            f"({num(total)} − {num(active)}) ÷ ({experts} − {routed}) = {num(expert, 4)} B; "
            f"{num(active)} − {routed} × {num(expert, 4)} = {num(shared, 4)} B",
        ),
        FormulaLine(
            "Experts a batch touches",
            "E × (1 − (1 − k ÷ E)^B)",
            f"{experts} × (1 − (1 − {routed} ÷ {experts})^{batch}) = {num(touched, 2)}",
        ),
        FormulaLine(
            "Weights read per decode step",
            "(shared + experts touched × expert) × bytes per weight",
            f"({num(shared, 4)} + {num(touched, 2)} × {num(expert, 4)}) B × {num(per)} bytes "
            f"= {num(read, 3)} GB (memory holds all {num(total)} B: {num(total * per, 2)} GB)",
        ),
    ]
    facts: Facts = {
        "total_params_b": rounded(total, 1),
        "active_params_b": rounded(active, 1),
        "experts": experts,
        "experts_per_token": routed,
        "bytes_per_weight": rounded(per, 1),
    }
    return float(read), lines, facts


def compute_bound_batch(values: Values) -> Worked:
    """The batch at which a decode step's FLOPs take as long as its weight reads, on the spec
    sheet's peaks: the GPU's FLOP per byte (its ridge point) against the step's arithmetic
    intensity, 2 × parameters × B FLOPs over the weights' bytes. The KV cache is left out: with
    it the batch rises, and at long contexts decode never turns compute-bound."""
    gpu: Accelerator = values["gpu"]
    estimate = _serving({**values, "users": 1, "context_tokens": 1})
    figures = estimate.to_dict()
    weight = figures.get("weight_precision") or "bf16"
    peak = sm.peak_tflops(gpu, sm.compute_precision(gpu, weight))
    if peak is None or not gpu.memory_bandwidth_gb_s:
        raise CapacityInputError("gpu", f"{gpu.name} has no TFLOPS or bandwidth in the catalogue")
    ridge = peak * 1000 / Fraction(str(gpu.memory_bandwidth_gb_s))
    params = Fraction(figures["params"])
    weights = Fraction(figures["weights_bytes"])
    per_stream = 2 * params / weights
    batch = math.ceil(ridge / per_stream)
    lines = [
        FormulaLine(
            "The GPU's ridge point",
            "peak FLOP/s ÷ peak bytes/s",
            f"{num(peak, 0)} TFLOPS ÷ {num(gpu.memory_bandwidth_gb_s, 0)} GB/s = {num(ridge, 1)} "
            "FLOP per byte",
        ),
        FormulaLine(
            "Arithmetic intensity of a decode step",
            "2 × parameters × B FLOPs ÷ weight bytes",
            f"2 × {num(params / 10**9, 2)} B × B ÷ {num(weights / 10**9, 2)} GB = "
            f"{num(per_stream, 3)} × B FLOP per byte",
        ),
        FormulaLine(
            "Compute-bound from a batch of",
            "⌈ridge point ÷ intensity per stream⌉",
            f"⌈{num(ridge, 1)} ÷ {num(per_stream, 3)}⌉ = {batch} streams",
        ),
    ]
    facts: Facts = {
        "tflops": rounded(peak, 0),
        "bandwidth_gb_s": rounded(gpu.memory_bandwidth_gb_s, 0),
        "params_b": rounded(params / 10**9, 2),
        "weights_gb": rounded(weights / 10**9, 2),
        "weight_precision": weight,
    }
    return float(batch), lines, facts


def _spot_inputs(values: Values) -> dict[str, Fraction]:
    return {
        "work_hours": Fraction(values["work_hours"]),
        "price_per_hour": Fraction(values["price_per_hour"]),
        "checkpoint_every_minutes": Fraction(values["checkpoint_every_minutes"]),
        "checkpoint_save_minutes": Fraction(values.get("checkpoint_save_minutes", Decimal(0))),
        "interruptions_per_day": Fraction(values["interruptions_per_day"]),
        "restart_minutes": Fraction(values.get("restart_minutes", Decimal(0))),
    }


def spot_training_cost_usd(values: Values) -> Worked:
    given = _spot_inputs(values)
    run = spot_run(**given)
    every, save = given["checkpoint_every_minutes"], given["checkpoint_save_minutes"]
    lines = [
        FormulaLine(
            "Running hours with checkpoints",
            "work hours × (1 + save minutes ÷ interval minutes)",
            f"{num(run.work_hours, 2)} × (1 + {num(save, 1)} ÷ {num(every, 1)}) = "
            f"{num(run.running_hours, 3)} h",
        ),
        FormulaLine(
            "Expected interruptions",
            "running hours × interruptions per day ÷ 24",
            f"{num(run.running_hours, 3)} × {num(given['interruptions_per_day'], 2)} ÷ 24 = "
            f"{num(run.interruptions, 3)}",
        ),
        FormulaLine(
            "Hours lost to interruptions",
            "interruptions × (half an interval + restart minutes) ÷ 60",
            f"{num(run.interruptions, 3)} × ({num(every / 2, 1)} + "
            f"{num(given['restart_minutes'], 1)}) ÷ 60 = {num(run.lost_hours, 3)} h",
        ),
        FormulaLine(
            "Expected cost",
            "(running hours + hours lost) × spot price per hour",
            f"({num(run.running_hours, 3)} + {num(run.lost_hours, 3)}) × "
            f"{money(given['price_per_hour'])} = {money(run.expected_cost_usd)}",
        ),
    ]
    return float(run.expected_cost_usd), lines, {}


def checkpoint_interval_minutes(values: Values) -> Worked:
    save = Fraction(values["checkpoint_save_minutes"])
    rate = Fraction(values["interruptions_per_day"])
    answer = young_interval_minutes(checkpoint_save_minutes=save, interruptions_per_day=rate)
    between = Fraction(24 * 60) / rate
    lines = [
        FormulaLine(
            "Mean time between interruptions",
            "24 × 60 ÷ interruptions per day",
            f"1,440 ÷ {num(rate, 2)} = {num(between, 1)} minutes",
        ),
        FormulaLine(
            "Checkpoint interval (Young)",
            "√(2 × save minutes × mean minutes between interruptions)",
            f"√(2 × {num(save, 1)} × {num(between, 1)}) = {num(answer, 1)} minutes",
        ),
    ]
    return answer, lines, {}


def quantised_weights_gb(values: Values) -> Worked:
    """A quantised checkpoint's weights (scales included, embeddings and LM head at 16-bit), and
    the kernel the GPU runs it with."""
    gpu: Accelerator = values["gpu"]
    precision = values.get("precision", "int4")
    per = QUANTISED_BYTES_PER_WEIGHT.get(precision)
    if per is None:
        raise CapacityInputError("precision", "use a quantised precision: fp8, int8 or int4")
    estimate = _serving({**values, "users": 1, "context_tokens": 1})
    figures = estimate.to_dict()
    path = kernel_path(gpu, precision)
    lines = [
        *[f for f in estimate.formulas if f.label.startswith("Weights")],
        FormulaLine("Kernel path", f"{precision} on {gpu.name}", f"{path.name}: {path.words}"),
    ]
    embed = embedding_params(ServingInputs(model=values["model"])) or Fraction(0)
    facts: Facts = {
        "params_b": rounded(figures["params"] / 10**9, 2),
        "embedding_params_b": rounded(embed / 10**9, 3),
        "quantised_bytes": rounded(per, 4),
        "kernel": path.name,
    }
    return float(figures["weights_gb"]), lines, facts


# (name, unit, words, required, optional, work): the Exercise rows planner.capacity.exercises makes.
EXERCISES: Final = (
    (
        "moe_weights_read_gb",
        "GB",
        "weights a mixture of experts reads per decode step",
        (("model",),),
        ("precision", "users"),
        moe_weights_read_gb,
    ),
    (
        "compute_bound_batch",
        "streams",
        "the batch at which decode turns compute-bound (weights only)",
        (("gpu",), ("model",)),
        ("precision",),
        compute_bound_batch,
    ),
    (
        "spot_training_cost_usd",
        "USD",
        "expected cost of a checkpointed training run on spot capacity",
        (
            ("work_hours",),
            ("price_per_hour",),
            ("checkpoint_every_minutes",),
            ("interruptions_per_day",),
        ),
        ("checkpoint_save_minutes", "restart_minutes"),
        spot_training_cost_usd,
    ),
    (
        "checkpoint_interval_minutes",
        "minutes",
        "the checkpoint interval that balances saving against lost work (Young)",
        (("checkpoint_save_minutes",), ("interruptions_per_day",)),
        (),
        checkpoint_interval_minutes,
    ),
    (
        "quantised_weights_gb",
        "GB",
        "weights of a quantised checkpoint, and the kernel that runs it",
        (("gpu",), ("model",), ("precision",)),
        (),
        quantised_weights_gb,
    ),
)
