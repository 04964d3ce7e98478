"""One calculation run for every caller: the page, the JSON API, the CLI, workload cards, the capstone.

`data` is already parsed (the calculator form's cleaned data, or typed values such as the example
cards'): numbers as Decimal or int, the GPU and model pickers as catalogue ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from decimal import Decimal
from typing import Any

from planner.calculator.config_input import CONFIG_FIELD, config_model
from planner.calculator.pickers import CATALOGUE_PICKERS
from planner.capacity import (
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
from planner.capacity.api_prices import api_price_for

Estimate = ServingEstimate | TrainingEstimate | BatchEstimate
ESTIMATE_KINDS = ("serving", "training", "batch")


def engine_inputs(inputs_class: type[Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The values the engine's dataclass names (empty choices as None), plus the catalogue rows
    the GPU and model pickers name; a config.json replaces the picked model."""
    names = {f.name for f in fields(inputs_class)} - set(CATALOGUE_PICKERS.values())
    kwargs = {k: (None if v == "" else v) for k, v in data.items() if k in names}
    cat = default_catalogue()
    if data.get("gpu"):
        kwargs["accelerator"] = cat.accelerator(data["gpu"])
    if data.get("model"):
        kwargs["model"] = cat.model(data["model"])
    if data.get(CONFIG_FIELD) and "model" in {f.name for f in fields(inputs_class)}:
        kwargs["model"] = config_model(data[CONFIG_FIELD])
    return kwargs


def calculation_run(kind: str, data: Mapping[str, Any]) -> Estimate:
    """The engine's estimate of `kind` for the parsed inputs; CapacityInputError names the field."""
    if kind == "serving":
        return estimate_serving(ServingInputs(**engine_inputs(ServingInputs, data)))
    if kind == "training":
        return estimate_training(TrainingInputs(**engine_inputs(TrainingInputs, data)))
    if kind == "batch":
        kwargs = engine_inputs(BatchInputs, data)
        # The job's model picks the API's price row, as the comparison of paths does.
        api = api_price_for(
            default_catalogue().accelerators, kwargs.get("model"), kwargs.get("params_b")
        )
        return estimate_batch(BatchInputs(**kwargs, api=api.row))
    raise CapacityInputError("estimate", "use serving, training or batch.")


def query_values(kind: str, data: Mapping[str, Any]) -> dict[str, str]:
    """The inputs given (None and "" dropped) as query-string values: shareable links, saved cards."""
    out = {"estimate": kind}
    for key, value in data.items():
        if value in (None, ""):
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, Decimal):
            out[key] = format(value.normalize(), "f")
        else:
            out[key] = str(value)
    return out
