"""Admin for the peer step: the course's calibration examples with their staff levels and why,
the peer settings (through the service the instructors' page uses), the plans open to peers
(read-only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from planner.capstone.peer_forms import PeerSettingsForm
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    PeerPlan,
    PeerSettings,
)
from planner.capstone.peer_services import (
    peer_settings_save,
)


class StaffLevelForm(forms.ModelForm[CalibrationStaffLevel]):
    class Meta:
        model = CalibrationStaffLevel
        fields = ["criterion", "level", "why"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        criterion, level = data.get("criterion"), data.get("level")
        if criterion is not None and level is not None and level.criterion_id != criterion.pk:
            self.add_error("level", "Choose one of this criterion's own levels.")
        return data


class StaffLevelInline(admin.TabularInline[CalibrationStaffLevel, CalibrationExample]):
    model = CalibrationStaffLevel
    form = StaffLevelForm
    extra = 0


@admin.register(CalibrationExample)
class CalibrationExampleAdmin(admin.ModelAdmin[CalibrationExample]):
    list_display = ["title", "course", "position"]
    list_filter = ["course"]
    inlines = [StaffLevelInline]


@admin.register(PeerSettings)
class PeerSettingsAdmin(admin.ModelAdmin[PeerSettings]):
    form = PeerSettingsForm
    fields = ["course", "enabled", "assessors_per_plan", "calibration_attempts", "deadline"]
    list_display = ["course", "enabled", "assessors_per_plan", "calibration_attempts", "deadline"]

    def save_model(self, request: HttpRequest, obj: PeerSettings, form: Any, change: bool) -> None:
        peer_settings_save(
            course=obj.course,
            enabled=obj.enabled,
            assessors_per_plan=obj.assessors_per_plan,
            calibration_attempts=obj.calibration_attempts,
            deadline=obj.deadline,
        )


@admin.register(PeerPlan)
class PeerPlanAdmin(admin.ModelAdmin[PeerPlan]):
    list_display = ["submission", "state", "assigned", "completed", "graded_at"]
    list_filter = ["state", "course"]
    readonly_fields = [f.name for f in PeerPlan._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
