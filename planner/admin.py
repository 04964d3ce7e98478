"""Admin for the planner: workload cards, rubrics with their criteria and levels, the capstone."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from planner import models
from planner.capstone.forms import LevelForm


@admin.register(models.WorkloadCard)
class WorkloadCardAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "owner", "is_example", "updated_at"]
    list_filter = ["kind", "is_example"]
    search_fields = ["name", "model_name", "owner__email"]
    raw_id_fields = ["owner"]


class CriterionInline(admin.StackedInline):
    model = models.Criterion
    extra = 0
    fields = ["position", "key", "title", "description"]
    show_change_link = True


@admin.register(models.Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ["title", "course", "updated_at"]
    search_fields = ["title", "course__title"]
    inlines = [CriterionInline]


class LevelInline(admin.TabularInline):
    model = models.Level
    # The rubric editor's form: points bounded, so a grade's total always fits its column.
    form = LevelForm
    extra = 0
    fields = ["position", "key", "title", "points", "description"]


@admin.register(models.Criterion)
class CriterionAdmin(admin.ModelAdmin):
    list_display = ["title", "key", "rubric", "position"]
    list_filter = ["rubric"]
    inlines = [LevelInline]


@admin.register(models.CapstoneWorksheet)
class CapstoneWorksheetAdmin(admin.ModelAdmin):
    list_display = ["learner", "course", "feature", "updated_at"]
    list_filter = ["course"]
    search_fields = ["learner__email", "feature"]
    raw_id_fields = ["learner"]
    filter_horizontal = ["workload_cards"]


@admin.register(models.CapstoneSubmission)
class CapstoneSubmissionAdmin(admin.ModelAdmin):
    """Read-only: a submitted version is immutable."""

    list_display = ["learner", "course", "version", "submitted_at", "is_late"]
    list_filter = ["course", "is_late"]
    search_fields = ["learner__email"]

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown beside their grade and never added here (subclasses list their fields read-only)."""

    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class CriterionScoreInline(ReadOnlyInline):
    model = models.CriterionScore
    fields = readonly_fields = ("criterion", "level", "points", "comment")


class GradeChangeInline(ReadOnlyInline):
    model = models.GradeChange
    fields = readonly_fields = ("at", "actor", "action", "changes")


@admin.register(models.Grade)
class GradeAdmin(admin.ModelAdmin):
    """Read-only here: grades change through the grading page, which records every change."""

    list_display = ["submission", "grader", "status", "total_points", "max_points", "released_at"]
    list_filter = ["status"]
    inlines = [CriterionScoreInline, GradeChangeInline]

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(models.GradingClaim)
class GradingClaimAdmin(admin.ModelAdmin):
    list_display = ["submission", "grader", "claimed_at", "expires_at"]
