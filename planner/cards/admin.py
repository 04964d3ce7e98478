"""Admin for workload cards: their numbers within the calculator's ranges, as the card form's."""

from __future__ import annotations

from django.contrib import admin

from planner.cards.forms import WorkloadCardAdminForm
from planner.cards.models import WorkloadCard


@admin.register(WorkloadCard)
class WorkloadCardAdmin(admin.ModelAdmin[WorkloadCard]):
    form = WorkloadCardAdminForm
    list_display = ["name", "kind", "owner", "is_example", "updated_at"]
    list_filter = ["kind", "is_example"]
    search_fields = ["name", "model_name", "owner__email"]
    raw_id_fields = ["owner"]
    # The calculator writes these two from the card's numbers; typed by hand they would disagree.
    readonly_fields = ["inputs", "result"]
