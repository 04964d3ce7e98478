"""Sending a chunk of digests over one SMTP connection, each still claimed, sent and marked on
its own row (the lock and the unique key give exactly one email per digest).

While the mail server takes one digest, the next one's claim (carrying the finish of the digest
sent before) is on its way to the database, so the two round trips overlap, and the next digest
is rendered while the server reads the message (the longest wait of the exchange). A digest is
handed to the mail server only once its own claim has come back; at most one more row is
`sending` unsent at any time, and a crash leaves it to the outbox's recovery, which sends it
once.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.core.mail import mailers
from django.db import DatabaseError
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from reminders.mailer import ChunkState, DigestMailer, PreparedDigest
from reminders.models import ReminderDigest
from reminders.outbox import (
    ClaimStarted,
    digest_claim,
    digest_claim_start,
    digest_finish,
    digest_mark_failed,
    digest_release,
    failure_reason,
)
from reminders.outbox_pg import CarriedFinish
from reminders.selectors import DigestContent, digests_content_for

logger = logging.getLogger(__name__)

Status = ReminderDigest.Status


@dataclass
class ChunkResult:
    statuses: dict[int, str] = field(default_factory=dict)
    # Digests not finished when a send failed: the task retries these.
    unfinished: list[int] = field(default_factory=list)


def digests_send(*, digest_ids: list[int], now: datetime) -> ChunkResult:
    """Send each digest of the chunk in order over one connection. A send error marks that
    digest failed and propagates with the rest unfinished (`SendInterrupted`), so the task can
    retry them together."""
    rows = list(
        User.objects.filter(reminder_digests__id__in=digest_ids).annotate(
            digest_id=F("reminder_digests__id"), message_id=F("reminder_digests__message_id")
        )
    )
    learners: dict[int, User] = {u.pk: u for u in rows}
    # One backend instance: opened by the first send (inside its digest's try, so a refused
    # connection counts against that digest), then every digest goes over the same session.
    connection = mailers.default
    chunk = ChunkState(
        learners=learners,
        learner_of={u.digest_id: u.pk for u in rows},
        message_ids={u.digest_id: u.message_id for u in rows},
        contents=digests_content_for(learner_ids=list(learners), now=now),
        mailer=DigestMailer(connection),
    )
    result = ChunkResult()
    try:
        ahead: ClaimStarted | None = None
        for position, digest_id in enumerate(digest_ids):
            following = digest_ids[position + 1] if position + 1 < len(digest_ids) else None
            try:
                claimed = ahead or _claim_start(digest_id=digest_id, now=now, chunk=chunk)
                ahead = None
                status, ahead = _digest_send(
                    claimed=claimed, following=following, now=now, chunk=chunk
                )
            except Exception as exc:
                result.unfinished = digest_ids[position:]
                _flush_after_failure(chunk.carried)
                raise SendInterrupted(result) from exc
            result.statuses[digest_id] = status
        # Each sent digest's finish went to the database with a later claim; the last alone.
        chunk.carried.flush()
    finally:
        connection.close()
    return result


def _claim_start(*, digest_id: int, now: datetime, chunk: ChunkState) -> ClaimStarted:
    return digest_claim_start(
        digest_id=digest_id,
        now=now,
        carried=chunk.carried,
        stored_message_id=chunk.message_ids.get(digest_id, ""),
    )


def _digest_send(
    *, claimed: ClaimStarted, following: int | None, now: datetime, chunk: ChunkState
) -> tuple[str, ClaimStarted | None]:
    """One digest of the chunk, its claim already on its way: render it meanwhile (unless that
    was done during the send before), then (once the claim is back) send the next claim and hand
    this digest to the mail server, rendering the next one while the server reads it. Its
    status, and the next digest's claim if one was sent."""
    early = chunk.render_early(digest_id=claimed.digest_id, message_id=claimed.message_id)
    digest = claimed.result()
    if digest is None:
        return "not claimed", None
    ready = digest_ready(digest=digest, now=now, chunk=chunk, early=early)
    if ready is None:
        return digest.status, None
    ahead = _claim_ahead(digest_id=following, now=now, chunk=chunk)
    render_next = None
    if ahead is not None:
        render_next = functools.partial(
            chunk.render_ahead, digest_id=ahead.digest_id, message_id=ahead.message_id
        )
    try:
        ready.mailer.deliver(ready.prepared, meanwhile=render_next)
    except BaseException as exc:
        if ahead is not None:
            _give_back(ahead)
        if isinstance(exc, Exception):
            digest_mark_failed(digest_id=digest.pk, reason=failure_reason(exc), now=now)
        raise
    return digest_sent(ready=ready, now=now, carried=chunk.carried).status, ahead


def _claim_ahead(*, digest_id: int | None, now: datetime, chunk: ChunkState) -> ClaimStarted | None:
    """The next digest's claim, sent before this digest goes to the mail server; None at the
    chunk's end, or if it could not be sent (it is tried again, and fails the chunk, in its
    turn; the finishes it would have carried stay held)."""
    if digest_id is None:
        return None
    try:
        return _claim_start(digest_id=digest_id, now=now, chunk=chunk)
    except DatabaseError:
        logger.warning("could not claim digest %s ahead; claiming it in its turn", digest_id)
        return None


def _give_back(ahead: ClaimStarted) -> None:
    """The send before a digest claimed ahead failed: read that claim's answer and undo it,
    so the task's retry can claim it. Should the database refuse, the row stays `sending`
    (never sent) and the outbox's recovery sends it later."""
    try:
        digest = ahead.result()
        if digest is not None:
            digest_release(digest_id=digest.pk)
    except DatabaseError:
        logger.exception("could not give back a digest claimed ahead of a failed send")


@dataclass(frozen=True)
class ReadyDigest:
    """A claimed digest rendered and ready for the mail server."""

    digest: ReminderDigest
    prepared: PreparedDigest
    content: DigestContent
    mailer: DigestMailer


def digest_ready(
    *,
    digest: ReminderDigest,
    now: datetime,
    chunk: ChunkState | None = None,
    early: list[PreparedDigest] | None = None,
) -> ReadyDigest | None:
    """Render a claimed digest (or take the render done while its claim was on its way); None
    when it is skipped instead (the learner switched reminders off, or nothing is due). A
    render error marks the row failed with the reason and propagates."""
    learner = (chunk.learners if chunk else {}).get(digest.learner_id) or User.objects.get(
        pk=digest.learner_id
    )
    try:
        content = (chunk.contents if chunk else {}).get(learner.pk) or digests_content_for(
            learner_ids=[learner.pk], now=now
        )[learner.pk]
        if not learner.reminders_enabled or content.first_schedule is None:
            reason = "reminders switched off" if not learner.reminders_enabled else "nothing due"
            carried = chunk.carried if chunk else None
            digest_finish(
                digest=digest, status=Status.SKIPPED, now=now, note=reason, carried=carried
            )
            return None
        mailer = chunk.mailer if chunk else DigestMailer(mailers.default)
        prepared = next(
            (p for p in early or [] if p.parts.headers["Message-ID"] == digest.message_id), None
        ) or mailer.prepare(
            digest_id=digest.pk, message_id=digest.message_id, learner=learner, content=content
        )
    except Exception as exc:
        digest_mark_failed(digest_id=digest.pk, reason=failure_reason(exc), now=now)
        raise
    return ReadyDigest(digest, prepared, content, mailer)


def digest_sent(
    *, ready: ReadyDigest, now: datetime, carried: CarriedFinish | None = None
) -> ReminderDigest:
    """Mark a digest the mail server accepted as sent (held in `carried` within a chunk)."""
    digest, content = ready.digest, ready.content
    assert content.first_schedule is not None
    digest.due_count = content.due_count
    digest.first_item_id = content.first_schedule.item_id
    digest.sent_at = timezone.now()
    return digest_finish(
        digest=digest, status=Status.SENT, now=now, note=f"{content.due_count} due", carried=carried
    )


def digest_send(*, digest_id: int, now: datetime) -> ReminderDigest | None:
    """Claim, render, send and mark sent, over a connection of its own. A send error marks the
    row failed with the reason and propagates (the task decides whether to retry)."""
    digest = digest_claim(digest_id=digest_id, now=now)
    if digest is None:
        return None
    ready = digest_ready(digest=digest, now=now)
    if ready is None:
        return digest
    try:
        ready.mailer.deliver(ready.prepared)
    except Exception as exc:
        digest_mark_failed(digest_id=digest.pk, reason=failure_reason(exc), now=now)
        raise
    finally:
        ready.mailer.connection.close()
    return digest_sent(ready=ready, now=now)


def _flush_after_failure(carried: CarriedFinish) -> None:
    """Write the finishes of the digests sent if the failed step did not (a failed claim that
    carried them); if the database refuses that too, the rows stay `sending` and the outbox's
    recovery resends them later, with their Message-IDs."""
    try:
        carried.flush()
    except DatabaseError:
        logger.exception("could not mark the chunk's last sent digests")


class SendInterrupted(Exception):
    """A send in the chunk failed; `result` says what went out and what is left."""

    def __init__(self, result: ChunkResult) -> None:
        super().__init__(f"{len(result.unfinished)} digest(s) left unsent")
        self.result = result
