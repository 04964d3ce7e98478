"""Forms for the capstone worksheet, grading by rubric, and rubric editing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.db import models
from django.forms import BaseInlineFormSet, inlineformset_factory
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from core.bounds import Bound
from core.forms import BoundedModelForm, BoundedNumberField
from core.ranges import POSITION, RUBRIC_POINTS
from planner.calculator.forms import ServingForm
from planner.capacity.measured import MAX_RESULT_BYTES
from planner.capstone.grading import ScoreInput
from planner.capstone.rubric import LevelInput
from planner.cards.selectors import workload_cards_owned_by
from planner.models import (
    WORKSHEET_FIELDS,
    WORKSHEET_SECTIONS,
    CapstoneWorksheet,
    Criterion,
    Level,
    Rubric,
    WorkloadCard,
)
from planner.paths.runs import comparison_forms_for_link

HELP = {
    "feature": _(
        "One feature, e.g. live lesson chat or nightly embedding refresh. Needed to submit."
    ),
    "recommendation": _("Needed to submit."),
    "model_gb": _("Leave empty to compute it from parameters × precision."),
    "kv_per_user_gb": _("Leave empty to compute it from context length × KV per token."),
    "concurrency": _("Active users at peak, not on average."),
    "claimed_max_users": _("How many active users your own estimate says the GPU holds."),
    "paths_query": _(
        "Paste the link of a path comparison (Compare paths): the automatic check flags a "
        "recommendation it rejects."
    ),
    "measured_link": _(
        "Ran the load test? Open “Measured beside predicted”, pick the GPU and model it ran on, "
        "and paste that page's link here with the result file below: the automatic check "
        "reports measured ÷ predicted and flags the targets the run missed."
    ),
    "failure_case": _(
        "Where the chosen accelerator is fast but memory-bound for the real workload."
    ),
}

# A note under a section's heading, keyed by the section's first field.
SECTION_NOTES = {
    "gpu_memory_gb": _(
        "When you submit, the automatic check recomputes these with the capacity calculator "
        "and shows you and your grader where your own numbers disagree with it."
    ),
}


def _calculator_bound(name: str) -> Bound:
    field = ServingForm.base_fields[name]
    assert isinstance(field, BoundedNumberField)
    return field.bound


# Each worksheet number's physical range, read before any arithmetic (core.bounds): the same
# quantity has the calculator's range, so a plan the check recomputes is one the calculator takes.
WORKSHEET_BOUNDS: dict[str, Bound] = {
    "gpu_memory_gb": _calculator_bound("gpu_memory_gb"),
    "model_gb": _calculator_bound("model_gb"),
    "params_billion": _calculator_bound("params_b"),
    "overhead_gb": _calculator_bound("overhead_gb"),
    "kv_per_user_gb": _calculator_bound("kv_per_user_gb"),
    "context_tokens": _calculator_bound("context_tokens"),
    # A real model's KV cache is well under 10 MB a token; 1000 leaves room for any future one.
    "kv_per_token_mb": Bound(maximum=Decimal(1000)),
    "batch_size": Bound(maximum=Decimal(1_000_000), integer=True),
    "concurrency": _calculator_bound("users"),
    "claimed_max_users": _calculator_bound("users"),
}


def _card_label(card: WorkloadCard) -> str:
    """A workload card as a checkbox label: its name, kind, model and the calculator's answer."""
    details = [card.get_kind_display(), card.model_name]
    users = card.result.get("max_active_users") if isinstance(card.result, dict) else None
    if users is not None:
        details.append(str(_("room for %(users)s active users") % {"users": users}))
    return f"{card.name} ({', '.join(d for d in details if d)})"


# The attached load test: its deployment's link (stored) and its result file (read at save). Not
# part of a submitted version's text: the version keeps the comparison itself.
MEASURED_FIELDS = ("measured_link", "measured_result")


class WorksheetForm(BoundedModelForm):
    bounds = WORKSHEET_BOUNDS
    # The load test's result file: read at save, beside the prediction, never stored as text.
    measured_result = forms.CharField(
        label=_("Load test result (JSON)"),
        required=False,
        max_length=MAX_RESULT_BYTES,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        help_text=_(
            "Paste the file `vllm bench serve --save-result` or GuideLLM wrote. Leave it empty to "
            "keep the result already attached; empty the link above to remove it."
        ),
    )
    workload_cards = forms.ModelMultipleChoiceField(
        queryset=WorkloadCard.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Attach workload cards"),
    )

    class Meta:
        model = CapstoneWorksheet
        fields = [*WORKSHEET_FIELDS, *MEASURED_FIELDS[:1], "workload_cards"]
        # Every free-text field is a short textarea (the model's TextFields).
        widgets = {
            field.name: forms.Textarea(attrs={"rows": 3})
            for field in CapstoneWorksheet._meta.get_fields()
            if isinstance(field, models.TextField)
        }
        help_texts = HELP

    def __init__(self, *args: Any, learner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cards = self.fields["workload_cards"]
        assert isinstance(cards, forms.ModelMultipleChoiceField)
        cards.queryset = workload_cards_owned_by(user=learner)
        cards.label_from_instance = _card_label  # type: ignore[method-assign,assignment]

    def clean_paths_query(self) -> str:
        """A comparison's link whose inputs the comparison takes (the engine runs at save)."""
        link: str = (self.cleaned_data.get("paths_query") or "").strip()
        if link:
            comparison = comparison_forms_for_link(link)
            if not comparison.is_valid():
                reasons = "; ".join(
                    f"{name.replace('_', ' ')}: {' '.join(messages)}"
                    for name, messages in comparison.field_errors().items()
                )
                raise forms.ValidationError(
                    _("the comparison's inputs are refused (%(reasons)s).") % {"reasons": reasons},
                    code="invalid",
                )
        return link

    def sections(self) -> list[dict[str, Any]]:
        """The worksheet's sections: title, a note (or ""), and the bound fields (the load test's
        link and result file after the first load test)."""
        return [
            {
                "title": title,
                "note": SECTION_NOTES.get(names[0], ""),
                "fields": [
                    self[n]
                    for name in names
                    for n in ((name, *MEASURED_FIELDS) if name == "first_load_test" else (name,))
                ],
            }
            for title, names in WORKSHEET_SECTIONS
        ]


class WorksheetAdminForm(BoundedModelForm):
    """The admin's worksheet: the learner's form's ranges, and only the learner's own cards."""

    bounds = WORKSHEET_BOUNDS

    class Meta:
        model = CapstoneWorksheet
        exclude = ["calculator_result", "paths_comparison", "measured_comparison"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        learner, cards = data.get("learner"), data.get("workload_cards") or []
        if learner is not None and any(card.owner_id != learner.pk for card in cards):
            self.add_error("workload_cards", _("Attach only the learner's own workload cards."))
        return data


class GradeForm(forms.Form):
    """A radio group of levels and a comment per criterion, plus overall feedback."""

    overall_feedback = forms.CharField(
        label=_("Overall feedback"), required=False, widget=forms.Textarea(attrs={"rows": 5})
    )

    def __init__(self, *args: Any, criteria: list[Criterion], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        for criterion in criteria:
            self.fields[f"level_{criterion.pk}"] = forms.TypedChoiceField(
                label=criterion.title,
                choices=[
                    (level.pk, f"{level.title} ({level.points})")
                    for level in criterion.levels.all()
                ],
                coerce=int,
                empty_value=None,
                required=False,
                widget=forms.RadioSelect,
            )
            self.fields[f"comment_{criterion.pk}"] = forms.CharField(
                label=_("Comment on %(criterion)s") % {"criterion": criterion.title},
                required=False,
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    def criterion_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "criterion": c,
                "levels": list(c.levels.all()),
                "level_field": self[f"level_{c.pk}"],
                "comment_field": self[f"comment_{c.pk}"],
                "chosen": self._chosen(c),
            }
            for c in self.criteria
        ]

    def _chosen(self, criterion: Criterion) -> str:
        value = self[f"level_{criterion.pk}"].value()
        return "" if value in (None, "") else str(value)

    def scores(self) -> list[ScoreInput]:
        return [
            ScoreInput(
                criterion_id=c.pk,
                level_id=self.cleaned_data.get(f"level_{c.pk}"),
                comment=self.cleaned_data.get(f"comment_{c.pk}") or "",
            )
            for c in self.criteria
        ]


class RubricForm(forms.ModelForm):
    class Meta:
        model = Rubric
        fields = ["title"]


class CriterionForm(forms.ModelForm):
    position = BoundedNumberField(label=_("Position"), bound=POSITION, initial=0)

    class Meta:
        model = Criterion
        fields = ["key", "title", "description", "position"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}


class LevelForm(forms.ModelForm):
    # Bounded: a grade's total is the sum of its levels' points (issue 12: 2147483647 points
    # saved, then every grade of the course was a 500).
    points = BoundedNumberField(label=_("Points"), bound=RUBRIC_POINTS)
    position = BoundedNumberField(label=_("Position"), bound=POSITION, initial=0)

    class Meta:
        model = Level
        fields = ["key", "title", "points", "description", "position"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}


# Typed loosely on the form: views take any inline formset of model forms.
LevelFormSet: type[BaseInlineFormSet[Level, Criterion, Any]] = inlineformset_factory(
    Criterion,
    Level,
    form=LevelForm,
    extra=1,
    can_delete=True,
)


def level_inputs(levels: BaseInlineFormSet[Level, Criterion, Any]) -> list[LevelInput]:
    """A valid level formset's filled-in levels as plain values (blank extra forms left out)."""
    out = []
    for data in levels.cleaned_data:
        if not data or (data.get("DELETE") and data.get("id") is None):
            continue
        level = data.get("id")
        out.append(
            LevelInput(
                level_id=level.pk if level is not None else None,
                key=data["key"],
                title=data["title"],
                points=data["points"],
                description=data.get("description") or "",
                position=data.get("position") or 0,
                delete=bool(data.get("DELETE")),
            )
        )
    return out
