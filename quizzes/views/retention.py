"""Choosing retention from its workload curve (instructor and learner), and the instructor's view
of a course's learnt parameters."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses.models import Course
from courses.selectors import course_for_learner, enrollment_for
from quizzes.charts import BarChart, bar_chart
from quizzes.forms import CourseSchedulingForm, RetentionChoiceForm
from quizzes.selectors.course_stats import course_taught_only
from quizzes.selectors.parameters import course_parameters_summary
from quizzes.selectors.retention import RetentionCurve, good_streak_intervals, retention_curve_for
from quizzes.services import fsrs_adapter
from quizzes.services.course_settings import course_scheduling_update
from quizzes.services.retention import retention_preference_clear, retention_preference_set
from quizzes.tasks import schedules_reschedule_course


def _curve_chart(curve: RetentionCurve) -> BarChart:
    return bar_chart(
        values=[p.minutes_per_day for p in curve.curve.points],
        labels=[f"{p.retention * 100:.0f}%" for p in curve.curve.points],
        title=_("Simulated minutes of review a day at each desired retention"),
        value_format="{:.2f}",
        label_heading=_("Desired retention"),
        value_heading=_("Minutes a day"),
    )


def _curve_context(curve: RetentionCurve, current: float) -> dict[str, object]:
    return {
        "curve": curve,
        "curve_chart": _curve_chart(curve),
        "current_retention": current,
    }


@require_http_methods(["GET", "POST"])
@instructor_required
def course_settings(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = course_taught_only(slug=course_slug, user=request.user)
    curve = retention_curve_for(course=course, learner_id=None)
    initial = {
        "desired_retention": course.desired_retention,
        "learning_steps_minutes": course.learning_steps_minutes,
        "relearning_steps_minutes": course.relearning_steps_minutes,
        "maximum_interval_days": course.maximum_interval_days,
        "daily_new_limit": course.daily_new_limit,
        "daily_review_limit": course.daily_review_limit,
    }
    form = CourseSchedulingForm(request.POST or None, initial=initial, curve=curve.curve)
    if request.method == "POST" and form.is_valid():
        try:
            course_scheduling_update(course=course, **form.cleaned_data)
        except ValidationError as exc:
            for field_name, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field_name, error)
        else:
            messages.success(request, _("Scheduling settings saved."))
            return redirect("quizzes:course_settings", course_slug=course.slug)
    context = {"course": course, "form": form, **_curve_context(curve, course.desired_retention)}
    return render(request, "quizzes/course_settings.html", context)


@require_GET
@instructor_required
def course_parameters(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """Defaults vs pooled vs personal held-out scores, and when each set was trained."""
    course = course_taught_only(slug=course_slug, user=request.user)
    summary = course_parameters_summary(course=course)
    return render(request, "quizzes/course_parameters.html", {"course": course, "summary": summary})


@require_POST
@instructor_required
def course_reschedule(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """Opt-in: move every card's due date to the parameters in force (a job on the heavy queue)."""
    course = course_taught_only(slug=course_slug, user=request.user)
    transaction.on_commit(partial(schedules_reschedule_course.delay, course.pk))
    messages.success(
        request, _("Due dates are being moved to the parameters in force; it takes a minute.")
    )
    return redirect("quizzes:course_parameters", course_slug=course.slug)


def _learner_course(request: AuthenticatedHttpRequest, course_slug: str) -> Course:
    course = course_for_learner(slug=course_slug, user=request.user)
    if enrollment_for(course=course, user=request.user) is None:
        raise Http404("You are not enrolled in this course.")
    return course


@require_http_methods(["GET", "POST"])
@login_required
def learner_retention(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """The learner's own retention for a course, picked from their curve."""
    course = _learner_course(request, course_slug)
    if request.method == "POST" and request.POST.get("reset"):
        retention_preference_clear(learner=request.user, course=course)
        messages.success(request, _("You are back on the course's retention."))
        return redirect("quizzes:retention", course_slug=course.slug)
    curve = retention_curve_for(course=course, learner_id=request.user.pk)
    current = curve.scheduling.desired_retention
    form = RetentionChoiceForm(request.POST or None, curve=curve.curve, current=current)
    if request.method == "POST" and form.is_valid():
        try:
            retention_preference_set(
                learner=request.user,
                course=course,
                desired_retention=form.cleaned_data["desired_retention"],
            )
        except ValidationError as exc:
            for field_name, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field_name, error)
        else:
            messages.success(request, _("Your retention for this course is saved."))
            return redirect("quizzes:retention", course_slug=course.slug)
    intervals = good_streak_intervals(course=course, scheduling=curve.scheduling)
    context = {
        "course": course,
        "form": form,
        "own": abs(current - course.desired_retention) > 1e-9,
        "intervals": [fsrs_adapter.interval_label(i) for i in intervals],
        **_curve_context(curve, current),
    }
    template = "quizzes/retention.html#choice" if request.htmx else "quizzes/retention.html"
    return render(request, template, context)
