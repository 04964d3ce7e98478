"""The reminder scan, set-based: one INSERT … SELECT … ON CONFLICT DO NOTHING per range of
learners writes the day's digests, and one task per chunk of digests is enqueued on commit.

Which local date a learner is owed a digest for comes from `digest_local_date` (Python's zoneinfo,
so daylight-saving changes are right), computed once per (time zone, day start, reminder hour)
slot; the database then groups the range's due recall schedules by learner and joins each
learner to their slot. The outbox's unique (learner, local date) key makes a second scan, a second
beat or a retried range a no-op.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from kombu import Producer
from kombu.exceptions import BatchPublishError  # type: ignore[attr-defined]  # kombu 5.7

from accounts.models import User
from quizzes.models import RecallSchedule
from reminders.models import ReminderDigest
from reminders.outbox import (
    RequeueResult,
    ScanResult,
    Status,
    digests_enqueue_failed,
    digests_requeue,
)
from reminders.selectors import DigestSlot, digest_slots

logger = logging.getLogger(__name__)

# Learners per INSERT: each range commits (and starts its sends) on its own, so a scan of a
# million learners is a series of short transactions, and one cut off by its time limit leaves
# whole ranges behind for the next scan to finish.
SCAN_RANGE = 100_000
# The scan starts no new range after this long, inside the task's soft time limit (240 s), so it
# ends on its own even where Celery cannot enforce the limit (a broker that does not answer).
SCAN_BUDGET_SECONDS = 180.0
# Slots per statement, well under SQLite's 32,766 parameters (seven each).
SLOTS_PER_STATEMENT = 1_000
# Send tasks per Redis pipeline: 100 chunks of 500 ids are about half a megabyte.
PUBLISH_BATCH = 100


def _insert_statement(
    *, slots: list[DigestSlot], at: Any, learners: tuple[int, int], history: str, written: Any
) -> tuple[str, list[Any]]:
    """The INSERT … SELECT for one batch of slots and one range of learners, and its parameters
    (`at` is the scan's moment, `written` the wall clock for created_at and updated_at)."""
    digest = ReminderDigest._meta.db_table
    user = User._meta.db_table
    schedule = RecallSchedule._meta.db_table
    postgres = connection.vendor == "postgresql"
    jsonb = "CAST(%s AS jsonb)" if postgres else "%s"
    # PostgreSQL's planning fence (below); SQLite before 3.35 would not parse it.
    materialized = "MATERIALIZED" if postgres else ""
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(slots))
    # A suspended leech, or an item undone back to new (no reps), is owed no recall.
    recall = "s.due <= %s AND NOT s.suspended AND s.reps > 0"
    # Driven by what is due: an index on due finds the range's due schedules (a few per due
    # learner) rather than one probe of (learner, due) for every learner in the range.
    # MATERIALIZED keeps that order: the planner, misled by the slot join's estimate, would
    # otherwise probe once per learner. Grouping per learner gives the count, and the window's
    # first place the earliest-due item (one sort, not one per learner as an ordered aggregate).
    # A digest is for what is due from the learner's morning on: an item in an intraday
    # learning step (due since the day began) does not trigger one, nor does an item reviewed
    # after today's reminder moment (a learner's first digest waits for their next morning).
    # Only table names, constants and placeholders are interpolated; every value is a parameter.
    sql = f"""
        WITH slot(time_zone, day_start_hour, reminder_hour, local_date, day_start, moment,
                  weekday)
            AS (VALUES {values}),
        due AS {materialized} (
            SELECT s.learner_id, s.item_id, s.due, s.state, s.last_review,
                   ROW_NUMBER() OVER (PARTITION BY s.learner_id ORDER BY s.due, s.id) AS place
            FROM {schedule} s
            WHERE {recall} AND s.learner_id >= %s AND s.learner_id < %s
        )
        INSERT INTO {digest} (learner_id, local_date, status, due_count, first_item_id,
                              attempts, message_id, last_error, history, created_at, updated_at)
        SELECT u.id, slot.local_date, %s,
               COUNT(*), MAX(CASE WHEN d.place = 1 THEN d.item_id END),
               0, '', '', {jsonb}, %s, %s
        FROM due d
        JOIN {user} u ON u.id = d.learner_id
        JOIN slot ON u.time_zone = slot.time_zone
             AND u.day_start_hour = slot.day_start_hour
             AND u.reminder_hour = slot.reminder_hour
        WHERE u.id >= %s AND u.id < %s AND u.reminders_enabled AND u.is_active
          AND (u.reminders_paused_until IS NULL OR u.reminders_paused_until < slot.local_date)
          AND (u.break_from IS NULL OR u.break_to IS NULL
               OR slot.local_date < u.break_from OR slot.local_date > u.break_to)
          AND SUBSTR(u.easy_days, slot.weekday, 1) <> 'm'
        GROUP BY u.id, slot.local_date
        HAVING MAX(CASE WHEN (d.state = {RecallSchedule.State.REVIEW} OR d.due < slot.day_start)
                             AND (d.last_review IS NULL OR d.last_review < slot.moment)
                        THEN 1 ELSE 0 END) = 1
        ON CONFLICT (learner_id, local_date) DO NOTHING
        RETURNING id
    """  # noqa: S608
    params = [
        *_slot_params(slots),
        at,
        *learners,
        Status.PENDING,
        history,
        written,
        written,
        *learners,
    ]
    return sql, params


def _slot_params(slots: list[DigestSlot]) -> list[Any]:
    ops = connection.ops
    params: list[Any] = []
    for slot in slots:
        params += [
            slot.time_zone,
            slot.day_start_hour,
            slot.reminder_hour,
            ops.adapt_datefield_value(slot.local_date),
            ops.adapt_datetimefield_value(slot.day_start),
            ops.adapt_datetimefield_value(slot.moment),
            # No digest on the learner's minimum easy day (their `easy_days`, Monday first).
            slot.local_date.isoweekday(),
        ]
    return params


def _learner_ranges() -> Iterator[tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(id), MAX(id) FROM {User._meta.db_table}")  # noqa: S608
        low, high = cursor.fetchone()
    if low is None:
        return
    for start in range(low, high + 1, SCAN_RANGE):
        yield start, start + SCAN_RANGE


def _digests_insert(
    *, now: datetime, slots: list[DigestSlot], learners: tuple[int, int]
) -> list[int]:
    ops = connection.ops
    at = ops.adapt_datetimefield_value(now)
    # created_at and updated_at are wall-clock times, as auto_now writes them.
    written = ops.adapt_datetimefield_value(timezone.now())
    history = json.dumps(
        [{"at": now.isoformat(), "status": Status.PENDING, "attempt": 0, "note": "scan"}]
    )
    created: list[int] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # For this transaction only: the statement's estimated cost crosses jit_above_cost
            # on large tables, and compiling it took longer than it saved (~20-50 ms of ~400).
            cursor.execute("SELECT set_config('jit', 'off', true)")
        for i in range(0, len(slots), SLOTS_PER_STATEMENT):
            sql, params = _insert_statement(
                slots=slots[i : i + SLOTS_PER_STATEMENT],
                at=at,
                learners=learners,
                history=history,
                written=written,
            )
            cursor.execute(sql, params)
            created += [row[0] for row in cursor.fetchall()]
    return created


def digests_scan(*, now: datetime) -> ScanResult:
    """Insert one pending digest per learner owed one at `now`, range by range, each range's
    sends enqueued once it commits; then re-enqueue lost or failed sends worth another try."""
    slots = digest_slots(now=now)
    created: list[int] = []
    refused: list[int] = []
    deadline = time.monotonic() + SCAN_BUDGET_SECONDS
    if slots:
        for learners in _learner_ranges():
            if time.monotonic() > deadline:
                logger.warning("scan stopped at learner %s: the next scan goes on", learners[0])
                break
            with transaction.atomic():
                ids = _digests_insert(now=now, slots=slots, learners=learners)
                if ids:
                    transaction.on_commit(partial(_enqueue, digest_ids=ids, refused=refused))
            created += ids
    requeue = digests_sweep(now=now, refused=refused)
    return ScanResult(
        created=len(created),
        requeued=requeue.total,
        enqueued_ids=sorted(set(created) | set(requeue.digest_ids)),
        not_enqueued_ids=refused,
    )


def _enqueue(*, digest_ids: list[int], refused: list[int]) -> None:
    """Enqueue the sends, noting in `refused` the ids the broker did not take."""
    if not digests_enqueue(digest_ids=digest_ids):
        refused += digest_ids


def digest_chunks(digest_ids: list[int]) -> Iterator[list[int]]:
    size = settings.REMINDER_DIGEST_CHUNK
    for i in range(0, len(digest_ids), size):
        yield digest_ids[i : i + size]


def digests_enqueue(*, digest_ids: list[int], eta: datetime | None = None) -> bool:
    """One send task per chunk of digests on the `reminders` queue (due at `eta`, if given),
    through one connection, pipelined where the broker allows it. Should the broker refuse, the
    rows are left for the sweep and False is returned: the caller's work stands."""
    # Imported here: tasks import this module (HackSoft's way out of the task <-> service circle).
    from reminders.tasks import send_digests

    chunks = list(digest_chunks(sorted(digest_ids)))
    try:
        with send_digests.app.producer_or_acquire() as producer:
            # Kombu 5.7's publish batch sends the LPUSHes in pipelines (one round trip per
            # PUBLISH_BATCH tasks, not one each); brokers without it publish one by one.
            try:
                with producer.batch(max_size=PUBLISH_BATCH):
                    _publish_sends(chunks, producer=producer, eta=eta)
            except BatchPublishError:
                # A pipeline failed part-way, so any chunk may or may not be queued: publish
                # them all again one by one. A send that finds its digests sent or claimed skips
                # them, so a chunk queued twice mails no one twice.
                _publish_sends(chunks, producer=producer, eta=eta)
    except Exception:
        logger.warning("could not enqueue %d digest(s); the sweep will", len(digest_ids))
        digests_enqueue_failed(digest_ids=digest_ids, now=timezone.now())
        return False
    return True


def _publish_sends(
    chunks: list[list[int]], *, producer: Producer, eta: datetime | None = None
) -> None:
    from reminders.tasks import send_digests  # here for the same reason as above

    for chunk in chunks:
        # A short argsrepr: Celery's repr of 500 ids was half of each publish's time.
        send_digests.apply_async(
            (chunk,),
            producer=producer,
            eta=eta,  # type: ignore[arg-type]  # None: now
            argsrepr=f"({len(chunk)} digest ids)",  # type: ignore[call-arg]  # not in the stubs
        )


def digests_sweep(*, now: datetime, refused: list[int] | None = None) -> RequeueResult:
    """Re-enqueue the digests whose retry is due and those whose send was lost (the ids the
    broker refuses are added to `refused`, if given)."""
    with transaction.atomic():
        result = digests_requeue(now=now)
        if result.digest_ids:
            noted = refused if refused is not None else []
            transaction.on_commit(partial(_enqueue, digest_ids=result.digest_ids, refused=noted))
    return result


def digests_retry(*, now: datetime) -> RequeueResult:
    """Re-enqueue every failed digest of the last day (whatever its age) and every lost send:
    the operator's `reminders retry` once the mail server is back."""
    with transaction.atomic():
        result = digests_requeue(now=now, reopen_failed=True)
        if result.digest_ids:
            transaction.on_commit(partial(digests_enqueue, digest_ids=result.digest_ids))
    return result
