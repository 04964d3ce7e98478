"""Admin for quiz items (editable) and for recall data (read-only: it moves only through reviews)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from core.forms import BoundedModelForm, SignedBoundedNumberField
from core.ranges import CONTENT_FIGURE, POSITION
from quizzes.models import Choice, FsrsParameters, QuizItem, RecallSchedule, ReviewLog
from quizzes.services.schedule_courses import quiz_item_save


class QuizItemAdminForm(BoundedModelForm):
    """An item's figures within the content importer's ranges (an expected answer may be
    negative; its size, like the tolerance, within CONTENT_FIGURE)."""

    bounds = {"position": POSITION, "tolerance": CONTENT_FIGURE}
    expected_value = SignedBoundedNumberField(
        label=_("Expected value"), bound=CONTENT_FIGURE, required=False
    )

    class Meta:
        model = QuizItem
        fields = "__all__"


class ChoiceAdminForm(BoundedModelForm):
    bounds = {"position": POSITION}

    class Meta:
        model = Choice
        fields = "__all__"


class ChoiceInline(admin.TabularInline[Choice, QuizItem]):
    model = Choice
    form = ChoiceAdminForm
    extra = 0


@admin.register(QuizItem)
class QuizItemAdmin(admin.ModelAdmin[QuizItem]):
    form = QuizItemAdminForm
    list_display = ["key", "lesson", "kind", "position"]
    list_filter = ["kind", "lesson__module__course"]
    search_fields = ["key", "prompt"]
    inlines = [ChoiceInline]
    # A calculated template changes only through the content import, which draws it many times.
    readonly_fields = ["calculation", "skills"]

    def save_model(self, request: HttpRequest, obj: QuizItem, form: Any, change: bool) -> None:
        quiz_item_save(item=obj)  # its recall schedules follow it to another course


class ReadOnlyAdmin[M: models.Model](admin.ModelAdmin[M]):
    """Recall data and outbox rows move only through their services."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False


@admin.register(RecallSchedule)
class RecallScheduleAdmin(ReadOnlyAdmin[RecallSchedule]):
    list_display = ["learner", "item", "state", "due", "last_review", "reps", "lapses"]
    list_select_related = ["learner", "item"]
    search_fields = ["learner__email", "item__key"]


@admin.register(ReviewLog)
class ReviewLogAdmin(ReadOnlyAdmin[ReviewLog]):
    list_display = ["learner", "item", "rating", "source", "reviewed_at", "duration_ms"]
    list_select_related = ["learner", "item"]
    list_filter = ["rating", "source"]
    search_fields = ["learner__email", "item__key"]


@admin.register(FsrsParameters)
class FsrsParametersAdmin(ReadOnlyAdmin[FsrsParameters]):
    """Parameter sets are written by training only; the admin shows them and their scores."""

    list_display = [
        "course",
        "learner",
        "version",
        "status",
        "trained_at",
        "review_count",
        "defaults_log_loss",
        "active_log_loss",
        "candidate_log_loss",
    ]
    list_select_related = ["course", "learner"]
    list_filter = ["status", "course"]
    search_fields = ["learner__email", "course__slug"]
