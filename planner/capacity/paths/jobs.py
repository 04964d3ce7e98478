"""Batch and training paths: each catalogue device runs the job (workers sized to the window, or
GPUs sharing the training states), priced per run; the managed API prices a batch per token."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Final

from planner.capacity.api_prices import api_price_for
from planner.capacity.batch import BatchEstimate, BatchInputs, estimate_batch
from planner.capacity.catalogue import Accelerator, Catalogue, mig_slices
from planner.capacity.formatting import money, num, whole
from planner.capacity.paths.options import (
    API_RATE_LIMIT_SOURCE,
    API_TOKENS_PER_MINUTE,
    BATCH_STACK,
    COLD_START,
    GPU_COUNTS,
    TPU_COUNTS,
    TRAINING_STACK,
    PathOption,
    engine_row,
    path_of,
)
from planner.capacity.results import Assumption, FormulaLine
from planner.capacity.training import TrainingInputs, estimate_training
from planner.capacity.training.results import TrainingEstimate
from planner.capacity.units import BYTES_PER_GB, CapacityInputError, exact

# Each worker is billed while it starts: clouds bill by the second after a 60 s minimum (AWS EC2
# per-second billing, https://aws.amazon.com/ec2/pricing/on-demand/), and pulling the image and
# loading the model take minutes more; five minutes per worker is indicative.
WORKER_STARTUP_HOURS: Final = Fraction(5, 60)
# BERT-class encoders read at most 512 tokens (their position embeddings), so a corpus is chunked
# to that (the course's nightly embedding card: ~512 tokens a chunk).
DEFAULT_TOKENS_PER_ITEM: Final = 512
DEFAULT_TRAINING_STEPS: Final = 1000
# Without a batch the estimate can count neither activations nor steps per second: the comparison
# assumes the calculator's example fine-tuning step (8 sequences of 2,048 tokens) and says so.
DEFAULT_BATCH_SIZE: Final = 8
DEFAULT_SEQ_LEN: Final = 2048
BYTES_PER_WEIGHT: Final = 2  # a bf16 checkpoint, for "do the weights fit the worker"


def _params(inputs: BatchInputs) -> Fraction | None:
    if inputs.params_b is not None:
        return exact(inputs.params_b) * BYTES_PER_GB
    if inputs.model is not None:
        return exact(inputs.model.params_b) * BYTES_PER_GB
    return None


def batch_options(
    inputs: BatchInputs, catalogue: Catalogue
) -> tuple[list[PathOption], list[Assumption]]:
    """Every device with a rate (measured on the card's own, else from the hardware) and the API."""
    options: list[PathOption] = []
    assumed: list[Assumption] = []
    params = _params(inputs)
    if params is not None and inputs.tokens_per_item is None:
        inputs = replace(inputs, tokens_per_item=DEFAULT_TOKENS_PER_ITEM)
        assumed.append(
            Assumption("tokens_per_item", f"{DEFAULT_TOKENS_PER_ITEM} (a chunk for an encoder)")
        )
    if params is None:
        assumed.append(
            Assumption("params_b", "unknown: only the measured worker and the API compared")
        )
    for acc in catalogue.accelerators:
        if not acc.is_memory_device:
            continue
        for device in (acc, *_smallest_slice(acc, params)):
            option = _batch_option(inputs, device, params)
            if option is not None:
                options.append(option)
    # The job's model picks the API's price row, as the serving comparison's does.
    price = api_price_for(catalogue.accelerators, inputs.model, inputs.params_b)
    if price.row is not None:
        option = _batch_api_option(inputs, price.row, price.reason)
        if option is not None:
            options.append(option)
    return options, assumed


def _smallest_slice(acc: Accelerator, params: Fraction | None) -> list[Accelerator]:
    """A batch worker needs one MIG slice, the smallest its weights fit: a larger one costs more
    for the same job on the same GPU."""
    need = (params or 0) * BYTES_PER_WEIGHT
    fitting = [s for s in mig_slices(acc) if s.memory_gb and s.memory_gb * 10**9 >= need]
    return sorted(fitting, key=lambda s: (s.price_per_hour_usd or 0, s.memory_gb or 0))[:1]


def _batch_run(inputs: BatchInputs, acc: Accelerator) -> BatchEstimate | None:
    measured = inputs.accelerator is not None and inputs.accelerator.id == acc.id
    if measured and inputs.items_per_s is not None:
        job = replace(inputs, api=None)
    else:
        job = replace(
            inputs, accelerator=engine_row(acc), items_per_s=None, price_per_hour=None, api=None
        )
    try:
        est = estimate_batch(job)
    except CapacityInputError:
        return None
    return est if est.items_per_s_per_worker is not None else None


def _batch_option(
    inputs: BatchInputs, acc: Accelerator, params: Fraction | None
) -> PathOption | None:
    est = _batch_run(inputs, acc)
    if est is None or est.workers_needed is None or est.hours_needed is None:
        return None
    path = path_of(acc)
    pool = est.workers or est.workers_needed
    limiter, reason = None, ""
    if params is not None and acc.memory_gb and params * BYTES_PER_WEIGHT > acc.memory_gb * 10**9:
        limiter, reason = "weights", f"the bf16 weights do not fit its {num(acc.memory_gb)} GB"
    elif est.fits_window is False:
        limiter, reason = (
            "window",
            (
                f"{pool} worker(s) need {num(est.hours_needed, 2)} h, over the "
                f"{num(est.window_hours)} h window"
            ),
        )
    cost, formula = _run_cost(est, pool)
    return PathOption(
        path=path,
        accelerator=acc.id,
        name=acc.name,
        count=pool,
        meets=limiter is None,
        limiter=limiter,
        reason=reason,
        cost_usd=cost,
        stack=BATCH_STACK[path],
        notes=(
            COLD_START[path],
            "spot or preemptible capacity fits: the job is retryable and has a window",
        ),
        figures={
            "items_per_s_per_worker": est.items_per_s_per_worker,
            "workers": pool,
            "hours_needed": est.hours_needed,
            "window_hours": est.window_hours,
        },
        formulas=tuple(est.formulas[1:]) + ((formula,) if formula else ()),
        assumptions=tuple(est.assumptions),
    )


def _run_cost(est: BatchEstimate, pool: int) -> tuple[Fraction | None, FormulaLine | None]:
    if est.price_per_hour_usd is None or est.hours_needed is None:
        return None, None
    price, hours = Fraction(str(est.price_per_hour_usd)), Fraction(str(est.hours_needed))
    cost = (hours + WORKER_STARTUP_HOURS) * pool * price
    return cost, FormulaLine(
        "Cost per run, with each worker's start-up",
        "(hours + 5 min start-up) × workers × price per hour",
        f"({num(hours, 4)} + {num(WORKER_STARTUP_HOURS, 4)}) h × {pool} × {money(price)} = "
        f"{money(cost)}",
    )


def _batch_api_option(inputs: BatchInputs, api: Accelerator, why: str) -> PathOption | None:
    try:
        est = estimate_batch(replace(inputs, api=api, accelerator=None, items_per_s=None))
    except CapacityInputError:
        return None
    if est.api_cost_usd is None or est.tokens_per_item is None:
        return None
    tokens = est.work_items * (est.tokens_per_item + (est.output_tokens_per_item or 0))
    per_minute = Fraction(tokens) / (exact(est.window_hours) * 60)
    limiter, reason = None, ""
    if per_minute > API_TOKENS_PER_MINUTE:
        limiter, reason = (
            "rate_limit",
            (
                f"{num(per_minute, 0)} tokens a minute to finish in the window, over the provider's "
                f"{whole(API_TOKENS_PER_MINUTE)}"
            ),
        )
    return PathOption(
        path="managed_api",
        accelerator=api.id,
        name=api.name,
        count=1,
        meets=limiter is None,
        limiter=limiter,
        reason=reason,
        cost_usd=Fraction(str(est.api_cost_usd)),
        stack=BATCH_STACK["managed_api"],
        notes=(
            f"rate limits: {API_RATE_LIMIT_SOURCE}",
            "the documents leave your network: not for data that must stay in-house",
            f"priced at {why}",
        ),
        figures={"tokens_per_minute": float(round(per_minute)), "window_hours": est.window_hours},
        formulas=tuple(f for f in est.formulas if f.label == "Managed API cost"),
    )


def training_options(
    inputs: TrainingInputs, catalogue: Catalogue
) -> tuple[list[PathOption], list[Assumption]]:
    """Each GPU at 1-8 (data parallel, states sharded), TPU slices and a CPU server, per run."""
    assumed: list[Assumption] = []
    if inputs.steps is None:
        inputs = replace(inputs, steps=DEFAULT_TRAINING_STEPS)
        assumed.append(Assumption("steps", f"{whole(DEFAULT_TRAINING_STEPS)} (steps not given)"))
    if inputs.batch_size is None:
        inputs = replace(inputs, batch_size=DEFAULT_BATCH_SIZE)
        assumed.append(Assumption("batch_size", f"{DEFAULT_BATCH_SIZE} sequences per step"))
    if inputs.seq_len is None:
        inputs = replace(inputs, seq_len=DEFAULT_SEQ_LEN)
        assumed.append(Assumption("seq_len", f"{whole(DEFAULT_SEQ_LEN)} tokens"))
    options: list[PathOption] = []
    for acc in catalogue.accelerators:
        if acc.kind == "managed_api":
            continue
        counts = TPU_COUNTS if acc.kind == "tpu" else GPU_COUNTS if acc.kind == "gpu" else (1,)
        for n in counts:
            option = _training_option(inputs, acc, n)
            if option is not None:
                options.append(option)
    return options, assumed


def _training_run(inputs: TrainingInputs, acc: Accelerator, n: int) -> TrainingEstimate | None:
    own = inputs.accelerator is not None and inputs.accelerator.id == acc.id
    job = replace(
        inputs,
        accelerator=engine_row(acc),
        gpus=n if n > 1 else None,
        gpu_memory_gb=None,
        tokens_per_s=inputs.tokens_per_s if own and (inputs.gpus or 1) == n else None,
        price_per_hour=inputs.price_per_hour if own else None,
    )
    try:
        return estimate_training(job)
    except CapacityInputError:
        return None


def _training_option(inputs: TrainingInputs, acc: Accelerator, n: int) -> PathOption | None:
    est = _training_run(inputs, acc, n)
    if est is None or est.fits is None:
        return None
    path = path_of(acc)
    limiter, reason = None, ""
    if not est.fits:
        limiter = "training_memory"
        reason = (
            f"{num(est.total_gb, 1)} GB per device for weights, gradients, optimizer and "
            f"activations, over its {num((est.gpu_memory_bytes or 0) / BYTES_PER_GB, 1)} GB"
        )
    cost = Fraction(str(est.cost_per_run_usd)) if est.cost_per_run_usd is not None else None
    return PathOption(
        path=path,
        accelerator=acc.id,
        name=acc.name,
        count=n,
        meets=limiter is None,
        limiter=limiter,
        reason=reason,
        cost_usd=cost,
        stack=TRAINING_STACK[path],
        notes=(
            COLD_START[path],
            "spot or preemptible capacity fits when the run checkpoints and resumes",
        ),
        figures={
            "total_gb": est.total_gb,
            "tokens_per_s": est.tokens_per_s,
            "hours_per_run": est.hours_per_run,
            "steps_per_s": est.steps_per_s,
        },
        formulas=tuple(f for f in est.formulas if f.label in {"Tokens per second", "Cost per run"}),
        assumptions=tuple(est.assumptions),
    )
