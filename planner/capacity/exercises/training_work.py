"""The training-memory exercise: each part of a GPU's memory on its own line, the total their
sum, and the answers the known mistakes give (the CUDA context left out, full fine-tuning priced
for LoRA)."""

from __future__ import annotations

from typing import Final

from planner.capacity.exercises.inputs import Values
from planner.capacity.exercises.work import Facts, Worked, rounded
from planner.capacity.results import FormulaLine
from planner.capacity.training import TrainingEstimate, TrainingInputs, estimate_training
from planner.capacity.training.memory import QLORA_CONSTANT_BYTES, QLORA_WEIGHT_BYTES

_TRAINING_NAMES: Final = {
    "model": "model",
    "params_b": "params_b",
    "method": "method",
    "lora_rank": "lora_rank",
    "seq_len": "seq_len",
    "batch_size": "batch_size",
    "gpus": "gpus",
}


def _gb3(value: float) -> str:
    return f"{value:,.3f} GB"


def training_memory_gb(values: Values) -> Worked:
    """Per GPU: each part on its own line, and the total their sum, so the lines add up."""
    given = {_TRAINING_NAMES[k]: v for k, v in values.items() if k in _TRAINING_NAMES}
    estimate = estimate_training(TrainingInputs(**given))
    parts = _parts(estimate)
    engine = {f.label.split(" (")[0]: f for f in estimate.formulas}
    lines = [
        *([engine["LoRA adapter parameters"]] if "LoRA adapter parameters" in engine else []),
        *(
            FormulaLine(
                label,
                formula,
                text if text.endswith("GB") else (f"{text} = " if text else "") + _gb3(value),
            )
            for label, formula, text, value in parts
        ),
        FormulaLine(
            "Total per GPU",
            "the sum of the lines above",
            " + ".join(f"{value:,.3f}" for *_rest, value in parts)
            + f" = {_gb3(sum(p[-1] for p in parts))}",
        ),
    ]
    return float(sum(p[-1] for p in parts)), lines, _facts(values, estimate)


Part = tuple[str, str, str, float]  # label, formula, substituted (without the GB), GB


def _first_part(estimate: TrainingEstimate, frozen: float, per_gpu: str) -> Part:
    """The weights' line: all of them (full), or the frozen base (LoRA bf16, QLoRA NF4)."""
    billions = f"{estimate.params / 10**9:,.2f} B"
    if estimate.method == "full":
        return ("Weights (bf16)", "parameters × 2 bytes", f"{billions} × 2{per_gpu}", frozen)
    engine = {f.label.split(" (")[0]: f for f in estimate.formulas}
    if estimate.method == "qlora" and "Frozen base weights" in engine:
        line = engine["Frozen base weights"]
        return ("Frozen base weights (4-bit NF4)", line.formula, line.substituted, frozen)
    return ("Frozen base weights (bf16)", "parameters × 2 bytes", f"{billions} × 2", frozen)


def _parts(estimate: TrainingEstimate) -> list[Part]:
    figures = estimate.to_dict()
    method, gpus, trainable = estimate.method, estimate.gpus, estimate.trainable_params
    adapter_weights = 0.0 if method == "full" else trainable * 2 / 10**9 / gpus
    frozen = figures["weights_gb"] - adapter_weights
    activations = figures.get("activations_gb") or 0.0
    adapters = f"{trainable:,}"
    per_gpu = f" ÷ {gpus} GPUs" if gpus > 1 else ""
    counted = f"{estimate.params / 10**9:,.2f} B" if method == "full" else adapters
    return [
        _first_part(estimate, frozen, per_gpu),
        *(
            [("Adapter weights (bf16)", "trainable × 2 bytes", f"{adapters} × 2", adapter_weights)]
            if method != "full"
            else []
        ),
        (
            "Gradients (bf16)",
            "trainable × 2 bytes",
            f"{counted} × 2{per_gpu}",
            figures["gradients_gb"],
        ),
        (
            "Optimizer state (fp32 master copy and two moments)",
            "trainable × 12 bytes",
            f"{counted} × 12{per_gpu}",
            figures["optimizer_state_gb"],
        ),
        *(
            [("Activations", "the estimate's activation memory", "", activations)]
            if activations
            else []
        ),
        (
            "CUDA context (one process per GPU)",
            "measured on an H100",
            "",
            figures["cuda_context_gb"],
        ),
    ]


def _facts(values: Values, estimate: TrainingEstimate) -> Facts:
    spec = values.get("model")
    facts: Facts = {
        "params_b": rounded(estimate.params / 10**9, 2),
        "trainable_params": estimate.trainable_params,
        "cuda_context_gb": rounded(estimate.to_dict()["cuda_context_gb"], 3),
        "nf4_bytes": rounded(QLORA_WEIGHT_BYTES + QLORA_CONSTANT_BYTES, 3),
    }
    if spec is not None and spec.vocab_size and spec.hidden_size:
        tied = 1 if spec.tie_word_embeddings else 2
        facts["embedding_params_b"] = rounded(spec.vocab_size * spec.hidden_size * tied / 1e9, 3)
    return facts


# Mistakes learners make here, by name as instructors read them (issue 44's analytics).
CUDA_CONTEXT_LEFT_OUT: Final = "left out the CUDA context"
FULL_FOR_LORA: Final = "priced full fine-tuning for LoRA"


def known_mistakes(exercise: str, values: Values, answer: float, facts: Facts) -> dict[str, float]:
    """The answer each known mistake gives with these numbers (none for most exercises)."""
    if exercise != "training_memory_gb":
        return {}
    out = {CUDA_CONTEXT_LEFT_OUT: answer - float(facts["cuda_context_gb"])}
    if values.get("method") in {"lora", "qlora"}:
        full, _, _ = training_memory_gb({**values, "method": "full", "lora_rank": None})
        out[FULL_FOR_LORA] = full
    return out
