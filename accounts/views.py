"""The landing page, the dashboard and the preferences page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import PreferencesForm
from accounts.http import AuthenticatedHttpRequest
from accounts.services import user_preferences_update
from courses.selectors import enrollments_for_dashboard
from quizzes.selectors.queue import due_count_for


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    return render(request, "accounts/home.html")


@require_GET
@login_required
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    return render(
        request,
        "accounts/dashboard.html",
        {
            "enrollments": enrollments_for_dashboard(user=user),
            "due_count": due_count_for(learner=user, now=timezone.now()),
        },
    )


@require_http_methods(["GET", "POST"])
@login_required
def preferences(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = PreferencesForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        data = {k: v for k, v in form.cleaned_data.items() if k != "pause_days"}
        user_preferences_update(
            user=request.user,
            data=data,
            pause_days=form.cleaned_data.get("pause_days"),
            now=timezone.now(),
        )
        messages.success(request, "Preferences saved.")
        return redirect("preferences")
    return render(request, "accounts/preferences.html", {"form": form})
