"""Admin for quiz items (editable) and for recall data (read-only: it moves only through reviews)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from quizzes.models import Choice, QuizItem, RecallSchedule, ReminderDigest, ReviewLog


class ChoiceInline(admin.TabularInline[Choice, QuizItem]):
    model = Choice
    extra = 0


@admin.register(QuizItem)
class QuizItemAdmin(admin.ModelAdmin[QuizItem]):
    list_display = ["key", "lesson", "kind", "position"]
    list_filter = ["kind", "lesson__module__course"]
    search_fields = ["key", "prompt"]
    inlines = [ChoiceInline]


class ReadOnlyAdmin[M: RecallSchedule | ReviewLog | ReminderDigest](admin.ModelAdmin[M]):
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


@admin.register(ReminderDigest)
class ReminderDigestAdmin(ReadOnlyAdmin[ReminderDigest]):
    list_display = ["learner", "local_date", "status", "attempts", "due_count", "sent_at"]
    list_select_related = ["learner"]
    list_filter = ["status", "local_date"]
    search_fields = ["learner__email", "message_id"]
