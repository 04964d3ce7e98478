"""The GPU and model pickers: catalogue rows that fill the calculator's empty fields."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from planner.capacity import Catalogue, default_catalogue

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
        "intermediate_size": "intermediate_size",
        "vocab_size": "vocab_size",
    },
}
PICKER_SOURCE = {"gpu": "from the GPU", "model": "from the model"}
CONFIG_SOURCE = "from config.json"
# Picking a row on the page empties the fields that would override it, so the pick takes effect.
PICKER_CLEARS: dict[str, list[str]] = {
    "gpu": list(PICKER_FIELDS["gpu"]),
    "model": [*PICKER_FIELDS["model"], "model_gb", "kv_per_user_gb"],
}


PICK_GPU_HELP = "Supplies memory, bandwidth and price; a figure you type overrides it."
PICK_MODEL_HELP = "Supplies parameters and architecture; a figure you type overrides it."


def per_catalogue[T](build: Callable[[Catalogue], T]) -> Callable[[], T]:
    """`build(default_catalogue())`, computed once per catalogue object: default_catalogue() keeps
    one per prices file, so the value is rebuilt exactly when the catalogue is. Callers share the
    value and must not change it."""
    kept: list[tuple[Catalogue, T]] = []

    @wraps(build)
    def current() -> T:
        catalogue = default_catalogue()
        if not kept or kept[0][0] is not catalogue:
            kept[:] = [(catalogue, build(catalogue))]
        return kept[0][1]

    return current


@per_catalogue
def picker_defaults(cat: Catalogue) -> dict[str, dict[str, dict[str, str]]]:
    """For each picker, each catalogue id -> {field: the figure it supplies, as text}."""
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


@per_catalogue
def gpu_choices(cat: Catalogue) -> tuple[tuple[str, str], ...]:
    rows = ((a.id, f"{a.name} ({a.memory_gb:g} GB)") for a in cat.memory_devices())
    return (("", "custom (type the memory)"), *rows)


@per_catalogue
def model_choices(cat: Catalogue) -> tuple[tuple[str, str], ...]:
    rows = ((m.id, f"{m.name} ({m.params_b:g} B)") for m in cat.models)
    return (("", "custom (type the size)"), *rows)
