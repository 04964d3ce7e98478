"""Sending a chunk of digests over one SMTP connection, each still claimed, sent and marked on
its own row (the lock and the unique key give exactly one email per digest)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.core.mail import mailers
from django.db import DatabaseError
from django.db.models import F

from accounts.models import User
from reminders.mailer import ChunkState, DigestMailer
from reminders.outbox import digest_send
from reminders.outbox_pg import CarriedFinish
from reminders.selectors import digests_content_for

logger = logging.getLogger(__name__)


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
        for position, digest_id in enumerate(digest_ids):
            try:
                digest = digest_send(digest_id=digest_id, now=now, chunk=chunk)
            except Exception as exc:
                result.unfinished = digest_ids[position:]
                _flush_after_failure(chunk.carried)
                raise SendInterrupted(result) from exc
            result.statuses[digest_id] = digest.status if digest else "not claimed"
        # Each sent digest's finish went to the database with the next claim; the last alone.
        chunk.carried.flush()
    finally:
        connection.close()
    return result


def _flush_after_failure(carried: CarriedFinish) -> None:
    """Write the finish of the last digest sent if the failed step did not (a failed claim
    that carried it); if the database refuses that too, the row stays `sending` and the
    outbox's recovery resends it later, with its Message-ID."""
    try:
        carried.flush()
    except DatabaseError:
        logger.exception("could not mark the chunk's last sent digest")


class SendInterrupted(Exception):
    """A send in the chunk failed; `result` says what went out and what is left."""

    def __init__(self, result: ChunkResult) -> None:
        super().__init__(f"{len(result.unfinished)} digest(s) left unsent")
        self.result = result
