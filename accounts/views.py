"""The preferences page: the learner's name, time zone, hours, reminders and their pause."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.forms import PreferencesForm
from accounts.http import AuthenticatedHttpRequest
from accounts.selectors import reminders_paused_through
from accounts.services import user_preferences_update


@require_http_methods(["GET", "POST"])
@login_required
def preferences(request: AuthenticatedHttpRequest) -> HttpResponse:
    now = timezone.now()
    if request.method == "POST" and request.POST.get("action") == "resume":
        user_preferences_update(user=request.user, data={}, pause_days=0, now=now)
        messages.success(request, _("Reminders resumed: your next digest comes at your hour."))
        return redirect("preferences")
    # Read before the form binds: an invalid form leaves its values on request.user.
    paused_through = reminders_paused_through(user=request.user, now=now)
    form = PreferencesForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        data = {k: v for k, v in form.cleaned_data.items() if k != "pause_days"}
        user_preferences_update(
            user=request.user,
            data=data,
            pause_days=form.cleaned_data.get("pause_days"),
            now=now,
        )
        messages.success(request, _("Preferences saved."))
        return redirect("preferences")
    return render(
        request,
        "accounts/preferences.html",
        {"form": form, "paused_through": paused_through},
    )
