"""From the measured form to the comparison: the engine predicts the run the file describes."""

from __future__ import annotations

from planner.calculator.runs import engine_inputs
from planner.capacity import CapacityInputError, ServingInputs
from planner.capacity.measured import MeasuredComparison, measured_comparison
from planner.measured.forms import MeasuredForm


def form_measured_comparison(form: MeasuredForm) -> MeasuredComparison | None:
    """Validate, then compare; an engine input error lands on the field it names."""
    if not form.is_valid():
        return None
    run = form.cleaned_data.get("run")
    if run is None:
        return None
    try:
        base = ServingInputs(**engine_inputs(ServingInputs, form.cleaned_data))
        return measured_comparison(run, base)
    except CapacityInputError as err:
        form.add_error(err.field if err.field in form.fields else None, err.message)
        return None
