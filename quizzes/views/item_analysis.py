"""The instructors' item analysis page: the stored nightly figures, never a scan of the log."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from quizzes import item_analysis as method
from quizzes.models import ItemAnalysis
from quizzes.selectors.course_stats import course_taught_only

FLAG_LABELS = {
    method.FLAG_NEGATIVE_DISCRIMINATION: "Negative discrimination: check the key and the prompt",
    method.FLAG_TOO_EASY: "Too easy",
    method.FLAG_TOO_HARD: "Too hard",
    method.FLAG_DISTRACTOR_NEVER_CHOSEN: "A distractor nobody chose",
    method.FLAG_FEW_RESPONSES: "Too few answers to judge",
}


@require_GET
@instructor_required
def course_item_analysis(request: AuthenticatedHttpRequest, course_slug: str) -> HttpResponse:
    course = course_taught_only(slug=course_slug, user=request.user)
    analysis = ItemAnalysis.objects.filter(course=course).first()
    rows = []
    if analysis is not None:
        for row in analysis.report.get("items", []):
            labels = [FLAG_LABELS.get(flag, flag) for flag in row.get("flags", [])]
            rows.append({**row, "flag_labels": labels})
    return render(
        request,
        "quizzes/item_analysis.html",
        {
            "course": course,
            "analysis": analysis,
            "rows": rows,
            "method": method,
        },
    )
