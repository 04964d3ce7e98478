"""The outbox's claim and finish on PostgreSQL: each one autocommitted statement, and within a
chunk a sent digest's finish travels with a later digest's claim, in one statement (a
data-modifying WITH): one round trip and one commit per digest.

A claim can be sent now and its answer read later (`claim_start`, then `PendingClaim.result`):
a chunk claims its next digest while the mail server takes the current one, so the database's
round trip and the SMTP exchange overlap. Nothing else may use the connection in between.

Should that statement fail, the finishes it carried are kept for `flush` to write alone, so a
digest that went out is not left `sending` by its successor's claim.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import psycopg
from django.db import DatabaseError, connection
from django.utils import timezone

from reminders.models import ReminderDigest
from reminders.pg_statement import statement_answer, statement_send

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

# Undoes a claim whose digest was never handed to the mail server: the status before it (the
# history's entry before the claim's), one attempt fewer, the claim's history entry removed.
_RELEASE_SQL = f"""
    UPDATE {_TABLE}
    SET status = COALESCE(history -> -2 ->> 'status', %s), attempts = attempts - 1,
        history = history - (jsonb_array_length(history) - 1), updated_at = %s
    WHERE id = %s AND status = %s
"""  # noqa: S608 (a table name; every value is a parameter)


@functools.cache
def _carried_claim_sql(finishes: int) -> str:
    """The finishes first, then the claim, in one statement: they touch other rows (the claim's
    snapshot still sees a row finished in the same statement as `sending`, so never claims it)."""
    if not finishes:
        return _CLAIM_SQL
    ctes = ", ".join(f"finished{n} AS ({_FINISH_SQL.strip()})" for n in range(finishes))
    return f"WITH {ctes} {_CLAIM_SQL.strip()}"


def _finishes_sql(finishes: int) -> str:
    ctes = ", ".join(f"finished{n} AS ({_FINISH_SQL.strip()})" for n in range(finishes - 1))
    return f"WITH {ctes} {_FINISH_SQL.strip()}" if ctes else _FINISH_SQL


class CarriedFinish:
    """A chunk's finishes not yet sent to the database: the next claim carries them, or `flush`
    sends them alone (after the chunk's last digest). At most two are held: a sent digest's and
    a skipped one's after it."""

    def __init__(self) -> None:
        self.held: list[list[Any]] = []

    def take(self) -> list[list[Any]]:
        held, self.held = self.held, []
        return held

    def put_back(self, finishes: list[list[Any]]) -> None:
        self.held = [*finishes, *self.held]

    def flush(self) -> None:
        """Write the held finishes, in one statement."""
        held = self.take()
        if held:
            try:
                with connection.cursor() as cursor:
                    cursor.execute(_finishes_sql(len(held)), [p for f in held for p in f])
            except BaseException:
                self.put_back(held)
                raise


class PendingClaim:
    """A claim (with the finishes it carries) on its way to the database; `result` reads its
    answer, and must be called before the connection runs anything else."""

    def __init__(
        self, *, digest_id: int, message_id: str, sql: str, carried: CarriedFinish | None
    ) -> None:
        self.digest_id = digest_id
        self.message_id = message_id
        self.carried = carried
        self.finishes: list[list[Any]] = []
        self.sql = sql
        self.params: list[Any] = []
        self.started = time.perf_counter()
        self.done = False
        # Set when the claim ran at once, through a cursor (inside a transaction).
        self.answered: tuple[ReminderDigest | None] | None = None

    def result(self) -> ReminderDigest | None:
        """The claimed digest, or None when the row was not there to take. On an error the
        carried finishes go back to `carried`, for `flush`."""
        if self.done:
            raise RuntimeError("the claim's answer was read already")
        self.done = True
        if self.answered is not None:
            return self.answered[0]
        try:
            with connection.wrap_database_errors:
                row = statement_answer(connection.connection.pgconn)
        except BaseException as exc:
            if self.carried is not None:
                self.carried.put_back(self.finishes)
            if not isinstance(exc, DatabaseError):
                # Interrupted (a time limit) with the answer unread, which would block every
                # later query: close the connection; the statement still runs to its end.
                connection.close()
            raise
        finally:
            if connection.queries_logged and connection.connection is not None:
                duration = time.perf_counter() - self.started
                # As Django's cursor logs it: the statement with its values.
                sql = psycopg.ClientCursor(connection.connection).mogrify(self.sql, self.params)
                connection.queries_log.append({"sql": sql, "time": f"{duration:.3f}"})
        if row is None:
            return None
        learner_id, local_date, attempts, message_id, history = row
        return _claimed(
            self.digest_id,
            [int(learner_id), date.fromisoformat(local_date), int(attempts), message_id, history],
        )


def _claimed(digest_id: int, row: list[Any]) -> ReminderDigest:
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


def claim_start(
    *, digest_id: int, now: datetime, message_id: str, carried: CarriedFinish | None = None
) -> PendingClaim:
    """Send the claim as one autocommitted UPDATE (the lock, the skip and the write in one
    round trip), with the carried finishes, and return without waiting for its answer."""
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
    finishes = carried.take() if carried is not None else []
    template = _carried_claim_sql(len(finishes))
    all_params = [*(p for f in finishes for p in f), *params]
    try:
        if not connection.get_autocommit():
            # Inside a transaction: the cursor's usual path (psycopg opens the transaction).
            pending = PendingClaim(
                digest_id=digest_id, message_id=message_id, sql=template, carried=carried
            )
            with connection.cursor() as cursor:
                cursor.execute(template, all_params)
                row = cursor.fetchone()
            pending.answered = (None if row is None else _claimed(digest_id, list(row)),)
            return pending
        pending = PendingClaim(
            digest_id=digest_id, message_id=message_id, sql=template, carried=carried
        )
        pending.finishes, pending.params = finishes, all_params
        with connection.wrap_database_errors:
            statement_send(connection.connection.pgconn, template, all_params)
    except BaseException:
        if carried is not None:
            carried.put_back(finishes)
        raise
    return pending


def claim(
    *,
    digest_id: int,
    now: datetime,
    message_id: str,
    carried: CarriedFinish | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> ReminderDigest | None:
    """The claim, waited for; `meanwhile` (which must not raise, nor use the database) runs
    while the statement is on its way."""
    pending = claim_start(digest_id=digest_id, now=now, message_id=message_id, carried=carried)
    if meanwhile is not None:
        meanwhile()
    return pending.result()


def release(*, digest_id: int) -> bool:
    """Undo the claim of a digest that was not handed to the mail server (a chunk claimed it
    ahead, then its send before it failed); False if the row was no longer `sending`."""
    with connection.cursor() as cursor:
        cursor.execute(_RELEASE_SQL, [Status.PENDING, timezone.now(), digest_id, Status.SENDING])
        return bool(cursor.rowcount)


def finish(
    *, digest: ReminderDigest, note: str, now: datetime, carried: CarriedFinish | None = None
) -> None:
    """Write the digest's end state (its `status`, counts and `sent_at`) with a history entry;
    held in `carried` for a later claim when the chunk can carry it."""
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
        carried.held.append(params)
        return
    with connection.cursor() as cursor:
        cursor.execute(_FINISH_SQL, params)
