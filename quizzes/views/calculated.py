"""The instructors' page of a course's calculated items: again-rate, error and known mistakes."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from courses.selectors import course_taught_by
from quizzes.selectors.calculated_stats import KNOWN_MISTAKES, calculated_stats_for


@require_GET
@instructor_required
def course_calculated(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = course_taught_by(slug=course_slug, user=request.user)
    return render(
        request,
        "quizzes/course_calculated.html",
        {
            "course": course,
            "templates": calculated_stats_for(course=course),
            "mistakes": [name for name, _factor in KNOWN_MISTAKES],
        },
    )
