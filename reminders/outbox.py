"""The digest outbox's state machine: scan (insert pending rows), enqueue, claim, send, fail,
requeue, and closing today's digest on unsubscribe.

Exactly one digest per learner per local date comes from the outbox's unique key and the row
lock, not from the broker delivering once: a second scan inserts nothing, and a second delivery
of a send finds the row already claimed or sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import mailers, make_msgid
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from reminders import outbox_pg
from reminders.mailer import ChunkState, DigestMailer, PreparedDigest
from reminders.models import ReminderDigest
from reminders.selectors import (
    digests_content_for,
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


def digest_claim(
    *,
    digest_id: int,
    now: datetime,
    carried: outbox_pg.CarriedFinish | None = None,
    meanwhile: Callable[[str], None] | None = None,
    stored_message_id: str = "",
) -> ReminderDigest | None:
    """Lock the row and move it to `sending`; None when it is sent, skipped, already being sent,
    or locked by another worker right now (skip_locked: the other worker owns it). On
    PostgreSQL, one statement, carrying the chunk's last finish if any, and `meanwhile` runs
    (given the Message-ID the claim stores unless the row has one) while it is on its way.
    `stored_message_id` is the row's, if the caller read it (a retry keeps it)."""
    # Generated once and kept: a resend carries the same Message-ID, so a mail client can fold
    # a duplicate.
    message_id = stored_message_id or make_msgid(
        idstring=f"digest{digest_id}", domain=_message_domain()
    )
    if connection.vendor == "postgresql":
        return outbox_pg.claim(
            digest_id=digest_id,
            now=now,
            message_id=message_id,
            carried=carried,
            meanwhile=None if meanwhile is None else lambda: meanwhile(message_id),
        )
    with transaction.atomic():
        digest = (
            ReminderDigest.objects.select_for_update(skip_locked=True)
            .filter(pk=digest_id, status__in=[Status.PENDING, Status.FAILED])
            .first()
        )
        if digest is None:
            return None
        digest.status = Status.SENDING
        digest.attempts += 1
        digest.message_id = digest.message_id or message_id
        _history(digest, status=Status.SENDING, now=now)
        digest.save(update_fields=["status", "attempts", "message_id", "history", "updated_at"])
    return digest


def digest_send(
    *, digest_id: int, now: datetime, chunk: ChunkState | None = None
) -> ReminderDigest | None:
    """Claim, render, send and mark sent. A chunk's digests share a `ChunkState`; within one,
    each digest is rendered while its claim is on its way, and sent once the claim is back. A
    send error marks the row failed with the reason and propagates (the task decides whether to
    retry)."""
    early: list[PreparedDigest] = []
    carried = chunk.carried if chunk else None
    meanwhile = chunk.early_render(digest_id=digest_id, into=early) if chunk else None
    digest = digest_claim(
        digest_id=digest_id,
        now=now,
        carried=carried,
        meanwhile=meanwhile,
        stored_message_id=chunk.message_ids.get(digest_id, "") if chunk else "",
    )
    if digest is None:
        return None
    learner = (chunk.learners if chunk else {}).get(digest.learner_id) or User.objects.get(
        pk=digest.learner_id
    )
    try:
        content = (chunk.contents if chunk else {}).get(learner.pk) or digests_content_for(
            learner_ids=[learner.pk], now=now
        )[learner.pk]
        if not learner.reminders_enabled or content.first_schedule is None:
            reason = "reminders switched off" if not learner.reminders_enabled else "nothing due"
            return _digest_finish(
                digest=digest, status=Status.SKIPPED, now=now, note=reason, carried=carried
            )
        mailer = chunk.mailer if chunk else DigestMailer(mailers.default)
        try:
            prepared = next(
                (p for p in early if p.parts.headers["Message-ID"] == digest.message_id), None
            ) or mailer.prepare(
                digest_id=digest.pk,
                message_id=digest.message_id,
                learner=learner,
                content=content,
            )
            mailer.deliver(prepared)
        finally:
            if chunk is None:
                mailer.connection.close()
    except Exception as exc:
        digest_mark_failed(digest_id=digest.pk, reason=_reason(exc), now=now)
        raise
    digest.due_count = content.due_count
    digest.first_item_id = content.first_schedule.item_id
    digest.sent_at = timezone.now()
    return _digest_finish(
        digest=digest, status=Status.SENT, now=now, note=f"{content.due_count} due", carried=carried
    )


def _digest_finish(
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


def _reason(exc: BaseException) -> str:
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
