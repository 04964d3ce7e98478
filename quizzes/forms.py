"""Forms for answering items and for a course's scheduling settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from quizzes.calculated import ANSWER_MAX_LENGTH
from quizzes.fsrs_optimizer import WorkloadCurve
from quizzes.selectors.carried_counts import MAX_LENGTH as COUNTS_MAX_LENGTH
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


def curve_choices(curve: WorkloadCurve, current: float | None) -> list[tuple[str, str]]:
    """One radio per point of the curve, labelled with its workload; `current` kept if off it."""
    choices = [
        (
            f"{p.retention:.2f}",
            _("%(pct)s%% — %(reviews).2f reviews, %(minutes).2f minutes a day")
            % {
                "pct": f"{p.retention * 100:.0f}",
                "reviews": p.reviews_per_day,
                "minutes": p.minutes_per_day,
            },
        )
        for p in curve.points
    ]
    if current is not None and all(abs(current - p.retention) > 1e-9 for p in curve.points):
        choices.append(
            (
                f"{current:.2f}",
                _("%(pct)s%% (the current setting, off the curve)") % {"pct": f"{current * 100:g}"},
            )
        )
        choices.sort(key=lambda c: float(c[0]))
    return choices


class RetentionFromCurveField(forms.FloatField):
    """A retention picked from the curve's radios; any number still parses, so a value posted
    from elsewhere gets the service's range message, not a bare "invalid choice"."""

    widget = forms.RadioSelect

    def set_curve(self, curve: WorkloadCurve, current: float | None) -> None:
        self.widget.choices = curve_choices(curve, current)  # type: ignore[attr-defined]


class FieldsExcept:
    """A form seen without one field, for the shared field template when a page draws that field
    itself (the retention, as a fieldset of the curve's choices)."""

    def __init__(self, form: forms.Form, name: str) -> None:
        self.form = form
        self.name = name

    def non_field_errors(self) -> Any:
        return self.form.non_field_errors()

    def hidden_fields(self) -> list[forms.BoundField]:
        return self.form.hidden_fields()

    def visible_fields(self) -> list[forms.BoundField]:
        return [f for f in self.form.visible_fields() if f.name != self.name]


class CourseSchedulingForm(forms.Form):
    desired_retention = RetentionFromCurveField(
        label=_("Desired retention"),
        help_text=_(
            "Probability of recall FSRS aims for, chosen from the simulated workload above "
            "(the course accepts %(lo).2f to %(hi).2f)."
        )
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

    def __init__(self, *args: Any, curve: WorkloadCurve, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["desired_retention"]
        assert isinstance(field, RetentionFromCurveField)
        current = self.initial.get("desired_retention")
        field.set_curve(curve, float(current) if current is not None else None)
        if current is not None:
            self.initial["desired_retention"] = f"{float(current):.2f}"

    def other_fields(self) -> FieldsExcept:
        return FieldsExcept(self, "desired_retention")


class RetentionChoiceForm(forms.Form):
    """A learner's own retention for a course, picked from their curve."""

    desired_retention = RetentionFromCurveField(label=_("Your desired retention"))

    def __init__(self, *args: Any, curve: WorkloadCurve, current: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["desired_retention"]
        assert isinstance(field, RetentionFromCurveField)
        field.set_curve(curve, current)
        self.initial.setdefault("desired_retention", f"{current:.2f}")


class GradeForm(forms.Form):
    rating = forms.TypedChoiceField(
        choices=[(1, "Again"), (2, "Hard"), (3, "Good"), (4, "Easy")], coerce=int
    )
    card_token = forms.UUIDField()
    schedule_id = forms.IntegerField(required=False)
    item_id = forms.IntegerField(required=False)
    # Epoch milliseconds when the card's front was first shown; the grade's duration comes from it.
    shown_at = forms.IntegerField(required=False, min_value=0)
    # Today's counts as the panel showed them (quizzes/selectors/carried_counts.py).
    counts = forms.CharField(required=False, max_length=COUNTS_MAX_LENGTH)
    # A calculated card's typed number; the answer it is logged beside is drawn on the server.
    answer = forms.CharField(required=False, max_length=ANSWER_MAX_LENGTH)


class BreakForm(forms.Form):
    """Time away: the first and last local day away (both inclusive), or clear the break."""

    break_from = forms.DateField(
        label=_("First day away"),
        required=False,
        widget=forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"}),
    )
    break_to = forms.DateField(
        label=_("Last day away"),
        required=False,
        widget=forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"}),
    )
    action = forms.ChoiceField(choices=[("set", "set"), ("clear", "clear")], required=False)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("action") != "clear":
            if cleaned.get("break_from") is None and "break_from" not in self.errors:
                self.add_error("break_from", _("Give the first day away."))
            if cleaned.get("break_to") is None and "break_to" not in self.errors:
                self.add_error("break_to", _("Give the last day away."))
        return cleaned
