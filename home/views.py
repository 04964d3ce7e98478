"""The front page and the learner's dashboard: pages that read from several apps."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from courses.selectors import enrollments_for_dashboard
from quizzes.selectors.queue import due_count_for


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    return render(request, "home/home.html")


@require_GET
@login_required
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    return render(
        request,
        "home/dashboard.html",
        {
            "enrollments": enrollments_for_dashboard(user=user),
            "due_count": due_count_for(learner=user, now=timezone.now()),
        },
    )
