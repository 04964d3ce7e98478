"""The digest outbox: at most one recall digest per learner per local date."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from quizzes.models import QuizItem


class ReminderDigest(models.Model):
    """Outbox row: at most one recall digest per learner per local date."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        SENDING = "sending", _("Sending")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")
        SKIPPED = "skipped", _("Skipped")
        # The message's data went out and the server's answer was lost: it may have arrived,
        # so it is never sent again (at most one digest a day).
        AMBIGUOUS = "ambiguous", _("Possibly delivered")

    # No index of its own: the unique (learner, local_date) key leads with it, so each digest
    # written by the scan updates one index fewer.
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="reminder_digests",
        db_index=False,
    )
    local_date = models.DateField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    due_count = models.PositiveIntegerField(default=0)
    first_item = models.ForeignKey(
        QuizItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    message_id = models.CharField(max_length=255, blank=True)
    last_error = models.TextField(blank=True)
    # Failed for now and tried again from this moment (null: failed for good); pending and not
    # taken by then, re-enqueued by the sweep.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # The first of the temporary failures in a row: retries stop a window after it.
    failing_since = models.DateTimeField(null=True, blank=True)
    # Every state change, appended: [{"at": iso, "status": ..., "note": ...}, ...]
    history = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table keeps the name it had when digests lived in the quizzes app.
        db_table = "quizzes_reminderdigest"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "local_date"], name="digest_unique_per_local_date"
            )
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="digest_status_created")]

    def __str__(self) -> str:
        return f"Digest for {self.learner} on {self.local_date} ({self.status})"
