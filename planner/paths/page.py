"""The comparison page's context: the form's fields (each default the comparison assumed shown in
its field), the headline options (the recommendation, the runner-up, the best of each path) with
the rest on demand, the frontier of the recommended device, and the cost chart."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from planner.capacity.formatting import num
from planner.capacity.paths import PATHS, PathComparison, PathOption
from planner.capacity.paths.label import path_words, recommendation_label
from planner.capacity.results import FormulaLine
from planner.paths.charts import cost_chart, frontier_chart
from planner.paths.defaults import assumption_words, fields_with_defaults
from planner.paths.forms import ComparisonForms
from planner.paths.frontier_view import comparison_frontier, splits_words

# The table's figure columns per estimate: (heading, figure key, decimals). Serving's time
# columns show the mean and, where the estimate gives them, its percentiles beside it.
COLUMNS: dict[str, list[tuple[str, str, int]]] = {
    "serving": [
        ("First token (ms)", "time_to_first_token_ms", 0),
        ("Between tokens (ms)", "itl_ms", 1),
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
# The percentile figures of a serving option (issue 37): ttft_ms_p50 ... itl_ms_p99.
PERCENTILES = ("p50", "p95", "p99")
PERCENTILE_OF = {"time_to_first_token_ms": "ttft_ms", "itl_ms": "itl_ms"}
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
    "throughput": "daily volume",
}
ROLE_ORDER = ("gpu", "tpu", "cpu", "managed_api")


@dataclass(frozen=True, slots=True)
class OptionRow:
    option: PathOption
    label: str  # "4 × NVIDIA T4", as everywhere
    role: str  # "Recommended", "Runner-up", "Best GPU", ... ("" in the full tables)
    cost: str
    per_million: str
    cells: list[list[str]]  # each cell's lines: the mean, then its percentiles
    limiter: str
    path_label: str
    replicas: str = ""  # "2 replicas of 4 devices (+1 failover)" when the plan has more than one


@dataclass(frozen=True, slots=True)
class HowEntry:
    """One option's formulas in a table's single "How"."""

    label: str
    formulas: tuple[FormulaLine, ...]
    stack: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    rows: list[OptionRow]
    how: list[HowEntry] = field(default_factory=list)


def _figure(value: Any, places: int) -> str:
    if value is None:
        return "—"
    return num(value, places) if isinstance(value, (int, float, Fraction)) else str(value)


def option_figure(option: PathOption, key: str) -> Any:
    """A figure of the option: in its figures, or an attribute of its own (the option's newer
    fields), or derived (the mean time between tokens: 1000 ÷ decode tokens/s)."""
    if key in option.figures:
        return option.figures[key]
    value = getattr(option, key, None)
    if value is not None or key != "itl_ms":
        return value
    if option.figures.get("inter_token_latency_ms") is not None:
        return option.figures["inter_token_latency_ms"]
    decode = option.figures.get("decode_tokens_per_s")
    return 1000 / float(decode) if decode else None


def _cell(option: PathOption, key: str, places: int) -> list[str]:
    mean = _figure(option_figure(option, key), places)
    prefix = PERCENTILE_OF.get(key)
    if prefix is None:
        return [mean]
    lines = [f"mean {mean}"] if mean != "—" else [mean]
    for p in PERCENTILES:
        value = option_figure(option, f"{prefix}_{p}")
        if value is not None:
            lines.append(f"{p} {_figure(value, places)}")
    return lines


def _money_text(value: Fraction | None, places: int = 2) -> str:
    return f"{float(value):,.{places}f}" if value is not None else "—"


def option_row(kind: str, o: PathOption, role: str = "") -> OptionRow:
    return OptionRow(
        option=o,
        label=recommendation_label(o),
        role=role,
        cost=_money_text(o.cost_usd),
        per_million=_money_text(o.cost_per_million_output_tokens_usd),
        cells=[_cell(o, key, places) for _, key, places in COLUMNS[kind]],
        limiter=_limiter_words(o),
        path_label=path_words(o.path),
        replicas=_replicas(o),
    )


def _limiter_words(o: PathOption) -> str:
    if o.limiter:
        return LIMITER_WORDS.get(o.limiter, o.limiter.replace("_", " "))
    return "" if o.meets else "no published price"  # an option that fits but has no price


def _replicas(o: PathOption) -> str:
    replicas, spare = getattr(o, "replicas", 1) or 1, getattr(o, "failover", 0) or 0
    if replicas <= 1 and not spare:
        return ""
    unit = "1 device" if o.count == 1 else f"{o.count} devices"
    text = f"{replicas} replica{'s' if replicas > 1 else ''} of {unit}"
    return text + (f" (+{spare} failover)" if spare else "")


def table(kind: str, rows: Iterable[tuple[PathOption, str]]) -> Table:
    out = [option_row(kind, o, role) for o, role in rows]
    how = [HowEntry(r.label, r.option.formulas, r.option.stack, r.option.notes) for r in out]
    return Table(rows=out, how=how)


def headline_options(comparison: PathComparison) -> list[tuple[PathOption, str]]:
    """The recommendation, the runner-up, then the best option of each path (the cheapest that
    meets, else the cheapest that misses, with its reason), each once."""
    picked: list[tuple[PathOption, str]] = []
    if comparison.recommended is not None:
        picked.append((comparison.recommended, "Recommended"))
    if comparison.runner_up is not None:
        picked.append((comparison.runner_up, "Runner-up"))
    for path in ROLE_ORDER:
        if path not in PATHS or path in comparison.excluded:
            continue
        ours = [o for o in comparison.options if o.path == path]
        if not ours or any(o.path == path for o, _ in picked):
            continue
        best = ours[0]  # options come cheapest meeting first, then the rejected
        role = f"Best {path_words(path)}" if best.meets else f"Closest {path_words(path)}"
        picked.append((best, role))
    return picked


def _service(comparison: PathComparison) -> dict[str, Any]:
    return dict(getattr(comparison, "service_level", None) or {})


def _query(forms: ComparisonForms) -> str:
    return urlencode(forms.query_dict(), doseq=True)


def _excluded_words(excluded: Iterable[str]) -> str:
    words = [("the " + path_words(p)) if p == "managed_api" else path_words(p) for p in excluded]
    return ", ".join(words)


def paths_context(forms: ComparisonForms, comparison: PathComparison | None) -> dict[str, Any]:
    kind = forms.kind
    errors = forms.field_errors() if comparison is None else {}
    shown = fields_with_defaults(forms, comparison)
    context: dict[str, Any] = {
        "kind": kind,
        "kinds": [("serving", "Serving"), ("batch", "Batch job"), ("training", "Training")],
        "workload_fields": [
            f
            for f in shown.workload
            if f.name != "config" and not (kind == "serving" and f.name in PER_PATH_FIELDS)
        ],
        # Requests per day and the peak price and size a serving path only.
        "traffic_fields": [f for f in shown.traffic if kind == "serving" or f.name == "exclude"],
        "error_lines": [
            f"{assumption_words(name, forms)}: {' '.join(m)}" for name, m in errors.items()
        ],
        "comparison": comparison,
        "columns": [heading for heading, _, _ in COLUMNS[kind]],
        "cost_heading": COST_HEADING.get(kind, "Cost per run (USD)"),
    }
    if comparison is None:
        return context
    query = _query(forms)
    found = comparison_frontier(forms, comparison)
    context.update(
        headline=table(kind, headline_options(comparison)),
        meeting=table(kind, ((o, "") for o in comparison.meeting)),
        rejected=table(kind, ((o, "") for o in comparison.rejected)),
        recommended_label=recommendation_label(comparison.recommended),
        runner_up_label=recommendation_label(comparison.runner_up),
        recommended_cost=_money_text(comparison.recommended.cost_usd)
        if comparison.recommended
        else "",
        runner_up_cost=_money_text(comparison.runner_up.cost_usd) if comparison.runner_up else "",
        excluded_words=_excluded_words(comparison.excluded),
        assumptions=[(assumption_words(a.field, forms), a.assumed) for a in comparison.assumptions],
        chart=cost_chart(comparison.cost_series) if kind == "serving" else None,
        frontier=found[0] if found else None,
        frontier_label=recommendation_label(found[1]) if found else "",
        frontier_splits=splits_words(found[0]) if found else "",
        frontier_percentile=_service(comparison).get("percentile") or 95,
        service_level=_service(comparison),
        frontier_chart=frontier_chart(found[0]) if found else None,
        share_path=f"{reverse('planner:paths')}?{query}",
        api_path=f"{reverse('planner:api_paths')}?{query}",
        calculator_path=f"{reverse('planner:calculator')}?{urlencode(forms.workload.query_dict())}",
        measured_path=f"{reverse('planner:measured')}?{urlencode(forms.workload.query_dict())}",
        break_even=(
            # Whole requests below the break-even, as its "How" rounds it.
            f"{math.floor(comparison.break_even_requests_per_day):,}"
            if comparison.break_even_requests_per_day is not None
            else None
        ),
    )
    return context
