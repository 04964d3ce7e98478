"""The calculator's forms: they parse and validate the inputs of the page, the JSON API and the CLI.

Field names are the CLI options with underscores (`--gpu-memory-gb` -> `gpu_memory_gb`), which are
also the query-string names of a shareable calculator link. The forms never run the engine:
planner.calculator.parsing hands their cleaned data to calculation_run.
"""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError

from planner.calculator.config_input import ConfigField
from planner.calculator.fields import (
    adam_bytes_field,
    engine_profile_field,
    fraction_field,
    gb_field,
    int_field,
    picker_field,
    precision_field,
    switch_field,
)
from planner.calculator.form_base import CalculatorForm
from planner.calculator.pickers import (
    PICK_GPU_HELP,
    PICK_MODEL_HELP,
)
from planner.capacity.training import LORA_TARGETS, METHODS
from planner.capacity.training.activations import LOGIT_BYTES

CONFIG_LABEL = "Model config.json"
CONFIG_HELP = (
    "Paste a Hugging Face config.json (or upload it): it replaces the model picked above; a figure "
    "you type below still overrides it."
)


class ServingForm(CalculatorForm):
    kind = "serving"

    gpu = picker_field("GPU", PICK_GPU_HELP)
    gpu_memory_gb = gb_field(
        "GPU memory (GB)", "Overrides the GPU's memory. GB = 10⁹ bytes.", maximum="10000"
    )
    model = picker_field("Model", PICK_MODEL_HELP)
    config = ConfigField(label=CONFIG_LABEL, help_text=CONFIG_HELP)
    model_gb = gb_field(
        "Weights (GB)",
        "The weight size, if you know it; else parameters × precision.",
        maximum="100000",
    )
    params_b = gb_field("Parameters (billions)", maximum="100000")
    weight_precision = precision_field(
        "Weight precision", "fp32 4 bytes, bf16/fp16 2, fp8/int8 1, int4 0.5."
    )
    overhead_gb = gb_field(
        "Runtime overhead (GB)",
        "Leave empty for a serving engine's own accounting (vLLM's), shown in parts.",
        allow_zero=True,
        maximum="10000",
    )
    gpu_memory_utilization = fraction_field(
        "GPU memory utilization (0-1)",
        "The share of the GPU a serving engine may use (vLLM's default 0.9). Without an overhead.",
    )
    engine_profile = engine_profile_field()
    max_num_seqs = int_field(
        "Max sequences (vLLM --max-num-seqs)",
        "The requests vLLM's start-up profile samples at once; the default depends on the engine "
        "version and the GPU. Without an overhead.",
        maximum=1_000_000,
    )
    tensor_parallel = int_field(
        "GPUs (tensor parallelism)",
        "GPUs of one kind the model is split over: weights and KV heads split N ways.",
        maximum=64,
    )
    vocab_size = int_field(
        "Vocabulary size",
        "With the hidden size: the 16-bit embeddings of a quantised model.",
        maximum=10_000_000,
    )
    hidden_size = int_field("Hidden size", maximum=1_000_000)
    intermediate_size = int_field(
        "MLP width (intermediate size)",
        "config.json's intermediate_size: sizes the activation peak vLLM profiles. Empty: derived "
        "from the parameter count.",
        maximum=10_000_000,
    )
    kv_per_user_gb = gb_field(
        "KV cache per user (GB)",
        "Leave empty to compute it from the architecture.",
        maximum="10000",
    )
    layers = int_field("Layers", maximum=10_000)
    kv_heads = int_field(
        "KV heads",
        "Grouped-query attention: fewer KV heads than attention heads.",
        maximum=10_000,
    )
    head_dim = int_field("Head dimension", maximum=100_000)
    kv_precision = precision_field("KV cache precision", "Usually bf16; fp8 halves it.")
    context_tokens = int_field("Context tokens per user", maximum=100_000_000)
    users = int_field("Concurrent users (target)", allow_zero=True, maximum=100_000_000)
    memory_bandwidth_gb_s = gb_field("Memory bandwidth (GB/s)", "Overrides the GPU's bandwidth.")
    min_decode_tokens_per_s = gb_field("Decode speed target (tokens/s per stream)")
    decode_batch = int_field(
        "Decode batch (streams at once)",
        "Streams decoding together; each step reads the weights once plus every stream's KV "
        "cache. Empty: the target users.",
        maximum=100_000,
    )
    latency_target_ms = int_field(
        "Answer latency target (ms, whole answer)",
        "First token plus every output token; with the output length, sets the decode speed needed.",
        maximum=86_400_000,
    )
    ttft_target_ms = int_field("Time-to-first-token target (ms)", maximum=86_400_000)
    prompt_tokens = int_field(
        "Prompt tokens per request",
        "Sets the prefill time (to the first token).",
        maximum=100_000_000,
    )
    output_tokens = int_field("Output tokens per request", maximum=100_000_000)
    burst_arrivals = int_field(
        "Requests arriving together",
        "A burst: each waits for the prefills ahead of it before its first token.",
        maximum=1_000_000,
    )
    arrival_rate_per_s = gb_field(
        "New requests per second",
        "Joining a continuous batch: their prefills slow every stream's next tokens.",
        allow_zero=True,
        maximum="1000000",
    )


class TrainingForm(CalculatorForm):
    kind = "training"

    model = picker_field("Model", PICK_MODEL_HELP)
    config = ConfigField(label=CONFIG_LABEL, help_text=CONFIG_HELP)
    params_b = gb_field("Parameters (billions)", "Overrides the model's parameter count.")
    method = forms.ChoiceField(
        label="Method",
        required=False,
        choices=[
            ("full", "full fine-tuning (mixed-precision Adam)"),
            ("lora", "LoRA"),
            ("qlora", "QLoRA (4-bit base)"),
        ],
    )
    lora_rank = int_field("LoRA rank", maximum=1_000_000)
    lora_targets = forms.ChoiceField(
        label="LoRA targets",
        required=False,
        choices=[("", "not given (attention)"), *((t, t.replace("_", " ")) for t in LORA_TARGETS)],
    )
    batch_size = int_field("Batch size (sequences per step)")
    seq_len = int_field("Sequence length (tokens)", maximum=100_000_000)
    checkpointing = forms.TypedChoiceField(
        label="Activation checkpointing",
        required=False,
        choices=[("", "not given"), ("true", "on"), ("false", "off")],
        coerce=lambda v: v == "true",
        empty_value=None,
    )
    activation_offload = switch_field(
        "Offload checkpoints to CPU RAM",
        "With checkpointing: the layer inputs wait in CPU RAM (Unsloth's offloading).",
    )
    hidden_size = int_field("Hidden size", "Overrides the model's hidden size.", maximum=1_000_000)
    layers = int_field("Layers", "Overrides the model's layer count.", maximum=10_000)
    vocab_size = int_field(
        "Vocabulary size",
        f"Sizes the logits: {LOGIT_BYTES} bytes a token per vocabulary entry (transformers "
        "upcasts the logits to fp32; four fp32 tensors are alive at the backward's peak).",
        maximum=10_000_000,
    )
    fused_loss = switch_field(
        "Fused loss (no logits kept)",
        "A loss kernel that never materialises the logits (Cut Cross-Entropy, Liger).",
    )
    adam_bytes = adam_bytes_field()
    gpus = int_field("GPUs (data parallel)", maximum=100_000)
    zero_stage = forms.TypedChoiceField(
        label="ZeRO stage",
        required=False,
        choices=[
            ("", "not given (3 with several GPUs)"),
            ("0", "0 (no sharding)"),
            ("1", "1 (optimizer states)"),
            ("2", "2 (+ gradients)"),
            ("3", "3 / FSDP (+ weights)"),
        ],
        coerce=int,
        empty_value=None,
    )
    gpu = picker_field("GPU", PICK_GPU_HELP)
    gpu_memory_gb = gb_field("GPU memory (GB)", maximum="10000")
    tokens_per_s = gb_field("Measured training tokens/s")
    mfu = gb_field(
        "Model FLOPs utilisation (0-1)", "Used with the GPU's TFLOPS when tokens/s is not measured."
    )
    steps = int_field("Steps per run")
    price_per_hour = gb_field("Price per hour (USD)", "Overrides the catalogue price.")

    def clean_method(self) -> str:
        value: str = self.cleaned_data.get("method") or "full"
        if value not in METHODS:
            raise ValidationError("use full, lora or qlora.", code="invalid")
        return value

    def clean_mfu(self) -> Decimal | None:
        value: Decimal | None = self.cleaned_data.get("mfu")
        if value is not None and value > 1:
            raise ValidationError("is a fraction of peak: at most 1.", code="too_big")
        return value


class BatchForm(CalculatorForm):
    kind = "batch"

    items = int_field("Items (e.g. chunks to embed)", maximum=10**12, required=True)
    # At least a minute (planner.capacity.batch.MIN_WINDOW_HOURS): shorter is not a batch job.
    window_hours = gb_field("Window (hours)", maximum="100000", minimum="0.0167", required=True)
    gpu = picker_field(
        "Worker GPU (or CPU server)", "Without a measured rate: sets it from the hardware."
    )
    model = picker_field("Model", "The model each item runs through (an embedding encoder).")
    params_b = gb_field(
        "Parameters (billions)", "Overrides the model's parameter count.", maximum="100000"
    )
    # Slower than one item in ~3 hours is a typo, not a worker (1e-30 items/s once "fitted").
    items_per_s = gb_field(
        "Items per second per worker",
        "Measured: it overrides the rate the GPU and model would give.",
        maximum="1e9",
        minimum="0.0001",
    )
    retry_margin = gb_field("Retry margin (fraction, e.g. 0.2)", allow_zero=True, maximum="100")
    price_per_hour = gb_field("Price per worker-hour (USD)")
    workers = int_field("Workers available", "Leave empty to size the pool.")
    tokens_per_item = int_field(
        "Input tokens per item",
        "Prices the same job on the catalogue's managed API, to compare.",
        maximum=100_000_000,
    )
    output_tokens_per_item = int_field(
        "Output tokens per item", "0 for embeddings.", allow_zero=True, maximum=100_000_000
    )


FORMS: dict[str, type[CalculatorForm]] = {
    "serving": ServingForm,
    "training": TrainingForm,
    "batch": BatchForm,
}
