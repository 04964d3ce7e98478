"""The front page, the dashboard and the accessibility statement: pages of the whole site."""

from __future__ import annotations

from email.utils import parseaddr

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from courses.selectors import enrollments_for_dashboard
from home.selectors import instructor_home_for
from quizzes.selectors.queue import due_count_for


@require_GET
def accessibility(request: HttpRequest) -> HttpResponse:
    """The accessibility statement: what conforms, the known exceptions, how to report."""
    support_email = parseaddr(settings.DEFAULT_FROM_EMAIL)[1]
    return render(request, "home/accessibility.html", {"support_email": support_email})


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    return render(request, "home/home.html")


@require_GET
@login_required
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A learner's day (what is due, their courses); an instructor's home adds, first, the plans
    waiting to be graded, the claims they hold, where learners struggle and today's digests."""
    user, now = request.user, timezone.now()
    teaching = user.is_staff or user.is_instructor
    return render(
        request,
        "home/dashboard.html",
        {
            "enrollments": enrollments_for_dashboard(user=user),
            "due_count": due_count_for(learner=user, now=now),
            "teaching": instructor_home_for(user=user, now=now) if teaching else None,
            "now": now,
        },
    )
