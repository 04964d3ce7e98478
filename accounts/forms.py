from __future__ import annotations

import zoneinfo

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.models import User

HOURS = [(h, f"{h:02d}:00") for h in range(24)]


class PreferencesForm(forms.ModelForm):
    time_zone = forms.ChoiceField(
        label=_("Time zone"),
        choices=[(z, z) for z in sorted(zoneinfo.available_timezones())],
        help_text=_("Reminders, daily limits and streaks follow your local day."),
    )
    day_start_hour = forms.TypedChoiceField(label=_("My day starts at"), choices=HOURS, coerce=int)
    reminder_hour = forms.TypedChoiceField(
        label=_("Send my recall digest at"), choices=HOURS, coerce=int
    )
    pause_days = forms.IntegerField(
        label=_("Pause reminders for (days)"),
        required=False,
        min_value=0,
        max_value=365,
        help_text=_("0 resumes reminders now. Leave empty to keep the current pause."),
    )

    class Meta:
        model = User
        fields = [
            "display_name",
            "time_zone",
            "day_start_hour",
            "reminders_enabled",
            "reminder_hour",
            "review_shortcuts_enabled",
        ]
