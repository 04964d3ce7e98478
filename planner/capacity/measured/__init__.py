"""A load test's result read back into the planner: vLLM's `--save-result` JSON and GuideLLM's
report parsed as hostile input, then set beside the engine's prediction for the same run."""

from __future__ import annotations

from planner.capacity.measured.compare import (
    MeasuredComparison,
    Prediction,
    measured_comparison,
    predict_run,
)
from planner.capacity.measured.parse_guidellm import is_guidellm_report, read_guidellm
from planner.capacity.measured.parse_vllm import is_vllm_result, read_vllm
from planner.capacity.measured.run import (
    MAX_RESULT_BYTES,
    Distribution,
    MeasuredInputError,
    MeasuredRun,
    load_result,
)

__all__ = [
    "MAX_RESULT_BYTES",
    "Distribution",
    "MeasuredComparison",
    "MeasuredInputError",
    "MeasuredRun",
    "Prediction",
    "measured_comparison",
    "predict_run",
    "read_result",
]


def read_result(text: str | bytes, *, benchmark: int = 1) -> MeasuredRun:
    """The run a result file describes (vLLM's or GuideLLM's, told apart by their keys); anything
    else raises MeasuredInputError with one line naming what is wrong."""
    data = load_result(text)
    if is_guidellm_report(data):
        return read_guidellm(data, benchmark)
    if is_vllm_result(data):
        return read_vllm(data)
    raise MeasuredInputError(
        "is neither a vllm bench serve --save-result file (no `completed`) nor a GuideLLM report "
        "(no `benchmarks`)"
    )
