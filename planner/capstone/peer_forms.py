"""The instructors' peer settings form; the levels a peer form posts, read and bounded."""

from __future__ import annotations

from django import forms
from django.http import QueryDict
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from planner.capstone.peer_models import PeerSettings
from planner.capstone.peer_services import COMMENT_MAX, LevelChoice
from planner.models import Criterion

# A level id is a database id: at most 19 digits.
ID_DIGITS = 19


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


def level_choices_posted(
    data: QueryDict, criteria: list[Criterion]
) -> tuple[list[LevelChoice], dict[int, str]]:
    """Each criterion's chosen level and comment from the form; the errors by criterion id."""
    choices: list[LevelChoice] = []
    errors: dict[int, str] = {}
    for criterion in criteria:
        raw = data.get(f"level_{criterion.pk}", "")
        comment = data.get(f"comment_{criterion.pk}", "")
        if not raw.isdigit() or len(raw) > ID_DIGITS:
            errors[criterion.pk] = gettext("Choose a level.")
            continue
        if len(comment) > COMMENT_MAX:
            errors[criterion.pk] = gettext("The comment is longer than %(max)s characters.") % {
                "max": COMMENT_MAX
            }
            continue
        choices.append(LevelChoice(criterion.pk, int(raw), comment))
    return choices, errors
