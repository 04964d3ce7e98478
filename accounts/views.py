"""The landing page, the dashboard and the preferences page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from accounts.forms import PreferencesForm
from accounts.http import AuthenticatedHttpRequest
from accounts.services import user_preferences_update


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
