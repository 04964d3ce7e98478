"""The capstone's email outbox: each email the capstone promises (a grade released or changed, a
resubmission received) is a row written in the transaction that makes the promise.

A sender claims the row and sends it; a failed send is retried with backoff, or failed for good,
or (its data sent, the answer lost) recorded as possibly delivered and never sent again; the
sweep re-enqueues rows whose retry is due or whose send was lost.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from functools import partial
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import make_msgid
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from config.mail import SendFailure, retry_at, retry_gives_up
from courses.selectors import courses_taught_by
from planner.capstone.models import CapstoneSubmission, Grade

logger = logging.getLogger(__name__)

# A row no sender took within this long is enqueued again by the sweep (its enqueue was lost,
# or refused while the broker was down).
UNTAKEN_AFTER = timedelta(seconds=30)
# Longer than the send task's hard time limit: a row still `sending` then was left by a dead
# worker (the resend carries the same Message-ID).
SENDING_STALE_AFTER = timedelta(minutes=10)
# A regrade's email waits this long after the latest regrade of the grade: a grader correcting
# a slip in quick saves sends one "grade changed" email for the final state, not one per save.
GRADE_CHANGE_QUIET = timedelta(seconds=60)


class CapstoneEmail(models.Model):
    """Outbox row: one promised email to a learner about their capstone."""

    class Kind(models.TextChoices):
        GRADE_RELEASED = "grade_released", _("Grade released")
        GRADE_CHANGED = "grade_changed", _("Grade changed")
        RESUBMISSION_RECEIVED = "resubmitted", _("Resubmission received")
        PEER_GRADED = "peer_graded", _("Graded by peers")
        PEER_WAITING = "peer_waiting", _("A plan waits for your assessment")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        SENDING = "sending", _("Sending")
        SENT = "sent", _("Sent")
        FAILED = "failed", _("Failed")
        AMBIGUOUS = "ambiguous", _("Possibly delivered")

    kind = models.CharField(max_length=16, choices=Kind.choices)
    submission = models.ForeignKey(
        CapstoneSubmission, on_delete=models.CASCADE, related_name="emails"
    )
    grade = models.ForeignKey(
        Grade, null=True, blank=True, on_delete=models.CASCADE, related_name="emails"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    message_id = models.CharField(max_length=255, blank=True)
    last_error = models.TextField(blank=True)
    # Pending or failed for now: enqueued by the sweep from this moment (null: nothing to do).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Not sent before this moment (a regrade's quiet period; each later regrade moves it on).
    quiet_until = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "planner"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="capstone_email_due"),
            models.Index(fields=["submission", "kind", "created_at"], name="capstone_email_kind"),
        ]
        constraints = [
            # "Your plan has been graded by your peers" is promised once per plan.
            models.UniqueConstraint(
                fields=["submission"], condition=Q(kind="peer_graded"), name="peer_graded_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.submission} ({self.status})"


Status = CapstoneEmail.Status


def capstone_email_promise(
    *,
    kind: str,
    submission: CapstoneSubmission,
    now: datetime,
    grade: Grade | None = None,
) -> CapstoneEmail:
    """Write the email's row in the caller's transaction; its send is enqueued once that commits
    (and, should the broker refuse, by the sweep)."""
    email = CapstoneEmail.objects.create(
        kind=kind,
        submission=submission,
        grade=grade,
        created_at=now,
        next_attempt_at=now + UNTAKEN_AFTER,
    )
    transaction.on_commit(partial(capstone_emails_enqueue, email_ids=[email.pk]))
    return email


def grade_change_email_promise(*, grade: Grade, now: datetime) -> CapstoneEmail:
    """Promise the learner an email about their regraded grade, once the regrades stop: an
    email of this grade not yet taken by a sender (the release's, or an earlier regrade's) will
    show the grade as it is when sent, so it carries this change too (a regrade's is put off
    for GRADE_CHANGE_QUIET again); otherwise a new row, sent after GRADE_CHANGE_QUIET. Call in
    the regrade's transaction."""
    waiting = (
        CapstoneEmail.objects.select_for_update()
        .filter(
            grade=grade,
            status=Status.PENDING,
            kind__in=[CapstoneEmail.Kind.GRADE_RELEASED, CapstoneEmail.Kind.GRADE_CHANGED],
        )
        .order_by("-created_at")
        .first()
    )
    quiet_until = now + GRADE_CHANGE_QUIET
    if waiting is not None and waiting.kind == CapstoneEmail.Kind.GRADE_RELEASED:
        return waiting
    if waiting is None:
        waiting = CapstoneEmail(
            kind=CapstoneEmail.Kind.GRADE_CHANGED,
            submission=grade.submission,
            grade=grade,
            created_at=now,
        )
    waiting.quiet_until = quiet_until
    # The sweep's fallback, should the send due at the quiet period's end be lost.
    waiting.next_attempt_at = quiet_until + UNTAKEN_AFTER
    waiting.save()
    transaction.on_commit(partial(capstone_emails_enqueue, email_ids=[waiting.pk], eta=quiet_until))
    return waiting


def capstone_emails_enqueue(*, email_ids: list[int], eta: datetime | None = None) -> bool:
    """One send task per email on the `email` queue; False if the broker refused (the rows
    wait for the sweep)."""
    from planner.tasks import capstone_email_send  # the task imports the sender, which imports this

    try:
        for email_id in email_ids:
            capstone_email_send.apply_async((email_id,), eta=eta)  # type: ignore[arg-type]
    except Exception:
        logger.warning("could not enqueue capstone email(s) %s; the sweep will", email_ids)
        # Due at once: the sweep's first run once the broker is back sends them.
        CapstoneEmail.objects.filter(pk__in=email_ids, status=Status.PENDING).update(
            next_attempt_at=timezone.now()
        )
        return False
    return True


def capstone_email_claim(*, email_id: int, now: datetime) -> CapstoneEmail | None:
    """Lock the row and move it to `sending`; None when it is not there to send (sent, possibly
    delivered, failed for good, or another worker holds it)."""
    with transaction.atomic():
        email = (
            CapstoneEmail.objects.select_for_update(skip_locked=True)
            .filter(pk=email_id)
            .filter(
                Q(status=Status.PENDING) | Q(status=Status.FAILED, next_attempt_at__isnull=False)
            )
            # A regrade's email in its quiet period: the send due at its end takes it.
            .exclude(quiet_until__gt=now)
            .first()
        )
        if email is None:
            return None
        email.status = Status.SENDING
        email.attempts += 1
        email.next_attempt_at = None
        # Fixed before the first send, as a digest's is: a resend after a sender died between
        # the server's acceptance and the row's update carries the same Message-ID, so mail
        # clients fold the one duplicate the outbox allows.
        email.message_id = email.message_id or make_msgid(
            idstring=f"capstone{email.pk}",
            domain=urlsplit(settings.SITE_URL).hostname or "localhost",
        )
        email.save(
            update_fields=["status", "attempts", "next_attempt_at", "message_id", "updated_at"]
        )
    return email


def capstone_email_sent(*, email: CapstoneEmail, now: datetime) -> None:
    CapstoneEmail.objects.filter(pk=email.pk, status=Status.SENDING).update(
        status=Status.SENT,
        sent_at=now,
        last_error="",
        failing_since=None,
        next_attempt_at=None,
        updated_at=timezone.now(),
    )


def capstone_email_failed(
    *, email: CapstoneEmail, failure: SendFailure, reason: str, now: datetime
) -> CapstoneEmail:
    """A temporary failure is retried with backoff until the retry window has passed; a
    permanent one (or a window spent) is failed for good; an ambiguous one is possibly
    delivered, never sent again."""
    email.last_error = reason
    email.next_attempt_at = None
    if failure == SendFailure.AMBIGUOUS:
        email.status = Status.AMBIGUOUS
    else:
        email.status = Status.FAILED
        if failure == SendFailure.TEMPORARY and not retry_gives_up(
            failing_since=email.failing_since, now=now
        ):
            email.failing_since = email.failing_since or now
            email.next_attempt_at = retry_at(failures=email.attempts, now=now)
    CapstoneEmail.objects.filter(pk=email.pk).exclude(status=Status.SENT).update(
        status=email.status,
        last_error=reason,
        next_attempt_at=email.next_attempt_at,
        failing_since=email.failing_since,
        updated_at=timezone.now(),
    )
    return email


def capstone_emails_sweep(*, now: datetime) -> list[int]:
    """Re-enqueue what is due: pending or failed rows whose moment has come (a lost or refused
    enqueue, a retry nobody ran) and rows left `sending` by a dead worker."""
    with transaction.atomic():
        rows = list(
            CapstoneEmail.objects.select_for_update(skip_locked=True).filter(
                Q(status__in=[Status.PENDING, Status.FAILED], next_attempt_at__lte=now)
                | Q(status=Status.SENDING, updated_at__lt=now - SENDING_STALE_AFTER)
            )[:1000]
        )
        for email in rows:
            email.status = Status.PENDING if email.status == Status.SENDING else email.status
            # Enqueued again if this send is lost too.
            email.next_attempt_at = now + SENDING_STALE_AFTER
            email.save(update_fields=["status", "next_attempt_at", "updated_at"])
        ids = [email.pk for email in rows]
        if ids:
            transaction.on_commit(partial(capstone_emails_enqueue, email_ids=ids))
    return ids


def capstone_emails_visible_to(*, user: User) -> models.QuerySet[CapstoneEmail]:
    """Staff see every capstone email; an instructor those of the courses they teach."""
    if user.is_staff:
        return CapstoneEmail.objects.all()
    return CapstoneEmail.objects.filter(
        submission__course_id__in=courses_taught_by(user=user).values("pk")
    )
