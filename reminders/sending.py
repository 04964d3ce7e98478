"""Sending a chunk of digests over one SMTP connection (Django's email backend, the bytes composed
by reminders.mailer), each claimed, sent and marked on its own row: the lock and the unique key
give at most one email per digest.

A failure the server answered for one message (a 4xx or 5xx to its recipient or data) marks that
digest and the chunk goes on; one that loses the connection stops the chunk, and the digests not
yet claimed are retried together.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

from django.core.mail import mailers
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import timezone

from accounts.models import User
from config.mail import (
    SendFailure,
    closes_connection,
    data_sent_forget,
    data_was_sent,
    failure_reason,
    retry_at,
    send_failure,
)
from reminders.emails import DigestRenderer, digest_email
from reminders.mailer import DigestWire
from reminders.models import ReminderDigest
from reminders.outbox import digest_claim, digest_failed, digest_finish, digests_retry_later
from reminders.selectors import DigestContent, digests_content_for

logger = logging.getLogger(__name__)

Status = ReminderDigest.Status

# A chunk stops taking new digests after this long, well inside the task's soft time limit
# (240 s), so it ends on its own even where Celery cannot enforce the limit.
CHUNK_BUDGET_SECONDS = 180.0


@dataclass
class ChunkResult:
    statuses: dict[int, str] = field(default_factory=dict)
    # Digests not claimed because the chunk stopped (lost connection, time budget).
    unfinished: list[int] = field(default_factory=list)
    # Failed for now (or cut short), each with its retry time.
    retry: dict[int, datetime] = field(default_factory=dict)

    def next_retry(self) -> datetime | None:
        return min(self.retry.values(), default=None)


def digests_send(
    *, digest_ids: list[int], now: datetime, budget: float = CHUNK_BUDGET_SECONDS
) -> ChunkResult:
    """Send each digest of the chunk in order over one connection; what could not go now is in
    the result (`unfinished`, `retry`) with its retry time written on its row."""
    backend = mailers.default
    renderer: DigestRenderer | None = None
    wire = DigestWire.for_connection(backend)
    result = ChunkResult()
    deadline = time.monotonic() + budget
    # The chunk's learners, read once (a learner deleted since takes their digest row along,
    # so its claim finds nothing).
    learners = {
        learner.pk: learner for learner in User.objects.filter(reminder_digests__id__in=digest_ids)
    }
    contents = digests_content_for(learner_ids=list(learners), now=now)
    try:
        for position, digest_id in enumerate(digest_ids):
            if time.monotonic() > deadline:
                result.unfinished = digest_ids[position:]
                break
            digest = digest_claim(digest_id=digest_id, now=now)
            if digest is None:
                result.statuses[digest_id] = "not claimed"
                continue
            renderer = renderer or DigestRenderer()
            learner = learners.get(digest.learner_id)
            if learner is None:  # a row the chunk did not read (it came back meanwhile)
                learner = User.objects.get(pk=digest.learner_id)
            digest.learner = learner
            status, stop = _digest_send(
                digest=digest,
                now=now,
                backend=backend,
                wire=wire,
                renderer=renderer,
                contents=contents,
            )
            result.statuses[digest_id] = status
            if digest.status == Status.FAILED and digest.next_attempt_at is not None:
                result.retry[digest_id] = digest.next_attempt_at
            if stop:
                result.unfinished = digest_ids[position + 1 :]
                break
    finally:
        _close_quietly(backend)
    if result.unfinished:
        at = result.next_retry() or retry_at(failures=1, now=timezone.now())
        digests_retry_later(digest_ids=result.unfinished, at=at)
        result.retry.update(dict.fromkeys(result.unfinished, at))
    return result


def _digest_send(
    *,
    digest: ReminderDigest,
    now: datetime,
    backend: BaseEmailBackend,
    wire: DigestWire | None,
    renderer: DigestRenderer,
    contents: dict[int, DigestContent],
) -> tuple[str, bool]:
    """One claimed digest: skipped (reminders off, nothing due), sent, or failed. Its status,
    and whether the connection is lost (the chunk stops)."""
    learner = digest.learner
    content = (
        contents.get(learner.pk)
        or digests_content_for(learner_ids=[learner.pk], now=now)[learner.pk]
    )
    first = content.first_schedule
    if not learner.reminders_enabled or not learner.is_active or first is None:
        reason = "nothing due" if first is None else "reminders switched off"
        digest_finish(digest=digest, status=Status.SKIPPED, now=now, note=reason)
        return Status.SKIPPED, False
    data_sent_forget(backend)
    try:
        parts = renderer.parts(
            digest_id=digest.pk, message_id=digest.message_id, learner=learner, content=content
        )
        raw = wire.message_bytes(parts) if wire is not None else None
        # Opened by the chunk's first send (so a refused connection counts against that digest)
        # and kept: send_messages closes only a connection it opened itself.
        backend.open()
        if wire is not None and raw is not None:
            wire.send(parts.to, raw)
        else:
            backend.send_messages([digest_email(parts)])
    except Exception as exc:
        failure = send_failure(exc, data_sent=data_was_sent(backend))
        digest_failed(digest=digest, failure=failure, reason=failure_reason(exc), now=now)
        logger.warning("digest %s: %s (%s)", digest.pk, failure, failure_reason(exc))
        lost = failure != SendFailure.PERMANENT and closes_connection(exc)
        if lost:
            _close_quietly(backend)
        return digest.status, lost
    digest.due_count = content.due_count
    digest.first_item_id = first.item_id
    digest.sent_at = timezone.now()
    digest_finish(digest=digest, status=Status.SENT, now=now, note=f"{digest.due_count} due")
    return Status.SENT, False


def _close_quietly(backend: BaseEmailBackend) -> None:
    try:
        backend.close()
    except Exception:
        logger.warning("could not close the mail connection cleanly", exc_info=True)


def digest_send(*, digest_id: int, now: datetime) -> ReminderDigest | None:
    """Claim, render, send and mark one digest over a connection of its own."""
    result = digests_send(digest_ids=[digest_id], now=now)
    if result.statuses.get(digest_id) == "not claimed":
        return None
    return ReminderDigest.objects.filter(pk=digest_id).first()
