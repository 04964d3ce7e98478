"""From the measured form to the comparison: the engine predicts the run the file describes."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import QueryDict

from planner.calculator.runs import engine_inputs
from planner.capacity import CapacityInputError, ServingInputs
from planner.capacity.measured import MeasuredComparison, measured_comparison
from planner.measured.forms import RESULT_FIELD, MeasuredForm


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


# A deployment's link: the measured page's, or any planner link whose query names the inputs.
LINK_MAX_CHARS = 2000


def measured_form_for_link(link: str, result: str) -> MeasuredForm:
    """The measured form bound to a link's inputs (the deployment) and a result file's text."""
    query = urlsplit(link.strip()).query if "?" in link else link.strip()
    data = QueryDict(query[:LINK_MAX_CHARS], mutable=True)
    for name in list(data):
        if name not in MeasuredForm.base_fields or name == RESULT_FIELD:
            del data[name]
    data[RESULT_FIELD] = result
    return MeasuredForm(data)


class MeasuredAttachError(ValueError):
    """A result that cannot be set beside its prediction; the message is one line naming why."""


def measured_for_link(link: str, result: str) -> MeasuredComparison:
    """The comparison of a result file on the deployment a link names; MeasuredAttachError
    (one line, each error naming its input) when either is refused."""
    form = measured_form_for_link(link, result)
    comparison = form_measured_comparison(form)
    if comparison is None:
        raise MeasuredAttachError(
            "; ".join(
                f"{name.replace('_', ' ')}: {' '.join(messages)}"
                for name, messages in form.field_errors().items()
            )
        )
    return comparison
