"""The learner's week: the next 30 days' reviews with and without the load balancer, their easy
days, and time away (a break, which moves the reviews due in it)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from quizzes.charts import BarChart, bar_chart
from quizzes.forms import BreakForm
from quizzes.selectors.forecast import ForecastDay, week_forecast
from quizzes.services.breaks import BreakError, break_clear, break_set

MARKS = {"normal": "", "reduced": " (reduced)", "minimum": " (minimum)"}


def _label(day: ForecastDay) -> str:
    return day.day.strftime("%a %d %b") + MARKS[day.easy_day] + (" (away)" if day.away else "")


def _chart(days: list[ForecastDay], *, balanced: bool) -> BarChart:
    top = max([max(d.balanced, d.unbalanced) for d in days] or [1]) or 1
    return bar_chart(
        values=[float(d.balanced if balanced else d.unbalanced) for d in days],
        labels=[_label(d) for d in days],
        title=(
            "Reviews due on each of the next 30 days, spread by the load balancer"
            if balanced
            else "The same reviews without the load balancer"
        ),
        max_value=float(top),
        label_every=7,
        label_heading="Day",
        value_heading="Reviews due",
    )


def _render(request: AuthenticatedHttpRequest, form: BreakForm, status: int = 200) -> HttpResponse:
    days = week_forecast(learner=request.user, now=timezone.now())
    context = {
        "days": days,
        "with_chart": _chart(days, balanced=True),
        "without_chart": _chart(days, balanced=False),
        "has_reviews": any(d.balanced for d in days),
        "form": form,
    }
    return render(request, "quizzes/week.html", context, status=status)


@require_GET
@login_required
def week(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    return _render(
        request, BreakForm(initial={"break_from": user.break_from, "break_to": user.break_to})
    )


@require_POST
@login_required
def week_break(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = BreakForm(request.POST)
    if not form.is_valid():
        return _render(request, form, status=400)
    if form.cleaned_data.get("action") == "clear":
        break_clear(learner=request.user)
        messages.success(request, "Break cleared.")
        return redirect("quizzes:week")
    try:
        moved = break_set(
            learner=request.user,
            start=form.cleaned_data["break_from"],
            end=form.cleaned_data["break_to"],
            now=timezone.now(),
        )
    except BreakError as error:
        form.add_error("break_to", str(error))
        return _render(request, form, status=400)
    messages.success(
        request,
        f"Break saved: {moved.moved_before} review(s) moved before it and "
        f"{moved.moved_after} after it; no digest while you are away.",
    )
    return redirect("quizzes:week")
