"""One form layer for the calculator: the page, the JSON API and the CLI all parse inputs here.

Field names are the CLI options with underscores (`--gpu-memory-gb` -> `gpu_memory_gb`), which are
also the query-string names of a shareable calculator link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from decimal import Decimal
from typing import Any, ClassVar
from urllib.parse import urlencode

from django import forms
from django.core.exceptions import ValidationError

from planner.capacity import (
    PRECISIONS,
    BatchEstimate,
    BatchInputs,
    CapacityInputError,
    ServingEstimate,
    ServingInputs,
    TrainingEstimate,
    TrainingInputs,
    default_catalogue,
    estimate_batch,
    estimate_serving,
    estimate_training,
)
from planner.capacity.training import LORA_TARGETS, METHODS

Estimate = ServingEstimate | TrainingEstimate | BatchEstimate
ESTIMATE_KINDS = ("serving", "training", "batch")
# Form field -> the engine input it fills with a catalogue row.
CATALOGUE_PICKERS = {"gpu": "accelerator", "model": "model"}
# Picker -> {form field it stands in for: the catalogue row's attribute}. An empty field takes the
# row's figure; the page shows that figure in the field (as its placeholder) so the learner sees it.
PICKER_FIELDS: dict[str, dict[str, str]] = {
    "gpu": {
        "gpu_memory_gb": "memory_gb",
        "memory_bandwidth_gb_s": "memory_bandwidth_gb_s",
        "price_per_hour": "price_per_hour_usd",
    },
    "model": {
        "params_b": "params_b",
        "layers": "layers",
        "kv_heads": "kv_heads",
        "head_dim": "head_dim",
        "hidden_size": "hidden_size",
    },
}
PICKER_SOURCE = {"gpu": "from the GPU", "model": "from the model"}
# Picking a row on the page empties the fields that would override it, so the pick takes effect.
PICKER_CLEARS: dict[str, list[str]] = {
    "gpu": list(PICKER_FIELDS["gpu"]),
    "model": [*PICKER_FIELDS["model"], "model_gb", "kv_per_user_gb"],
}


def _gt_zero(value: Decimal | int) -> None:
    if value is not None and value <= 0:
        raise ValidationError("must be greater than zero.", code="not_positive")


def _not_negative(value: Decimal | int) -> None:
    if value is not None and value < 0:
        raise ValidationError("must not be negative.", code="negative")


def _gb_field(label: str, help_text: str = "", *, allow_zero: bool = False) -> forms.DecimalField:
    return forms.DecimalField(
        label=label,
        required=False,
        help_text=help_text,
        validators=[_not_negative if allow_zero else _gt_zero],
        widget=forms.NumberInput(attrs={"step": "any", "inputmode": "decimal"}),
    )


def _int_field(label: str, help_text: str = "", *, allow_zero: bool = False) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        help_text=help_text,
        validators=[_not_negative if allow_zero else _gt_zero],
        widget=forms.NumberInput(attrs={"step": "1", "inputmode": "numeric"}),
    )


def _precision_field(label: str, help_text: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=label,
        required=False,
        help_text=help_text,
        choices=[("", "not given"), *((p, p) for p in PRECISIONS)],
    )


def _picker_field(label: str, help_text: str) -> forms.CharField:
    """A catalogue picker (GPU or model); its choices are filled when the form is built."""
    return forms.CharField(label=label, required=False, help_text=help_text, widget=forms.Select)


PICK_GPU_HELP = "Supplies memory, bandwidth and price; a figure you type overrides it."
PICK_MODEL_HELP = "Supplies parameters and architecture; a figure you type overrides it."


def picker_defaults() -> dict[str, dict[str, dict[str, str]]]:
    """For each picker, each catalogue id -> {field: the figure it supplies, as text}."""
    cat = default_catalogue()
    rows: dict[str, list[Any]] = {"gpu": cat.memory_devices(), "model": list(cat.models)}
    out: dict[str, dict[str, dict[str, str]]] = {}
    for picker, attrs in PICKER_FIELDS.items():
        out[picker] = {
            row.id: {
                field: f"{getattr(row, attr):g}"
                for field, attr in attrs.items()
                if getattr(row, attr, None) is not None
            }
            for row in rows[picker]
        }
    return out


def gpu_choices() -> list[tuple[str, str]]:
    return [("", "custom (type the memory)")] + [
        (a.id, f"{a.name} ({a.memory_gb:g} GB)") for a in default_catalogue().memory_devices()
    ]


def model_choices() -> list[tuple[str, str]]:
    return [("", "custom (type the size)")] + [
        (m.id, f"{m.name} ({m.params_b:g} B)") for m in default_catalogue().models
    ]


class CalculatorForm(forms.Form):
    """Shared behaviour: catalogue lookups, canonical query strings, running the engine."""

    kind: ClassVar[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The pickers list the catalogue as loaded now (prices may be overridden per deployment).
        for name, choices in (("gpu", gpu_choices), ("model", model_choices)):
            if name in self.fields:
                widget = self.fields[name].widget
                assert isinstance(widget, forms.Select)
                widget.choices = choices()
        self._show_picked_figures()

    def _show_picked_figures(self) -> None:
        """Empty fields that a picked GPU or model fills show its figure as their placeholder."""
        defaults = picker_defaults()
        for picker, source in PICKER_SOURCE.items():
            picked = str(self.data.get(picker, "") or "").strip().lower() if self.is_bound else ""
            figures = defaults[picker].get(picked, {})
            for field, value in figures.items():
                if field in self.fields:
                    self.fields[field].widget.attrs["placeholder"] = f"{value} ({source})"

    def _clean_catalogue_id(self, name: str, lookup: Callable[[str], object]) -> str:
        value: str = (self.cleaned_data.get(name) or "").strip().lower()
        if value:
            try:
                lookup(value)
            except CapacityInputError as err:
                raise ValidationError(err.message, code="unknown") from None
        return value

    def clean_gpu(self) -> str:
        return self._clean_catalogue_id("gpu", default_catalogue().accelerator)

    def clean_model(self) -> str:
        return self._clean_catalogue_id("model", default_catalogue().model)

    def given(self) -> dict[str, Any]:
        """The cleaned inputs the caller actually gave (None and "" dropped)."""
        return {k: v for k, v in self.cleaned_data.items() if v not in (None, "")}

    def query_dict(self) -> dict[str, str]:
        """The inputs as query-string values, for shareable links and saved cards."""
        out = {"estimate": self.kind}
        for key, value in self.given().items():
            if isinstance(value, bool):
                out[key] = "true" if value else "false"
            elif isinstance(value, Decimal):
                out[key] = format(value.normalize(), "f")
            else:
                out[key] = str(value)
        return out

    def query_string(self) -> str:
        return urlencode(self.query_dict())

    def estimate(self) -> Estimate | None:
        """Validate and run the engine; engine-level input errors land on the field they name."""
        if not self.is_valid():
            return None
        try:
            return self._run()
        except CapacityInputError as err:
            self.add_error(err.field if err.field in self.fields else None, err.message)
            return None

    def _run(self) -> Estimate:
        raise NotImplementedError

    def engine_kwargs(self, inputs_class: type[Any]) -> dict[str, Any]:
        """The cleaned inputs the engine's dataclass names (empty choices as None), plus the
        catalogue rows the GPU and model pickers name."""
        names = {f.name for f in fields(inputs_class)} - set(CATALOGUE_PICKERS.values())
        kwargs = {k: (None if v == "" else v) for k, v in self.cleaned_data.items() if k in names}
        cat = default_catalogue()
        if self.cleaned_data.get("gpu"):
            kwargs["accelerator"] = cat.accelerator(self.cleaned_data["gpu"])
        if self.cleaned_data.get("model"):
            kwargs["model"] = cat.model(self.cleaned_data["model"])
        return kwargs

    def field_errors(self) -> dict[str, list[str]]:
        return {field: [str(e) for e in errors] for field, errors in self.errors.items()}


class ServingForm(CalculatorForm):
    kind = "serving"

    gpu = _picker_field("GPU", PICK_GPU_HELP)
    gpu_memory_gb = _gb_field("GPU memory (GB)", "Overrides the GPU's memory. GB = 10⁹ bytes.")
    model = _picker_field("Model", PICK_MODEL_HELP)
    model_gb = _gb_field(
        "Weights (GB)", "The weight size, if you know it; else parameters × precision."
    )
    params_b = _gb_field("Parameters (billions)")
    weight_precision = _precision_field(
        "Weight precision", "fp32 4 bytes, bf16/fp16 2, fp8/int8 1, int4 0.5."
    )
    overhead_gb = _gb_field("Runtime overhead (GB)", allow_zero=True)
    kv_per_user_gb = _gb_field(
        "KV cache per user (GB)", "Leave empty to compute it from the architecture."
    )
    layers = _int_field("Layers")
    kv_heads = _int_field(
        "KV heads", "Grouped-query attention: fewer KV heads than attention heads."
    )
    head_dim = _int_field("Head dimension")
    kv_precision = _precision_field("KV cache precision", "Usually bf16; fp8 halves it.")
    context_tokens = _int_field("Context tokens per user")
    users = _int_field("Concurrent users (target)", allow_zero=True)
    memory_bandwidth_gb_s = _gb_field("Memory bandwidth (GB/s)", "Overrides the GPU's bandwidth.")
    min_decode_tokens_per_s = _gb_field("Decode speed target (tokens/s per stream)")
    latency_target_ms = _int_field(
        "Latency target (ms per request)",
        "With the output length, sets the decode speed a request needs.",
    )
    output_tokens = _int_field("Output tokens per request")

    def _run(self) -> ServingEstimate:
        return estimate_serving(ServingInputs(**self.engine_kwargs(ServingInputs)))


class TrainingForm(CalculatorForm):
    kind = "training"

    model = _picker_field("Model", PICK_MODEL_HELP)
    params_b = _gb_field("Parameters (billions)", "Overrides the model's parameter count.")
    method = forms.ChoiceField(
        label="Method",
        required=False,
        choices=[
            ("full", "full fine-tuning (mixed-precision Adam)"),
            ("lora", "LoRA"),
            ("qlora", "QLoRA (4-bit base)"),
        ],
    )
    lora_rank = _int_field("LoRA rank")
    lora_targets = forms.ChoiceField(
        label="LoRA targets",
        required=False,
        choices=[("", "not given (attention)"), *((t, t.replace("_", " ")) for t in LORA_TARGETS)],
    )
    batch_size = _int_field("Batch size (sequences per step)")
    seq_len = _int_field("Sequence length (tokens)")
    checkpointing = forms.TypedChoiceField(
        label="Activation checkpointing",
        required=False,
        choices=[("", "not given"), ("true", "on"), ("false", "off")],
        coerce=lambda v: v == "true",
        empty_value=None,
    )
    hidden_size = _int_field("Hidden size", "Overrides the model's hidden size.")
    layers = _int_field("Layers", "Overrides the model's layer count.")
    gpu = _picker_field("GPU", PICK_GPU_HELP)
    gpu_memory_gb = _gb_field("GPU memory (GB)")
    tokens_per_s = _gb_field("Measured training tokens/s")
    mfu = _gb_field(
        "Model FLOPs utilisation (0-1)", "Used with the GPU's TFLOPS when tokens/s is not measured."
    )
    steps = _int_field("Steps per run")
    price_per_hour = _gb_field("Price per hour (USD)", "Overrides the catalogue price.")

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

    def _run(self) -> TrainingEstimate:
        return estimate_training(TrainingInputs(**self.engine_kwargs(TrainingInputs)))


class BatchForm(CalculatorForm):
    kind = "batch"

    items = forms.IntegerField(label="Items (e.g. chunks to embed)", validators=[_gt_zero])
    window_hours = forms.DecimalField(
        label="Window (hours)",
        validators=[_gt_zero],
        widget=forms.NumberInput(attrs={"step": "any"}),
    )
    items_per_s = _gb_field("Items per second per worker", "Measured, or your assumption.")
    retry_margin = _gb_field("Retry margin (fraction, e.g. 0.2)", allow_zero=True)
    price_per_hour = _gb_field("Price per worker-hour (USD)")
    workers = _int_field("Workers available", "Leave empty to size the pool.")
    tokens_per_item = _int_field(
        "Input tokens per item", "Prices the same job on the catalogue's managed API, to compare."
    )
    output_tokens_per_item = _int_field(
        "Output tokens per item", "0 for embeddings.", allow_zero=True
    )

    def _run(self) -> BatchEstimate:
        api = default_catalogue().managed_api()
        return estimate_batch(BatchInputs(**self.engine_kwargs(BatchInputs), api=api))


FORMS: dict[str, type[CalculatorForm]] = {
    "serving": ServingForm,
    "training": TrainingForm,
    "batch": BatchForm,
}

# What the page shows before the learner types: the source's baseline and its two other cards.
DEFAULT_INPUTS: dict[str, dict[str, str]] = {
    "serving": {
        "gpu_memory_gb": "24",
        "model_gb": "14",
        "overhead_gb": "3",
        "kv_per_user_gb": "0.6",
        "users": "20",
    },
    "training": {
        "model": "mistral-7b",
        "method": "lora",
        "batch_size": "8",
        "seq_len": "2048",
        "checkpointing": "true",
        "gpu": "a100-80gb",
        "steps": "1000",
    },
    "batch": {
        "items": "50000",
        "window_hours": "2",
        "items_per_s": "10",
        "retry_margin": "0.2",
        "price_per_hour": "0.80",
    },
}


def calculator_form_for(kind: str, data: Any | None) -> CalculatorForm:
    """A bound form for `kind` from query/POST data; unknown kinds fall back to serving."""
    form_class = FORMS.get(kind, ServingForm)
    if data is None or not any(name in data for name in form_class.base_fields):
        data = DEFAULT_INPUTS[form_class.kind]
    return form_class(data)


class WorkloadCardSaveForm(forms.Form):
    """Save the current calculation as a workload card; the result is recomputed from `query`."""

    name = forms.CharField(label="Card name", max_length=120)
    latency_target_ms = forms.IntegerField(
        label="Latency target (ms, e.g. first token)", required=False, min_value=1
    )
    notes = forms.CharField(label="Notes", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    is_example = forms.BooleanField(label="Show to everyone as an example", required=False)
    query = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, can_publish: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not can_publish:
            del self.fields["is_example"]

    def calculation(self) -> tuple[CalculatorForm, Estimate] | None:
        """The calculator form and estimate for the saved inputs; errors land on `query`."""
        from django.http import QueryDict

        data = QueryDict(self.cleaned_data["query"], mutable=True)
        kind = data.get("estimate", "")
        latency = self.cleaned_data.get("latency_target_ms")
        if kind == "serving" and latency and not data.get("latency_target_ms"):
            # The card's latency target is checked like one typed into the calculator.
            data["latency_target_ms"] = str(latency)
        if kind not in FORMS:
            self.add_error(
                "query", "the calculation to save is missing; recalculate and try again."
            )
            return None
        calc = FORMS[kind](data)
        estimate = calc.estimate()
        if estimate is None:
            self.add_error("query", "the calculation has errors; fix them in the calculator first.")
            return None
        return calc, estimate
