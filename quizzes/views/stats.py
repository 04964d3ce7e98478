"""Statistics pages (learner and instructor); the scheduling settings are in `retention`."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from quizzes.charts import BarChart, bar_chart
from quizzes.models import RecallSchedule
from quizzes.selectors.course_stats import LEECH_LAPSES, course_taught_only
from quizzes.selectors.course_stats import course_stats as course_stats_for
from quizzes.selectors.history import item_history_for, reviewed_items_for
from quizzes.selectors.stats import WeekRate, learner_stats, taught_courses_for
from quizzes.services.undo import schedule_unsuspend


def _history_chart(history: list[WeekRate]) -> BarChart:
    """The weekly pass-rate chart, the same on the learner's and the instructor's page."""
    return bar_chart(
        values=[None if w.rate is None else w.rate * 100 for w in history],
        labels=[w.week_start.strftime("%d %b") for w in history],
        title="Pass rate of reviews per week (%)",
        max_value=100,
        value_format="{:.0f}%",
        label_every=3,
        label_heading="Week starting",
        value_heading="Pass rate",
    )


@require_GET
@login_required
def learner_stats_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    stats = learner_stats(learner=request.user, now=timezone.now())
    forecast_chart = bar_chart(
        values=[float(d.count) for d in stats.forecast],
        labels=[d.day.strftime("%d %b") for d in stats.forecast],
        title="Reviews due on each of the next 30 days",
        label_every=7,
        label_heading="Day",
        value_heading="Reviews due",
    )
    history_chart = _history_chart(stats.history)
    return render(
        request,
        "quizzes/stats.html",
        {
            "stats": stats,
            "forecast_chart": forecast_chart,
            "history_chart": history_chart,
            "taught": taught_courses_for(user=request.user),
            "reviewed": reviewed_items_for(learner=request.user),
        },
    )


@require_GET
@instructor_required
def course_stats(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = course_taught_only(slug=course_slug, user=request.user)
    stats = course_stats_for(course=course, now=timezone.now())
    history_chart = _history_chart(stats.history)
    return render(
        request,
        "quizzes/course_stats.html",
        {
            "course": course,
            "stats": stats,
            "history_chart": history_chart,
            "leech_lapses": LEECH_LAPSES,
        },
    )


@require_GET
@login_required
def item_history(request: AuthenticatedHttpRequest, item_id: int) -> HttpResponse:
    """Every grade of one of the learner's items: interval and recall probability (another
    learner's item, or one never answered, is a 404)."""
    try:
        history = item_history_for(learner=request.user, item_id=item_id)
    except RecallSchedule.DoesNotExist as exc:
        raise Http404("No review history for this item.") from exc
    return render(request, "quizzes/item_history.html", {"history": history})


@require_POST
@login_required
def item_unsuspend(request: AuthenticatedHttpRequest, item_id: int) -> HttpResponse:
    """Bring one of the learner's suspended leeches back into their reviews."""
    try:
        schedule_unsuspend(learner=request.user, item_id=item_id)
    except RecallSchedule.DoesNotExist as exc:
        raise Http404("No such item in your reviews.") from exc
    messages.success(request, _("The item is back in your reviews."))
    return redirect("quizzes:stats")
