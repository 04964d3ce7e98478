"""Instructor pages for a course's rubric: its title and criteria, and each criterion's levels."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses.selectors import courses_taught_by
from planner.capstone.forms import CriterionForm, LevelFormSet, RubricForm, level_inputs
from planner.capstone.grading_selectors import rubric_for
from planner.capstone.rubric import (
    criterion_delete,
    criterion_levels_save,
    criterion_save,
    rubric_default_title,
    rubric_ensure,
    rubric_update,
)
from planner.models import Criterion, Rubric


@require_http_methods(["GET", "POST"])
@instructor_required
def rubric_edit(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    """The course's rubric: its title, its criteria (each links to its levels), add a criterion."""
    course = get_object_or_404(courses_taught_by(user=request.user), slug=course_slug)
    # A GET writes nothing: the rubric is created by the first POST that needs it.
    existing = rubric_for(course=course)
    rubric = existing or Rubric(course=course, title=rubric_default_title(course=course))
    rubric_form = RubricForm(instance=rubric, prefix="rubric")
    position = len(existing.criteria.all()) + 1 if existing else 1
    criterion_form = CriterionForm(prefix="new", initial={"position": position})
    if request.method == "POST":
        rubric = rubric_ensure(course=course)
        if "rubric-title" in request.POST:
            rubric_form = RubricForm(request.POST, instance=rubric, prefix="rubric")
            if rubric_form.is_valid():
                rubric_update(rubric=rubric, title=rubric_form.cleaned_data["title"])
                messages.success(request, _("Rubric saved."))
                return redirect("capstone:rubric", course_slug=course.slug)
        else:
            criterion_form = CriterionForm(
                request.POST, prefix="new", instance=Criterion(rubric=rubric)
            )
            if criterion_form.is_valid():
                created = criterion_save(
                    rubric=rubric, criterion=None, data=criterion_form.cleaned_data
                )
                messages.success(request, _("Criterion added: now give it levels."))
                return redirect(
                    "capstone:criterion", course_slug=course.slug, criterion_id=created.pk
                )
    context = {
        "course": course,
        "rubric": rubric_for(course=course),
        "rubric_form": rubric_form,
        "criterion_form": criterion_form,
    }
    status = 400 if rubric_form.errors or criterion_form.errors else 200
    return render(request, "planner/capstone/rubric.html", context, status=status)


@require_http_methods(["GET", "POST"])
@instructor_required
def criterion_edit(
    request: AuthenticatedHttpRequest, course_slug: str, criterion_id: int
) -> HttpResponse:
    course = get_object_or_404(courses_taught_by(user=request.user), slug=course_slug)
    criterion = get_object_or_404(Criterion, pk=criterion_id, rubric__course=course)
    form = CriterionForm(instance=criterion)
    levels = LevelFormSet(instance=criterion)
    if request.method == "POST":
        if request.POST.get("action") == "delete":
            try:
                criterion_delete(criterion=criterion)
            except ValidationError as exc:
                messages.error(request, " ".join(exc.messages))
                return redirect(
                    "capstone:criterion", course_slug=course.slug, criterion_id=criterion.pk
                )
            messages.success(request, _("Criterion deleted."))
            return redirect("capstone:rubric", course_slug=course.slug)
        form = CriterionForm(request.POST, instance=criterion)
        levels = LevelFormSet(request.POST, instance=criterion)
        if form.is_valid() and levels.is_valid():
            try:
                criterion_levels_save(
                    criterion=criterion, data=form.cleaned_data, levels=level_inputs(levels)
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, _("Criterion and levels saved."))
                return redirect(
                    "capstone:criterion", course_slug=course.slug, criterion_id=criterion.pk
                )
    context = {"course": course, "criterion": criterion, "form": form, "levels": levels}
    status = 400 if form.errors or levels.total_error_count() else 200
    return render(request, "planner/capstone/criterion.html", context, status=status)
