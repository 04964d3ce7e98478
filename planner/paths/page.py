"""The comparison page's context: the form's fields, the options as table rows, the chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from planner.capacity.formatting import num
from planner.capacity.paths import PathComparison, PathOption
from planner.paths.charts import cost_chart
from planner.paths.forms import PATH_LABELS, ComparisonForms

# The table's figure columns per estimate: (heading, figure key, decimals).
COLUMNS: dict[str, list[tuple[str, str, int]]] = {
    "serving": [
        ("First token (ms)", "time_to_first_token_ms", 0),
        ("Decode per stream (tokens/s)", "decode_tokens_per_s", 1),
        ("Users that fit", "max_active_users", 0),
    ],
    "batch": [
        ("Items/s per worker", "items_per_s_per_worker", 2),
        ("Hours", "hours_needed", 2),
    ],
    "training": [
        ("GB per device", "total_gb", 1),
        ("Hours per run", "hours_per_run", 2),
    ],
}
# A serving comparison sets these for each path itself: the page does not ask for them.
PER_PATH_FIELDS = {
    "gpu",
    "gpu_memory_gb",
    "memory_bandwidth_gb_s",
    "tensor_parallel",
    "max_num_seqs",
}
COST_HEADING = {"serving": "Cost per day (USD)", "batch": "Cost per run (USD)"}
LIMITER_WORDS = {
    "weights": "weights do not fit",
    "kv_cache": "KV cache",
    "bandwidth": "memory bandwidth",
    "compute": "compute",
    "queueing": "queueing",
    "rate_limit": "rate limit",
    "window": "batch window",
    "training_memory": "training memory",
}


@dataclass(frozen=True, slots=True)
class OptionRow:
    option: PathOption
    cost: str
    per_million: str
    cells: list[str]
    limiter: str
    path_label: str


def _figure(value: Any, places: int) -> str:
    if value is None:
        return "—"
    return num(value, places) if isinstance(value, (int, float)) else str(value)


def option_rows(kind: str, options: list[PathOption]) -> list[OptionRow]:
    return [
        OptionRow(
            option=o,
            cost=f"{o.cost_usd:,.2f}" if o.cost_usd is not None else "—",
            per_million=(
                f"{o.cost_per_million_output_tokens_usd:,.2f}"
                if o.cost_per_million_output_tokens_usd is not None
                else "—"
            ),
            cells=[_figure(o.figures.get(key), places) for _, key, places in COLUMNS[kind]],
            limiter=LIMITER_WORDS.get(o.limiter or "", "")
            if o.limiter or o.meets
            else "no published price",
            path_label=PATH_LABELS[o.path].split(" (")[0],
        )
        for o in options
    ]


def first_per_device(options: list[PathOption]) -> tuple[list[PathOption], list[PathOption]]:
    """The cheapest meeting option of each device (and of each GPU's MIG slices), and the rest:
    larger splits of a GPU that already meets cost more for the same targets."""
    seen: set[tuple[str, bool]] = set()
    first: list[PathOption] = []
    rest: list[PathOption] = []
    for option in options:
        key = (option.accelerator.split(":")[0], ":" in option.accelerator)
        (rest if key in seen else first).append(option)
        seen.add(key)
    return first, rest


def _query(forms: ComparisonForms) -> str:
    return urlencode(forms.query_dict(), doseq=True)


def paths_context(forms: ComparisonForms, comparison: PathComparison | None) -> dict[str, Any]:
    kind = forms.kind
    errors = forms.field_errors() if comparison is None else {}
    context: dict[str, Any] = {
        "kind": kind,
        "kinds": [("serving", "Serving"), ("batch", "Batch job"), ("training", "Training")],
        "workload_fields": [
            f
            for f in forms.workload
            if f.name != "config" and not (kind == "serving" and f.name in PER_PATH_FIELDS)
        ],
        # Requests per day and the peak price and size a serving path only.
        "traffic_fields": [f for f in forms.traffic if kind == "serving" or f.name == "exclude"],
        "error_lines": [f"{name.replace('_', ' ')}: {' '.join(m)}" for name, m in errors.items()],
        "comparison": comparison,
        "columns": [heading for heading, _, _ in COLUMNS[kind]],
        "cost_heading": COST_HEADING.get(kind, "Cost per run (USD)"),
    }
    if comparison is None:
        return context
    query = _query(forms)
    context.update(
        meeting=option_rows(kind, first_per_device(comparison.meeting)[0]),
        meeting_more=option_rows(kind, first_per_device(comparison.meeting)[1]),
        rejected=option_rows(kind, comparison.rejected),
        chart=cost_chart(comparison.cost_series) if kind == "serving" else None,
        share_path=f"{reverse('planner:paths')}?{query}",
        api_path=f"{reverse('planner:api_paths')}?{query}",
        calculator_path=f"{reverse('planner:calculator')}?{urlencode(forms.workload.query_dict())}",
        measured_path=f"{reverse('planner:measured')}?{urlencode(forms.workload.query_dict())}",
        break_even=(
            f"{comparison.break_even_requests_per_day:,.0f}"
            if comparison.break_even_requests_per_day is not None
            else None
        ),
    )
    return context
