"""The calculator page's context, and its parts rendered from calculator.html's partials.

The parts that are the same for every visitor (the catalogue table, the pickers' figures, and each
estimate's tabs, form and result for the default inputs) are rendered once per process and kept
while the page's template and the catalogue are the objects they were rendered from: the template
loader caches the one and default_catalogue() the other, so a kept part is as fresh as a new render
would be. What names the visitor (the CSRF token, the navigation, the save form) is rendered per
request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict
from django.template.loader import get_template, render_to_string
from django.urls import reverse
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from accounts.http import HtmxHttpRequest
from planner.calculator.charts import memory_bar, roofline_chart
from planner.calculator.config_input import (
    CONFIG_FIELD,
    CONFIG_MAX_BYTES,
    ConfigError,
    config_spec_or_none,
    expand,
)
from planner.calculator.forms import CalculatorForm
from planner.calculator.parsing import calculator_form_for, form_estimate, uses_default_inputs
from planner.calculator.pickers import PICKER_CLEARS, picker_defaults
from planner.calculator.rendering import (
    figure_rows,
    form_rows,
    readable_assumptions,
    readable_error,
    readable_note,
    readable_warnings,
)
from planner.calculator.runs import ESTIMATE_KINDS, Estimate
from planner.capacity import BatchEstimate, ServingEstimate, TrainingEstimate, default_catalogue
from planner.capacity.formatting import num

PAGE = "planner/calculator.html"


def calculator_context(
    request: HtmxHttpRequest, form: CalculatorForm, estimate: Estimate | None
) -> dict[str, Any]:
    """What the form and result partials show for a bound form and its estimate."""
    kind = form.kind
    share_query = form.query_string() if estimate is not None else ""
    share_path = f"{reverse('planner:calculator')}?{share_query}"
    result = estimate.to_dict() if estimate is not None else None
    # The prose and the chart speak of one user count; the figures table keeps the engine's own.
    shown = fitted_speed(result) if isinstance(estimate, ServingEstimate) else result
    return {
        "kind": kind,
        "error_lines": _error_lines(form),
        "result": shown,
        "figures_html": figure_rows(result or {}),
        # Short forms for prose ("4.295", "0.6"); the exact figures are in `figures_html`.
        "display": {k: num(v) for k, v in (result or {}).items() if isinstance(v, float)},
        "bar": memory_bar(estimate) if estimate is not None else None,
        "speed_chart": roofline_chart(shown)
        if shown and isinstance(estimate, ServingEstimate)
        else None,
        "config_max_bytes": CONFIG_MAX_BYTES,
        "is_serving": isinstance(estimate, ServingEstimate),
        "serving_badge": _serving_badge(estimate) if isinstance(estimate, ServingEstimate) else "",
        "is_training": isinstance(estimate, TrainingEstimate),
        "is_batch": isinstance(estimate, BatchEstimate),
        "share_query": share_query,
        "share_path": share_path,
        "share_url": request.build_absolute_uri(share_path),
        "picked": _picked_rows(form) if estimate is not None else {},
        "rate_measured": estimate is not None and form.cleaned_data.get("items_per_s") is not None,
        "rows": form_rows(form),
        "warnings": readable_warnings(result or {}),
        "assumptions": readable_assumptions(form, result or {}),
        "overhead_parts": _overhead_parts(result or {}),
        "not_modelled": [readable_note(n) for n in (result or {}).get("not_modelled") or []],
        "method_name": METHOD_NAMES.get(str((result or {}).get("method")), ""),
    }


def fitted_speed(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A serving result whose decode figures are at the batch that fits: when the batch decoding
    together (by default the target users) is more than the users that fit in memory, the speed
    is read from the speed curve at the users that fit, so "8 active users fit" is not followed
    by a speed "with 20 decoding together". `asked_decode_batch` keeps the batch that was asked.
    Unchanged when the batch fits or the curve has no point at the users that fit."""
    if not result:
        return result
    batch, fit = result.get("decode_batch"), result.get("max_active_users")
    if not isinstance(batch, int) or not isinstance(fit, int) or not 1 <= fit < batch:
        return result
    point = next(
        (
            p
            for p in result.get("speed_curve") or []
            if isinstance(p, dict) and p.get("batch") == fit
        ),
        None,
    )
    if point is None or point.get("decode_tokens_per_s") is None:
        return result
    shown = {
        **result,
        "asked_decode_batch": batch,
        "decode_batch": fit,
        "decode_tokens_per_s": point["decode_tokens_per_s"],
        "decode_tokens_per_s_upper_bound": point.get("decode_tokens_per_s_upper_bound"),
        "aggregate_tokens_per_s": point.get("aggregate_tokens_per_s"),
    }
    cost, before, after = (
        result.get("cost_per_million_output_tokens_usd"),
        result.get("aggregate_tokens_per_s"),
        point.get("aggregate_tokens_per_s"),
    )
    # The same hourly price spread over the tokens of the smaller batch.
    shown["cost_per_million_output_tokens_usd"] = (
        cost * before / after if cost is not None and before and after else None
    )
    return shown


METHOD_NAMES = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}

OVERHEAD_PART_LABELS = {
    "utilization_headroom": "Held back by the engine's memory-use limit (its gpu_memory_utilization)",
    "activation_peak": "Activation peak (profiled)",
    "non_torch": "CUDA context and libraries (non-torch)",
}


def _overhead_parts(result: dict[str, Any]) -> list[tuple[str, str]]:
    """The engine's overhead parts as (label, "1.23 GB") for the page."""
    parts = result.get("overhead_parts_gb") or {}
    return [(OVERHEAD_PART_LABELS.get(k, k), f"{v:,.2f} GB") for k, v in parts.items()]


# Errors that leave the users fitting in memory but too slow for the target.
SPEED_ERRORS = frozenset({"memory_bound", "decode_too_slow"})


def _serving_badge(estimate: ServingEstimate) -> str:
    """The headline's verdict: the users can fit and still miss the speed target."""
    if estimate.fits:
        return "fits"
    errors = {str(w.code) for w in estimate.warnings if w.severity == "error"}
    return "too slow" if errors and errors <= SPEED_ERRORS else "does not fit"


def _error_lines(form: CalculatorForm) -> list[str]:
    """Each error as "Field label: message". Built here: the batch form has a field named `items`,
    which a template's `form.errors.items` would look up instead of the dict method."""
    lines: list[str] = []
    for name, messages in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        text = str(form.data.get(name, "") or "")
        readable = [readable_error(str(m), text) for m in messages]
        lines += [f"{label}: {m}" if label else m for m in readable]
    return lines


def _picked_rows(form: CalculatorForm) -> dict[str, Any]:
    """The catalogue rows the GPU and model pickers chose, to show what they supplied."""
    cat = default_catalogue()
    data = form.cleaned_data
    return {
        "gpu": cat.accelerator(data["gpu"]) if data.get("gpu") else None,
        "model": cat.model(data["model"]) if data.get("model") else None,
        "config": config_spec_or_none(data.get(CONFIG_FIELD)),
        "config_name": config_model_name(data.get(CONFIG_FIELD)),
    }


def config_model_name(text: object) -> str | None:
    """A pasted config.json's model as people know it: its `_name_or_path` (the Hub's
    "Qwen/Qwen2.5-7B-Instruct"), else None (the page then names the architecture)."""
    if not isinstance(text, str) or not text.strip() or len(text) > CONFIG_MAX_BYTES:
        return None
    try:
        data = json.loads(expand(text.strip()))
    except (ValueError, ConfigError, RecursionError):
        return None
    name = data.get("_name_or_path") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip() or len(name) > 120:
        return None
    # A local path names the folder the config came from ("/models/llama-3-8b" -> "llama-3-8b").
    name = name.strip()
    return name.rstrip("/").rsplit("/", 1)[-1] if name.startswith(("/", ".")) else name


@dataclass(frozen=True, slots=True)
class CalculatorParts:
    """The form and the result as HTML, with what the save form repeats of them."""

    form_html: SafeString
    result_html: SafeString
    share_query: str
    card_latency_ms: float | None


def calculator_parts(
    request: HtmxHttpRequest,
    kind: str,
    data: QueryDict,
    input_errors: dict[str, str] | None = None,
) -> CalculatorParts:
    form = calculator_form_for(kind, data, input_errors=input_errors)
    context = calculator_context(request, form, form_estimate(form))
    return CalculatorParts(
        form_html=SafeString(render_to_string(f"{PAGE}#form", context)),
        result_html=SafeString(render_to_string(f"{PAGE}#result", context, request)),
        share_query=context["share_query"],
        card_latency_ms=(context["result"] or {}).get("latency_target_ms"),
    )


class ProcessMemo:
    """Rendered parts kept for the life of the process: each is a function of its key, the page's
    template and the catalogue, so all are dropped when either of those two is replaced (the
    template loader's reset in development, a new PLANNER_PRICES_FILE)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._sources: tuple[object, object] | None = None
        self._values: dict[Hashable, Any] = {}

    def get[T](self, key: Hashable, render: Callable[[], T]) -> T:
        template: object = get_template(PAGE).template  # type: ignore[attr-defined]
        catalogue = default_catalogue()
        if self._sources is None or (
            self._sources[0] is not template or self._sources[1] is not catalogue
        ):
            self._sources, self._values = (template, catalogue), {}
        try:
            value: T = self._values[key]
        except KeyError:
            # Keys carry the request's origin; a bound keeps a stream of Host names finite.
            if len(self._values) >= self.limit:
                self._values = {}
            value = self._values[key] = render()
        return value

    def values(self) -> list[Any]:
        return list(self._values.values())

    def clear(self) -> None:
        self._sources, self._values = None, {}


page_memo = ProcessMemo(limit=64)


def calculator_page(
    request: HtmxHttpRequest,
    kind: str,
    data: QueryDict | None = None,
    input_errors: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The full page's context: the parts for these inputs (kept when they are the defaults)."""
    language = get_language()
    inputs = request.GET if data is None else data
    if uses_default_inputs(kind, inputs) and not input_errors:
        # The result's share link is absolute: the origin is part of what was rendered.
        key = ("parts", kind, request.build_absolute_uri("/"), language)
        parts = page_memo.get(key, lambda: calculator_parts(request, kind, inputs))
    else:
        parts = calculator_parts(request, kind, inputs, input_errors)
    return {
        "kind": kind,
        "tabs_html": page_memo.get(("tabs", kind, language), lambda: _tabs_html(kind)),
        "form_html": parts.form_html,
        "result_html": parts.result_html,
        "share_query": parts.share_query,
        "card_latency_ms": parts.card_latency_ms,
        "catalogue_html": page_memo.get(("catalogue", language), _catalogue_html),
        "picker_json": page_memo.get("pickers", _picker_json),
    }


def _tabs_html(kind: str) -> SafeString:
    return SafeString(render_to_string(f"{PAGE}#tabs", {"kinds": ESTIMATE_KINDS, "kind": kind}))


def _catalogue_html() -> SafeString:
    return SafeString(render_to_string(f"{PAGE}#catalogue", {"catalogue": default_catalogue()}))


def _picker_json() -> SafeString:
    return json_script({"defaults": picker_defaults(), "clears": PICKER_CLEARS}, "picker-data")
