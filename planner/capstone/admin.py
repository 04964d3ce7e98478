"""Admin for the capstone: rubrics, criteria and levels, worksheets, and (read-only) grading.

Every number reads through the learner's or instructor's form (core.bounds), and every write goes
through the service the pages use.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest

from planner.capstone.forms import CriterionForm, LevelForm, WorksheetAdminForm, level_inputs
from planner.capstone.models import (
    CapstoneSubmission,
    CapstoneWorksheet,
    Criterion,
    CriterionScore,
    Grade,
    GradeChange,
    GradingClaim,
    Level,
    Rubric,
)
from planner.capstone.outbox import CapstoneEmail
from planner.capstone.rubric import (
    criterion_delete,
    criterion_levels_save,
    criterion_save,
    rubric_update,
)
from planner.capstone.services import worksheet_autosave


class CriterionInline(admin.StackedInline[Criterion, Rubric]):
    model = Criterion
    # The rubric editor's form: the position bounded.
    form = CriterionForm
    extra = 0
    fields = ["position", "key", "title", "description"]
    show_change_link = True


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin[Rubric]):
    list_display = ["title", "course", "updated_at"]
    search_fields = ["title", "course__title"]
    inlines = [CriterionInline]

    def save_model(self, request: HttpRequest, obj: Rubric, form: ModelForm, change: bool) -> None:
        rubric_update(rubric=obj, title=obj.title)

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: Any, change: bool
    ) -> None:
        # The inline's deletes were checked against grades by the admin (protected rows).
        for criterion in formset.save(commit=False):
            criterion_save(rubric=form.instance, criterion=criterion, data={})
        for gone in formset.deleted_objects:
            criterion_delete(criterion=gone)


class LevelInline(admin.TabularInline[Level, Criterion]):
    model = Level
    # The rubric editor's form: points bounded, so a grade's total always fits its column.
    form = LevelForm
    extra = 0
    fields = ["position", "key", "title", "points", "description"]


@admin.register(Criterion)
class CriterionAdmin(admin.ModelAdmin[Criterion]):
    form = CriterionForm
    fields = ["rubric", "position", "key", "title", "description"]
    list_display = ["title", "key", "rubric", "position"]
    list_filter = ["rubric"]
    inlines = [LevelInline]

    def save_model(
        self, request: HttpRequest, obj: Criterion, form: ModelForm, change: bool
    ) -> None:
        criterion_save(rubric=obj.rubric, criterion=obj, data={})

    def save_formset(
        self,
        request: HttpRequest,
        form: ModelForm,
        formset: BaseInlineFormSet[Level, Criterion, Any],
        change: bool,
    ) -> None:
        # The criterion page's service: the levels saved (and deleted) together, each checked.
        # save(commit=False) only lists what changed, for the admin's history.
        formset.save(commit=False)
        criterion_levels_save(criterion=form.instance, data={}, levels=level_inputs(formset))


@admin.register(CapstoneWorksheet)
class CapstoneWorksheetAdmin(admin.ModelAdmin[CapstoneWorksheet]):
    form = WorksheetAdminForm
    list_display = ["learner", "course", "feature", "updated_at"]
    list_filter = ["course"]
    search_fields = ["learner__email", "feature"]
    raw_id_fields = ["learner"]
    filter_horizontal = ["workload_cards"]
    readonly_fields = ["calculator_result"]

    def save_model(
        self, request: HttpRequest, obj: CapstoneWorksheet, form: ModelForm, change: bool
    ) -> None:
        # The learner's autosave: the same checks, and the calculator's result refreshed.
        worksheet_autosave(
            worksheet=obj,
            data=form.cleaned_data,
            workload_cards=form.cleaned_data["workload_cards"],
        )

    def save_related(
        self, request: HttpRequest, form: ModelForm, formsets: Any, change: bool
    ) -> None:
        # The cards were set by worksheet_autosave; the worksheet has no inlines.
        return None


class ReadOnlyAdmin[M: Any](admin.ModelAdmin[M]):
    """Rows written only by their services (a submitted version, a grade): shown, never added or
    changed here (an added grade would skip the grading page's checks and its history)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(CapstoneSubmission)
class CapstoneSubmissionAdmin(ReadOnlyAdmin[CapstoneSubmission]):
    """A submitted version is immutable."""

    list_display = ["learner", "course", "version", "submitted_at", "is_late"]
    list_filter = ["course", "is_late"]
    search_fields = ["learner__email"]


class ReadOnlyInline[M: Any](admin.TabularInline[M, Grade]):
    """Rows shown beside their grade and never added here (subclasses list their fields read-only)."""

    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class CriterionScoreInline(ReadOnlyInline[CriterionScore]):
    model = CriterionScore
    fields = readonly_fields = ("criterion", "level", "points", "comment")


class GradeChangeInline(ReadOnlyInline[GradeChange]):
    model = GradeChange
    fields = readonly_fields = ("at", "actor", "action", "changes")


@admin.register(Grade)
class GradeAdmin(ReadOnlyAdmin[Grade]):
    """Grades change through the grading page, which records every change."""

    list_display = [
        "submission",
        "origin",
        "grader",
        "status",
        "total_points",
        "max_points",
        "released_at",
    ]
    list_filter = ["status", "origin"]
    inlines = [CriterionScoreInline, GradeChangeInline]


@admin.register(GradingClaim)
class GradingClaimAdmin(admin.ModelAdmin[GradingClaim]):
    list_display = ["submission", "grader", "claimed_at", "expires_at"]


@admin.register(CapstoneEmail)
class CapstoneEmailAdmin(ReadOnlyAdmin[CapstoneEmail]):
    """The capstone's email outbox: written by grading, sent and retried by the outbox."""

    list_display = ["submission", "kind", "status", "attempts", "next_attempt_at", "sent_at"]
    list_filter = ["status", "kind"]
    readonly_fields = ["last_error"]
