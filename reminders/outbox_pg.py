"""The outbox's claim and finish on PostgreSQL: each one autocommitted statement, and within a
chunk a sent digest's finish travels with the next digest's claim, in one statement (a
data-modifying WITH): one round trip and one commit per digest.

Should that statement fail, the finish is kept for `flush` to write alone, so a digest that went
out is not left `sending` by its successor's claim.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection
from django.utils import timezone

from reminders.models import ReminderDigest

Status = ReminderDigest.Status
_TABLE = ReminderDigest._meta.db_table

_CLAIM_SQL = f"""
    UPDATE {_TABLE}
    SET status = %s, attempts = attempts + 1,
        message_id = CASE WHEN message_id = '' THEN %s ELSE message_id END,
        history = history || jsonb_build_array(jsonb_build_object(
            'at', %s::text, 'status', %s::text, 'attempt', attempts + 1, 'note', '')),
        updated_at = %s
    WHERE id = (SELECT id FROM {_TABLE}
                WHERE id = %s AND status IN (%s, %s) FOR UPDATE SKIP LOCKED)
    RETURNING learner_id, local_date, attempts, message_id, history
"""  # noqa: S608 (a table name; every value is a parameter)

# The history entry is appended in SQL, not the whole history written back.
_FINISH_SQL = f"""
    UPDATE {_TABLE}
    SET status = %s, due_count = %s, first_item_id = %s, sent_at = %s,
        last_error = CASE WHEN %s THEN '' ELSE last_error END,
        history = history || jsonb_build_array(jsonb_build_object(
            'at', %s::text, 'status', %s::text, 'attempt', %s::int, 'note', %s::text)),
        updated_at = %s
    WHERE id = %s
"""  # noqa: S608 (a table name; every value is a parameter)


# The finish first, then the claim, in one statement: they touch different rows (the claim's
# snapshot still sees a row finished in the same statement as `sending`, so never claims it).
_CARRIED_CLAIM_SQL = f"WITH finished AS ({_FINISH_SQL.strip()}) {_CLAIM_SQL.strip()}"


class CarriedFinish:
    """A chunk's finish not yet sent to the database: the next claim carries it, or `flush`
    sends it alone (after the chunk's last digest)."""

    def __init__(self) -> None:
        self.params: list[Any] | None = None

    def take(self) -> list[Any] | None:
        params, self.params = self.params, None
        return params

    def flush(self) -> None:
        params = self.take()
        if params is not None:
            with connection.cursor() as cursor:
                cursor.execute(_FINISH_SQL, params)


def claim(
    *,
    digest_id: int,
    now: datetime,
    message_id: str,
    carried: CarriedFinish | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> ReminderDigest | None:
    """The claim as one autocommitted UPDATE (the lock, the skip and the write in one round
    trip), with the carried finish if there is one. `meanwhile` (which must not raise) runs
    while the statement is on its way, in psycopg's pipeline mode: the digest is rendered while
    the database works, and nothing is sent before the claim has come back."""
    params: list[Any] = [
        Status.SENDING,
        message_id,
        now.isoformat(),
        Status.SENDING,
        timezone.now(),
        digest_id,
        Status.PENDING,
        Status.FAILED,
    ]
    finish = carried.take() if carried is not None else None
    sql, all_params = (
        (_CLAIM_SQL, params) if finish is None else (_CARRIED_CLAIM_SQL, [*finish, *params])
    )
    try:
        with connection.wrap_database_errors, connection.cursor() as cursor:
            if meanwhile is not None and psycopg.Pipeline.is_supported():
                # Leaving the block syncs and reads the result: one round trip.
                with connection.connection.pipeline():
                    cursor.execute(sql, all_params)
                    meanwhile()
                row = cursor.fetchone()
            else:
                cursor.execute(sql, all_params)
                row = cursor.fetchone()
    except Exception:
        if carried is not None:
            carried.params = finish  # for `flush` to try alone
        raise
    if row is None:
        return None
    learner_id, local_date, attempts, message_id, history = row
    return ReminderDigest(
        pk=digest_id,
        learner_id=learner_id,
        local_date=local_date,
        status=Status.SENDING,
        attempts=attempts,
        message_id=message_id,
        history=json.loads(history) if isinstance(history, str) else history,
    )


def finish(
    *, digest: ReminderDigest, note: str, now: datetime, carried: CarriedFinish | None = None
) -> None:
    """Write the digest's end state (its `status`, counts and `sent_at`) with a history entry;
    held in `carried` for the next claim when the chunk can carry it."""
    params: list[Any] = [
        digest.status,
        digest.due_count,
        digest.first_item_id,
        digest.sent_at,
        digest.status == Status.SENT,
        now.isoformat(),
        digest.status,
        digest.attempts,
        note,
        timezone.now(),
        digest.pk,
    ]
    if carried is not None:
        carried.flush()  # never more than one held
        carried.params = params
        return
    with connection.cursor() as cursor:
        cursor.execute(_FINISH_SQL, params)
