"""The instructors' peer settings form."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from planner.capstone.peer_models import PeerSettings


class PeerSettingsForm(forms.ModelForm[PeerSettings]):
    deadline = forms.DateTimeField(
        label=_("Peer deadline (UTC)"),
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        input_formats=["%Y-%m-%dT%H:%M"],
        help_text=_("Plans still short of assessors then go to your grading queue."),
    )

    class Meta:
        model = PeerSettings
        fields = ["enabled", "assessors_per_plan", "calibration_attempts", "deadline"]
