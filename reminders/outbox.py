"""The digest outbox's state machine: scan (insert pending rows), enqueue, claim, send, fail,
requeue, and closing today's digest on unsubscribe.

Exactly one digest per learner per local date comes from the outbox's unique key and the row
lock, not from the broker delivering once: a second scan inserts nothing, and a second delivery
of a send finds the row already claimed or sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import make_msgid
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from reminders import outbox_pg
from reminders.models import ReminderDigest
from reminders.selectors import (
    digests_failed_retryable,
    digests_stale,
)

Status = ReminderDigest.Status

# A queued send nobody took within this long was lost (a process died between commit and enqueue).
PENDING_STALE_AFTER = timedelta(minutes=10)
# Longer than the task's hard time limit (300 s): a row still `sending` after this was left by a
# worker that died mid-send.
SENDING_STALE_AFTER = timedelta(minutes=10)
# The scan retries a failed row again only after this pause, and gives up after this many tries
# (each round is the task's own retries with backoff).
FAILED_RETRY_AFTER = timedelta(minutes=30)
MAX_ATTEMPTS = 18


@dataclass(frozen=True)
class ScanResult:
    created: int
    requeued: int
    enqueued_ids: list[int]


@dataclass(frozen=True)
class RequeueResult:
    pending: int
    interrupted: int
    failed: int
    digest_ids: list[int]

    @property
    def total(self) -> int:
        return len(self.digest_ids)


def _history(digest: ReminderDigest, *, status: str, now: datetime, note: str = "") -> None:
    digest.history = [
        *digest.history,
        {"at": now.isoformat(), "status": status, "attempt": digest.attempts, "note": note},
    ]


def _new_history(*, now: datetime, note: str) -> list[dict[str, Any]]:
    return [{"at": now.isoformat(), "status": Status.PENDING, "attempt": 0, "note": note}]


def digests_requeue(
    *, now: datetime, failed_before: datetime, max_attempts: int = MAX_ATTEMPTS
) -> RequeueResult:
    pending = interrupted = failed = 0
    ids: list[int] = []
    stale = digests_stale(
        now=now,
        pending_before=now - PENDING_STALE_AFTER,
        sending_before=now - SENDING_STALE_AFTER,
    )
    for digest in stale.select_for_update(skip_locked=True):
        if digest.status == Status.SENDING:
            # The worker died between claiming and finishing: the mail server may already
            # have the message, so this resend (same Message-ID) can be the one duplicate.
            digest.status = Status.PENDING
            _history(digest, status=Status.PENDING, now=now, note="interrupted mid-send; resend")
            interrupted += 1
        else:
            _history(digest, status=Status.PENDING, now=now, note="no worker took it; re-enqueued")
            pending += 1
        digest.save(update_fields=["status", "history", "updated_at"])
        ids.append(digest.pk)
    retryable = digests_failed_retryable(
        now=now, failed_before=failed_before, max_attempts=max_attempts
    )
    for digest in retryable.select_for_update(skip_locked=True):
        _history(digest, status=Status.FAILED, now=now, note="re-enqueued after failure")
        digest.save(update_fields=["history", "updated_at"])
        ids.append(digest.pk)
        failed += 1
    return RequeueResult(pending=pending, interrupted=interrupted, failed=failed, digest_ids=ids)


def _message_domain() -> str:
    return urlsplit(settings.SITE_URL).hostname or "localhost"


class ClaimStarted(Protocol):
    """A claim sent to the database, its answer still to read (on PostgreSQL), or already
    answered (elsewhere)."""

    digest_id: int
    message_id: str

    def result(self) -> ReminderDigest | None: ...


@dataclass
class _Answered:
    digest_id: int
    message_id: str
    digest: ReminderDigest | None

    def result(self) -> ReminderDigest | None:
        return self.digest


def digest_claim_start(
    *,
    digest_id: int,
    now: datetime,
    carried: outbox_pg.CarriedFinish | None = None,
    stored_message_id: str = "",
) -> ClaimStarted:
    """Lock the row and move it to `sending`; its `result()` is None when it is sent, skipped,
    already being sent, or locked by another worker right now (skip_locked: the other worker
    owns it). On PostgreSQL, one statement, carrying the chunk's held finishes, sent without
    waiting: until `result()`, the caller may do anything but use the database.
    `stored_message_id` is the row's, if the caller read it (a retry keeps it)."""
    # Generated once and kept: a resend carries the same Message-ID, so a mail client can fold
    # a duplicate.
    message_id = stored_message_id or make_msgid(
        idstring=f"digest{digest_id}", domain=_message_domain()
    )
    if connection.vendor == "postgresql":
        return outbox_pg.claim_start(
            digest_id=digest_id, now=now, message_id=message_id, carried=carried
        )
    with transaction.atomic():
        digest = (
            ReminderDigest.objects.select_for_update(skip_locked=True)
            .filter(pk=digest_id, status__in=[Status.PENDING, Status.FAILED])
            .first()
        )
        if digest is None:
            return _Answered(digest_id, message_id, None)
        digest.status = Status.SENDING
        digest.attempts += 1
        digest.message_id = digest.message_id or message_id
        _history(digest, status=Status.SENDING, now=now)
        digest.save(update_fields=["status", "attempts", "message_id", "history", "updated_at"])
    return _Answered(digest_id, message_id, digest)


def digest_claim(*, digest_id: int, now: datetime) -> ReminderDigest | None:
    """`digest_claim_start`, waited for."""
    return digest_claim_start(digest_id=digest_id, now=now).result()


def digest_release(*, digest_id: int) -> None:
    """Undo the claim of a digest never handed to the mail server (a chunk claims one digest
    ahead; the send before it failed): the row is as it was, for the task's retry."""
    if connection.vendor == "postgresql":
        outbox_pg.release(digest_id=digest_id)
        return
    with transaction.atomic():
        digest = ReminderDigest.objects.select_for_update().filter(pk=digest_id).first()
        if digest is None or digest.status != Status.SENDING:
            return
        digest.history = digest.history[:-1]
        digest.status = digest.history[-1]["status"] if digest.history else Status.PENDING
        digest.attempts -= 1
        digest.save(update_fields=["status", "attempts", "history", "updated_at"])


def digest_finish(
    *,
    digest: ReminderDigest,
    status: str,
    now: datetime,
    note: str,
    carried: outbox_pg.CarriedFinish | None = None,
) -> ReminderDigest:
    """One UPDATE: the row is ours (claimed), so no lock is taken again."""
    digest.status = status
    digest.last_error = "" if status == Status.SENT else digest.last_error
    _history(digest, status=status, now=now, note=note)
    if connection.vendor == "postgresql":
        outbox_pg.finish(digest=digest, note=note, now=now, carried=carried)
        return digest
    fields = {
        "status": digest.status,
        "due_count": digest.due_count,
        "first_item_id": digest.first_item_id,
        "sent_at": digest.sent_at,
        "history": digest.history,
        "updated_at": timezone.now(),
    }
    if status == Status.SENT:
        fields["last_error"] = ""
    ReminderDigest.objects.filter(pk=digest.pk).update(**fields)
    return digest


def failure_reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def digest_mark_failed(*, digest_id: int, reason: str, now: datetime, final: bool = False) -> None:
    """Record a failed attempt (or, `final`, that the task has given up) with its reason."""
    with transaction.atomic():
        digest = ReminderDigest.objects.select_for_update().filter(pk=digest_id).first()
        if digest is None or digest.status == Status.SENT:
            return
        digest.status = Status.FAILED
        digest.last_error = reason
        note = f"gave up after {digest.attempts} attempts: {reason}" if final else reason
        _history(digest, status=Status.FAILED, now=now, note=note)
        digest.save(update_fields=["status", "last_error", "history", "updated_at"])


def reminders_unsubscribe(*, learner: User, now: datetime) -> User:
    """Switch the learner's reminders off, and close today's digest if it has not gone yet."""
    with transaction.atomic():
        User.objects.filter(pk=learner.pk).update(reminders_enabled=False)
        learner.reminders_enabled = False
        for digest in ReminderDigest.objects.select_for_update(skip_locked=True).filter(
            Q(status=Status.PENDING) | Q(status=Status.FAILED), learner=learner
        ):
            digest.status = Status.SKIPPED
            _history(digest, status=Status.SKIPPED, now=now, note="unsubscribed")
            digest.save(update_fields=["status", "history", "updated_at"])
    return learner
