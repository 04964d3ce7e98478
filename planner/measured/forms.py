"""The measured-result form: the serving estimate's inputs (model, GPU, TP, precisions) and the
load test's result file, pasted or uploaded. The run's own lengths and load come from the file."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from planner.calculator.fields import int_field
from planner.calculator.forms import ServingForm
from planner.capacity.measured import MAX_RESULT_BYTES, MeasuredInputError, read_result

RESULT_FIELD = "result"
RESULT_FILE_FIELD = "result_file"  # the page's upload, beside its paste box
# The file sets these: its mean lengths, its concurrency or rate.
RUN_FIELDS = (
    "prompt_tokens",
    "output_tokens",
    "decode_batch",
    "burst_arrivals",
    "arrival_rate_per_s",
)


def too_big(size: int) -> str:
    return (
        f"is {size:,} bytes; at most {MAX_RESULT_BYTES // (1024 * 1024)} MiB are read (save the "
        "result without --save-detailed)."
    )


def paste_too_big(size: int) -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or MAX_RESULT_BYTES
    return (
        f"is {size:,} bytes; a pasted result may be {limit:,} bytes at most: upload the file "
        f"instead (up to {MAX_RESULT_BYTES // (1024 * 1024)} MiB)."
    )


class ResultField(forms.CharField):
    """The result file's text, bounded before it is read."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}))
        super().__init__(required=False, strip=True, **kwargs)

    def to_python(self, value: Any) -> str:
        if isinstance(value, str) and len(value) > MAX_RESULT_BYTES:
            raise ValidationError(too_big(len(value.encode())), code="too_long")
        return str(super().to_python(value) or "")


class MeasuredForm(ServingForm):
    """ServingForm's inputs (without the run's lengths and load) and the result file."""

    prompt_tokens = None  # type: ignore[assignment]
    output_tokens = None  # type: ignore[assignment]
    decode_batch = None  # type: ignore[assignment]
    burst_arrivals = None  # type: ignore[assignment]
    arrival_rate_per_s = None  # type: ignore[assignment]
    result = ResultField(
        label="Load test result (JSON)",
        help_text="Paste the file `vllm bench serve --save-result` or `guidellm benchmark` wrote, "
        "or upload it below.",
    )
    benchmark = int_field(
        "GuideLLM benchmark number",
        "A GuideLLM report holds one benchmark per rate it ran: which one (1 = the first).",
        maximum=1000,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["users"].label = "Concurrent users (when the file gives none)"
        self.fields[
            "users"
        ].help_text = "Used only when the file gives neither a concurrency nor a request rate."
        self.order_fields([RESULT_FIELD, "benchmark", "gpu", "model"])

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        text = cleaned.get(RESULT_FIELD)
        if not text and RESULT_FIELD not in self.errors:
            self.add_error(
                RESULT_FIELD, "give the load test's result: paste it or upload the file."
            )
        elif text:
            try:
                cleaned["run"] = read_result(text, benchmark=int(cleaned.get("benchmark") or 1))
            except MeasuredInputError as err:
                self.add_error(err.field if err.field in self.fields else RESULT_FIELD, err.message)
        return cleaned

    def query_dict(self) -> dict[str, str]:
        """The estimate's inputs (not the file) as a query string: the page's link."""
        out = super().query_dict()
        out.pop(RESULT_FIELD, None)
        out.pop("run", None)
        return out
