"""Admin for the digest outbox: read-only, it moves only through the outbox's services."""

from __future__ import annotations

from django.contrib import admin

from quizzes.admin import ReadOnlyAdmin
from reminders.models import ReminderDigest


@admin.register(ReminderDigest)
class ReminderDigestAdmin(ReadOnlyAdmin[ReminderDigest]):
    list_display = ["learner", "local_date", "status", "attempts", "due_count", "sent_at"]
    list_select_related = ["learner"]
    list_filter = ["status", "local_date"]
    search_fields = ["learner__email", "message_id"]
