"""Forms for answering items and for a course's scheduling settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from quizzes.services.course_settings import RETENTION_MAX, RETENTION_MIN


class StepsField(forms.Field):
    """Minutes separated by commas or spaces, e.g. "1, 10"; blank means no steps."""

    def to_python(self, value: Any) -> list[float]:
        text = str(value or "").strip()
        parts = [p for p in text.replace(",", " ").split() if p]
        try:
            steps = [float(p) for p in parts]
        except ValueError as exc:
            raise forms.ValidationError(
                _("Enter minutes as numbers separated by commas, e.g. 1, 10.")
            ) from exc
        return [int(s) if s.is_integer() else s for s in steps]

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return value


class CourseSchedulingForm(forms.Form):
    desired_retention = forms.FloatField(
        label=_("Desired retention"),
        help_text=_("Probability of recall FSRS aims for, between %(lo).2f and %(hi).2f.")
        % {"lo": RETENTION_MIN, "hi": RETENTION_MAX},
    )
    learning_steps_minutes = StepsField(
        label=_("Learning steps (minutes)"), required=False, help_text=_("e.g. 1, 10")
    )
    relearning_steps_minutes = StepsField(
        label=_("Relearning steps (minutes)"), required=False, help_text=_("e.g. 10")
    )
    maximum_interval_days = forms.IntegerField(label=_("Maximum interval (days)"), min_value=1)
    daily_new_limit = forms.IntegerField(label=_("New items per day"), min_value=0)
    daily_review_limit = forms.IntegerField(label=_("Reviews per day"), min_value=0)


class GradeForm(forms.Form):
    rating = forms.TypedChoiceField(
        choices=[(1, "Again"), (2, "Hard"), (3, "Good"), (4, "Easy")], coerce=int
    )
    card_token = forms.UUIDField()
    schedule_id = forms.IntegerField(required=False)
    item_id = forms.IntegerField(required=False)
    # Epoch milliseconds when the card's front was first shown; the grade's duration comes from it.
    shown_at = forms.IntegerField(required=False, min_value=0)
