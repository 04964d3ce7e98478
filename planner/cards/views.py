"""Workload card pages: save the current calculation, list mine and the examples, compare, delete."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from planner.calculator.forms import CalculatorForm
from planner.calculator.parsing import form_estimate, query_replay
from planner.calculator.rendering import WARNING_TITLES
from planner.calculator.runs import Estimate
from planner.capacity import CapacityInputError, default_catalogue
from planner.capacity.formatting import num
from planner.cards.forms import WorkloadCardSaveForm
from planner.cards.models import WorkloadCard
from planner.cards.selectors import (
    workload_cards_examples,
    workload_cards_for_compare,
    workload_cards_owned_by,
)
from planner.cards.services import workload_card_create, workload_card_delete

# Rows of the comparison table: (label, where to read it). "card.x" reads the card, else the result.
COMPARE_ROWS: list[tuple[str | Promise, str]] = [
    (gettext_lazy("Kind"), "card.get_kind_display"),
    (gettext_lazy("Model"), "card.model_name"),
    (gettext_lazy("Precision"), "card.precision"),
    (gettext_lazy("Latency target (ms)"), "card.latency_target_ms"),
    (gettext_lazy("Concurrency (users)"), "card.concurrency"),
    (gettext_lazy("Batch window (h)"), "card.batch_window_hours"),
    (gettext_lazy("GPU"), "accelerator"),
    (gettext_lazy("Weights (GB)"), "weights_gb"),
    (gettext_lazy("KV cache per user (GB)"), "kv_cache_per_user_gb"),
    (gettext_lazy("Available for cache (GB)"), "available_for_cache_gb"),
    (gettext_lazy("Max active users"), "max_active_users"),
    (gettext_lazy("Decode upper bound (tokens/s)"), "decode_tokens_per_s_upper_bound"),
    (gettext_lazy("Decode speed needed (tokens/s)"), "required_decode_tokens_per_s"),
    (gettext_lazy("Training method"), "method"),
    (gettext_lazy("Training total (GB)"), "total_gb"),
    (gettext_lazy("Cost per run (USD)"), "cost_per_run_usd"),
    (gettext_lazy("Required rate (items/s)"), "required_items_per_s"),
    (gettext_lazy("Workers needed"), "workers_needed"),
    (gettext_lazy("Hours needed"), "hours_needed"),
    (gettext_lazy("Cost (USD)"), "cost_usd"),
    (gettext_lazy("Managed API cost (USD)"), "api_cost_usd"),
    (gettext_lazy("Fits"), "fits"),
    (gettext_lazy("Fits the window"), "fits_window"),
    (gettext_lazy("Warnings"), "warnings"),
    (gettext_lazy("Missing assumptions"), "missing_assumptions"),
]


def _catalogue_name(value: str, kind: str) -> str:
    """A catalogue id as its name ("mistral-7b" -> "Mistral 7B v0.3"); other text unchanged."""
    cat = default_catalogue()
    try:
        return cat.model(value).name if kind == "model" else cat.accelerator(value).name
    except CapacityInputError:
        return value


def _cell(card: WorkloadCard, source: str) -> str:
    if source.startswith("card."):
        attr = getattr(card, source.removeprefix("card."))
        value: Any = attr() if callable(attr) else attr
    else:
        value = card.result.get(source)
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if source in {"card.model_name", "accelerator"}:
        return _catalogue_name(str(value), "model" if source == "card.model_name" else "gpu")
    if source == "warnings":
        return ", ".join(str(WARNING_TITLES.get(w["code"], w["code"])) for w in value)
    if source == "missing_assumptions":
        return ", ".join(str(v).replace("_", " ") for v in value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return num(value)  # 1.073742 -> "1.074": the card keeps the exact figures
    return str(value)


@dataclass(frozen=True, slots=True)
class CardRow:
    card: WorkloadCard
    query: str  # the calculator link's query string, to reopen the card's calculation
    model_label: str  # the catalogue's name for the card's model
    warning_titles: list[str]


def _rows(cards: Iterable[WorkloadCard]) -> list[CardRow]:
    return [
        CardRow(
            card=c,
            query=urlencode(c.inputs),
            model_label=_catalogue_name(c.model_name, "model") if c.model_name else "",
            warning_titles=[
                str(WARNING_TITLES.get(w["code"], w["code"])) for w in c.result.get("warnings", [])
            ],
        )
        for c in cards
    ]


@require_GET
@login_required
def card_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(
        request,
        "planner/cards.html",
        {
            "my_cards": _rows(workload_cards_owned_by(user=request.user, newest_first=True)),
            "examples": _rows(workload_cards_examples()),
        },
    )


def _saved_calculation(form: WorkloadCardSaveForm) -> tuple[CalculatorForm, Estimate] | None:
    """The card's calculation replayed from its query string; errors land on `query`."""
    calc = query_replay(
        form.cleaned_data["query"], latency_target_ms=form.cleaned_data.get("latency_target_ms")
    )
    if calc is None:
        form.add_error("query", _("the calculation to save is missing; recalculate and try again."))
        return None
    estimate = form_estimate(calc)
    if estimate is None:
        form.add_error("query", _("the calculation has errors; fix them in the calculator first."))
        return None
    return calc, estimate


@require_POST
@login_required
def card_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    can_publish = request.user.is_staff or request.user.is_instructor
    form = WorkloadCardSaveForm(request.POST, can_publish=can_publish)
    calculation = _saved_calculation(form) if form.is_valid() else None
    if calculation is None:
        return render(request, "planner/card_error.html", {"form": form}, status=400)
    calc, estimate = calculation
    card = workload_card_create(
        owner=request.user,
        name=form.cleaned_data["name"],
        inputs=calc.query_dict(),
        result=estimate.to_dict(),
        latency_target_ms=form.cleaned_data.get("latency_target_ms")
        or calc.cleaned_data.get("latency_target_ms"),
        notes=form.cleaned_data.get("notes", ""),
        is_example=bool(form.cleaned_data.get("is_example")),
    )
    messages.success(request, _("Saved the workload card “%(name)s”.") % {"name": card.name})
    return redirect("planner:cards")


@require_POST
@login_required
def card_delete(request: AuthenticatedHttpRequest, card_id: int) -> HttpResponse:
    card = get_object_or_404(workload_cards_owned_by(user=request.user), pk=card_id)
    name = card.name
    workload_card_delete(card=card)
    messages.success(request, _("Deleted the workload card “%(name)s”.") % {"name": name})
    return redirect("planner:cards")


# Side by side, more cards than this are no longer a comparison; ids are database keys (bigint).
MAX_COMPARED = 50
MAX_CARD_ID = 2**63 - 1


@require_GET
@login_required
def card_compare(request: AuthenticatedHttpRequest) -> HttpResponse:
    values = request.GET.getlist("card")
    if len(values) > MAX_COMPARED:
        message = f"card: compare at most {MAX_COMPARED} workload cards at once."
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    try:
        ids = [int(v) for v in values]
    except ValueError:
        raise Http404("No such workload card.") from None
    if not all(1 <= pk <= MAX_CARD_ID for pk in ids):
        raise Http404("No such workload card.")  # no key holds it (SQLite would overflow)
    cards = workload_cards_for_compare(user=request.user, ids=ids)
    if len(cards) != len(set(ids)):
        raise Http404("No such workload card.")
    rows = []
    for label, source in COMPARE_ROWS:
        cells = [_cell(card, source) for card in cards]
        if any(c != "—" for c in cells):
            rows.append((label, cells))
    paths = [urlencode(card.inputs) for card in cards]
    return render(
        request, "planner/compare.html", {"cards": cards, "rows": rows, "paths_queries": paths}
    )
