"""Which managed-API price row prices a model: providers price open-weight models by total
parameter count and architecture (Fireworks AI's serverless table: up to 16 B, 16.1-80 B, MoE up
to 56 B, MoE 56.1-176 B), and a few models by name. A model's own row comes first, then the smallest
size class of its family that holds its parameters; a model larger than every class has none."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from planner.capacity.catalogue_rows import Accelerator, ModelSpec
from planner.capacity.formatting import num, plain
from planner.capacity.units import exact


@dataclass(frozen=True, slots=True)
class ApiPrice:
    """The row that prices the model (None: no published price covers it) and why, in words."""

    row: Accelerator | None
    reason: str


def price_family(model: ModelSpec | None) -> str:
    """The family a provider prices the model as: "moe", else "dense" (a multimodal model is
    priced by its parameters as a dense one, an encoder too)."""
    return "moe" if model is not None and model.family == "moe" else "dense"


def api_price_for(
    accelerators: Iterable[Accelerator],
    model: ModelSpec | None,
    params_b: Fraction | Decimal | float | None = None,
) -> ApiPrice:
    """The managed-API row for `model`; `params_b`, where given, is its size (a bare parameter
    count with no model is priced as a dense model)."""
    rows = [a for a in accelerators if a.kind == "managed_api"]
    if not rows:
        return ApiPrice(None, "the catalogue has no managed-API row")
    if model is not None:
        named = next((r for r in rows if model.id in r.api_models), None)
        if named is not None:
            return ApiPrice(named, f"{named.name}: the provider's published price for {model.name}")
        params_b = model.params_b if params_b is None else params_b
    if params_b is None:
        return ApiPrice(rows[0], f"{rows[0].name}: no model given, the catalogue's first row")
    size, family = exact(params_b), price_family(model)
    classes = sorted(
        (r for r in rows if r.api_family == family and r.api_max_params_b is not None),
        key=lambda r: exact(r.api_max_params_b or 0),
    )
    words = "mixture-of-experts" if family == "moe" else "dense"
    who = f"{model.name}, " if model is not None else ""
    for row in classes:
        if size <= exact(row.api_max_params_b or 0):
            return ApiPrice(
                row,
                f"{row.name}: {who}a {words} model of {plain(size)} B parameters, in the "
                f"smallest class that holds it (up to {plain(exact(row.api_max_params_b or 0))} B)",
            )
    if not classes:
        # A row that names no class (a catalogue of one API price) prices every model.
        plain_row = next((r for r in rows if not r.api_family and not r.api_models), None)
        if plain_row is not None:
            return ApiPrice(
                plain_row, f"{plain_row.name}: the catalogue's one price for every model"
            )
        return ApiPrice(None, f"no managed-API row prices a {words} model")
    largest = classes[-1]
    return ApiPrice(
        None,
        f"no provider in the catalogue publishes a per-token price for a {words} model of "
        f"{num(size, 0)} B parameters: the largest class is {largest.name}",
    )
