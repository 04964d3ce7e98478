"""The capacity engine: serving, training and batch estimates in exact bytes. No Django here.

GB means 10^9 bytes. The CLI, the JSON API, the calculator page and the capstone check all call
these functions, so they agree to the byte.
"""

from planner.capacity.batch import BatchEstimate, BatchInputs, estimate_batch
from planner.capacity.catalogue import (
    Accelerator,
    Catalogue,
    MigProfile,
    ModelSpec,
    default_catalogue,
    load_catalogue,
)
from planner.capacity.hf.config import model_from_config
from planner.capacity.results import Assumption, EstimateWarning, FormulaLine, Severity, WarningCode
from planner.capacity.serving import (
    ServingEstimate,
    ServingInputs,
    estimate_serving,
    kv_bytes_per_token,
)
from planner.capacity.serving.memory import checkpoint_size_range
from planner.capacity.training import (
    TrainingEstimate,
    TrainingInputs,
    estimate_training,
    lora_adapter_params,
)
from planner.capacity.units import BYTES_PER_GB, PRECISIONS, CapacityInputError

__all__ = [
    "BYTES_PER_GB",
    "PRECISIONS",
    "Accelerator",
    "Assumption",
    "BatchEstimate",
    "BatchInputs",
    "CapacityInputError",
    "Catalogue",
    "EstimateWarning",
    "FormulaLine",
    "MigProfile",
    "ModelSpec",
    "ServingEstimate",
    "ServingInputs",
    "Severity",
    "TrainingEstimate",
    "TrainingInputs",
    "WarningCode",
    "checkpoint_size_range",
    "default_catalogue",
    "estimate_batch",
    "estimate_serving",
    "estimate_training",
    "kv_bytes_per_token",
    "load_catalogue",
    "lora_adapter_params",
    "model_from_config",
]
