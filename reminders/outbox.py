"""The digest outbox's state machine: scan (insert pending rows), enqueue, claim, send, fail,
retry, requeue, and closing today's digest on unsubscribe.

Exactly one digest per learner per local date comes from the outbox's unique key and the row
lock, not from the broker delivering once: a second scan inserts nothing, and a second delivery
of a send finds the row already claimed or sent. A send whose answer was lost after its data
went out is `ambiguous` (possibly delivered) and never sent again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import make_msgid
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from config.mail import SendFailure, retry_at, retry_gives_up
from reminders.models import ReminderDigest
from reminders.selectors import digests_failed_due, digests_stale

Status = ReminderDigest.Status

# A queued send nobody took within this long was lost (a process died between commit and enqueue).
PENDING_STALE_AFTER = timedelta(minutes=10)
# Longer than the task's hard time limit (300 s): a row still `sending` after this was left by a
# worker that died mid-send.
SENDING_STALE_AFTER = timedelta(minutes=10)
# A retry the send task scheduled itself is left to it for this long before the sweep enqueues it.
RETRY_GRACE = timedelta(seconds=30)


@dataclass(frozen=True)
class ScanResult:
    created: int
    requeued: int
    enqueued_ids: list[int]  # the digests whose sends the scan asked for
    # Of those, the ones the broker refused (left to the sweep); filled as each range commits,
    # so complete when the scan ran outside a transaction (the command, the beat task).
    not_enqueued_ids: list[int] = field(default_factory=list)

    @property
    def enqueued(self) -> int:
        return len(set(self.enqueued_ids) - set(self.not_enqueued_ids))


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


def digests_requeue(*, now: datetime, reopen_failed: bool = False) -> RequeueResult:
    """Rows whose send was lost (pending and never taken, or left `sending` by a dead worker)
    and failed rows whose retry is due, each moved back to the queue; `reopen_failed` also
    reopens rows failed for good (the operator's retry once the mail server is back)."""
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
        digest.next_attempt_at = None
        digest.save(update_fields=["status", "history", "next_attempt_at", "updated_at"])
        ids.append(digest.pk)
    retryable = digests_failed_due(now=now, due_before=now - RETRY_GRACE, reopen=reopen_failed)
    for digest in retryable.select_for_update(skip_locked=True):
        _history(digest, status=Status.FAILED, now=now, note="re-enqueued after failure")
        if reopen_failed:
            digest.failing_since = None
        # Taken by the send it is enqueued for; if that is lost too, enqueued again then.
        digest.next_attempt_at = now + PENDING_STALE_AFTER
        digest.save(update_fields=["history", "next_attempt_at", "failing_since", "updated_at"])
        ids.append(digest.pk)
        failed += 1
    return RequeueResult(pending=pending, interrupted=interrupted, failed=failed, digest_ids=ids)


def digests_enqueue_failed(*, digest_ids: list[int], now: datetime) -> None:
    """The broker refused their sends: the sweep enqueues them on its next run."""
    ReminderDigest.objects.filter(pk__in=digest_ids, status=Status.PENDING).update(
        next_attempt_at=now
    )


def _message_domain() -> str:
    return urlsplit(settings.SITE_URL).hostname or "localhost"


_TABLE = ReminderDigest._meta.db_table
# One statement, autocommitted: the lock (skipping a row another worker holds), the check and
# the write in one round trip; the history entry appended in SQL. Only the table name is
# interpolated; every value is a parameter.
_CLAIM_SQL = {
    "postgresql": f"""
        UPDATE {_TABLE}
        SET status = %s, attempts = attempts + 1, next_attempt_at = NULL, updated_at = %s,
            message_id = CASE WHEN message_id = '' THEN %s ELSE message_id END,
            history = history || jsonb_build_array(jsonb_build_object(
                'at', %s::text, 'status', %s::text, 'attempt', attempts + 1, 'note', ''))
        WHERE id = (SELECT id FROM {_TABLE} WHERE id = %s
                    AND (status = %s OR (status = %s AND next_attempt_at IS NOT NULL))
                    FOR UPDATE SKIP LOCKED)
        RETURNING learner_id, local_date, attempts, message_id, history, failing_since
    """,  # noqa: S608
    # SQLite takes its write lock up front (IMMEDIATE transactions): no row is held by another.
    "sqlite": f"""
        UPDATE {_TABLE}
        SET status = %s, attempts = attempts + 1, next_attempt_at = NULL, updated_at = %s,
            message_id = CASE WHEN message_id = '' THEN %s ELSE message_id END,
            history = json_insert(history, '$[#]', json_object(
                'at', %s, 'status', %s, 'attempt', attempts + 1, 'note', ''))
        WHERE id = %s AND (status = %s OR (status = %s AND next_attempt_at IS NOT NULL))
        RETURNING learner_id, local_date, attempts, message_id, history, failing_since
    """,  # noqa: S608
}


def digest_claim(*, digest_id: int, now: datetime) -> ReminderDigest | None:
    """Move the row to `sending` in one statement; None when it is sent, skipped, possibly
    delivered, failed for good, gone with its learner, or locked by another worker right now
    (skip locked: the other worker owns it)."""
    # Generated once and kept: a resend carries the same Message-ID, so a mail client can fold
    # a duplicate.
    message_id = make_msgid(idstring=f"digest{digest_id}", domain=_message_domain())
    ops = connection.ops
    params = [
        Status.SENDING,
        ops.adapt_datetimefield_value(timezone.now()),
        message_id,
        now.isoformat(),
        Status.SENDING,
        digest_id,
        Status.PENDING,
        Status.FAILED,
    ]
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL[connection.vendor], params)
        row = cursor.fetchone()
    if row is None:
        return None
    learner_id, local_date, attempts, message_id, history, failing_since = row
    if isinstance(failing_since, str):  # SQLite: UTC, as text
        failing_since = datetime.fromisoformat(failing_since).replace(tzinfo=UTC)
    return ReminderDigest(
        pk=digest_id,
        learner_id=learner_id,
        local_date=date.fromisoformat(local_date) if isinstance(local_date, str) else local_date,
        status=Status.SENDING,
        attempts=attempts,
        message_id=message_id,
        history=json.loads(history) if isinstance(history, str) else history,
        failing_since=failing_since,
    )


_FINISH_APPEND = {
    "postgresql": "history || jsonb_build_array(jsonb_build_object("
    "'at', %s::text, 'status', %s::text, 'attempt', attempts, 'note', %s::text))",
    "sqlite": "json_insert(history, '$[#]', json_object("
    "'at', %s, 'status', %s, 'attempt', attempts, 'note', %s))",
}
# One statement; the history entry appended in SQL (not the whole history written back). Only
# the table name and the vendor's JSON expression are interpolated.
_FINISH_SQL = """
    UPDATE {table}
    SET status = %s, due_count = %s, first_item_id = %s, sent_at = %s, updated_at = %s,
        last_error = CASE WHEN %s THEN '' ELSE last_error END,
        failing_since = CASE WHEN %s THEN NULL ELSE failing_since END,
        history = {append}
    WHERE id = %s AND status = %s
"""


def digest_finish(*, digest: ReminderDigest, status: str, now: datetime, note: str) -> None:
    """One UPDATE: the row is ours (claimed), so no lock is taken again."""
    digest.status = status
    _history(digest, status=status, now=now, note=note)
    ops = connection.ops
    sent = status == Status.SENT
    sql = _FINISH_SQL.format(table=_TABLE, append=_FINISH_APPEND[connection.vendor])
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                status,
                digest.due_count,
                digest.first_item_id,
                ops.adapt_datetimefield_value(digest.sent_at),
                ops.adapt_datetimefield_value(timezone.now()),
                sent,
                sent,
                now.isoformat(),
                status,
                note,
                digest.pk,
                Status.SENDING,
            ],
        )


def digest_failed(
    *, digest: ReminderDigest, failure: SendFailure, reason: str, now: datetime
) -> ReminderDigest:
    """Record a failed send: a temporary one is retried with backoff (until the window from the
    first failure has passed), a permanent one is failed for good, an ambiguous one is possibly
    delivered and never sent again."""
    digest.last_error = reason
    if failure == SendFailure.AMBIGUOUS:
        digest.status = Status.AMBIGUOUS
        note = f"possibly delivered (the answer to its data was lost); not sent again: {reason}"
    elif failure == SendFailure.TEMPORARY and not retry_gives_up(
        failing_since=digest.failing_since, now=now
    ):
        digest.status = Status.FAILED
        digest.failing_since = digest.failing_since or now
        digest.next_attempt_at = retry_at(failures=digest.attempts, now=now)
        note = f"{reason}; retry at {digest.next_attempt_at:%H:%M:%S}"
    else:
        digest.status = Status.FAILED
        digest.next_attempt_at = None
        given_up = failure == SendFailure.TEMPORARY
        note = f"gave up after {digest.attempts} attempts: {reason}" if given_up else reason
    _history(digest, status=digest.status, now=now, note=note)
    ReminderDigest.objects.filter(pk=digest.pk).exclude(status=Status.SENT).update(
        status=digest.status,
        last_error=reason,
        failing_since=digest.failing_since,
        next_attempt_at=digest.next_attempt_at,
        history=digest.history,
        updated_at=timezone.now(),
    )
    return digest


def digest_mark_failed(*, digest_id: int, reason: str, now: datetime, final: bool = False) -> None:
    """Record a failed attempt with its reason: tried again later, or (`final`) failed for good."""
    with transaction.atomic():
        digest = ReminderDigest.objects.select_for_update().filter(pk=digest_id).first()
        if digest is None or digest.status in (Status.SENT, Status.AMBIGUOUS):
            return
        failure = SendFailure.PERMANENT if final else SendFailure.TEMPORARY
        digest_failed(digest=digest, failure=failure, reason=reason, now=now)


def digests_retry_later(*, digest_ids: list[int], at: datetime) -> None:
    """Digests of a chunk cut short, never claimed: the send task retries them at `at`, and the
    sweep enqueues them if that retry is lost."""
    ReminderDigest.objects.filter(pk__in=digest_ids, status=Status.PENDING).update(
        next_attempt_at=at
    )


def reminders_unsubscribe(*, learner: User, now: datetime) -> User:
    """Switch the learner's reminders off, and close today's digest if it has not gone yet."""
    with transaction.atomic():
        User.objects.filter(pk=learner.pk).update(reminders_enabled=False)
        learner.reminders_enabled = False
        for digest in ReminderDigest.objects.select_for_update(skip_locked=True).filter(
            Q(status=Status.PENDING) | Q(status=Status.FAILED), learner=learner
        ):
            digest.status = Status.SKIPPED
            digest.next_attempt_at = None
            _history(digest, status=Status.SKIPPED, now=now, note="unsubscribed")
            digest.save(update_fields=["status", "next_attempt_at", "history", "updated_at"])
    return learner
