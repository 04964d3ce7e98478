"""A chunk's sends over one SMTP connection to a real server in the test: each digest claimed,
sent and marked on its own row; a refusal of one message marks that digest (retried later if
temporary, failed for good if permanent) and the chunk goes on; a lost connection stops the
chunk, the rest retried; a learner deleted before their turn gets nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from reminders.models import ReminderDigest
from reminders.sending import digests_send
from tests.reminders.factories import learner_due
from tests.reminders.worker import SMTPRecorder, SMTPServer, free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

Status = ReminderDigest.Status


def pending_digests(n: int) -> list[int]:
    day = timezone.now().date()
    return [
        ReminderDigest.objects.create(
            learner=learner_due(due=timezone.now() - timedelta(hours=1)), local_date=day
        ).pk
        for _ in range(n)
    ]


def _mail_through(settings, port: int, timeout: int = 30) -> None:  # type: ignore[no-untyped-def]
    """Send over the site's SMTP backend to the test's server on `port`."""
    settings.MAILERS = {
        "default": {
            "BACKEND": "config.mail.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": timeout},
        }
    }


def test_a_chunk_sends_each_digest_once(settings) -> None:  # type: ignore[no-untyped-def]
    ids = pending_digests(5)
    with SMTPServer(SMTPRecorder()) as server:
        _mail_through(settings, server.port)
        result = digests_send(digest_ids=ids, now=timezone.now())
    assert result.statuses == {pk: Status.SENT for pk in ids}
    assert result.retry == {} and result.unfinished == []
    assert len(server.recorder.received) == 5
    for digest in ReminderDigest.objects.filter(pk__in=ids).select_related("learner"):
        assert digest.status == Status.SENT
        assert digest.sent_at is not None
        assert digest.due_count == 1
        assert [(h["status"], h["attempt"]) for h in digest.history] == [
            ("sending", 1),
            ("sent", 1),
        ]
        assert digest.history[-1]["note"] == "1 due"
        (received,) = [r for r in server.recorder.received if r.to == [digest.learner.email]]
        assert received.message_id == digest.message_id


def test_a_temporary_refusal_of_one_digest_is_retried_and_the_chunk_goes_on(settings) -> None:  # type: ignore[no-untyped-def]
    """The server answers the second of three digests 451: the first and third are sent, the
    second is failed for now with the server's reply and a retry time; its retry sends it once,
    with the Message-ID of its first try."""
    first, second, third = pending_digests(3)
    recorder = SMTPRecorder(refuse=["250 2.0.0 OK", "451 4.3.0 Try again later", "250 2.0.0 OK"])
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port)
        now = timezone.now()
        result = digests_send(digest_ids=[first, second, third], now=now)
        assert result.statuses == {first: Status.SENT, second: Status.FAILED, third: Status.SENT}
        assert list(result.retry) == [second]
        row = ReminderDigest.objects.get(pk=second)
        assert row.status == Status.FAILED
        assert "451" in row.last_error
        assert now < row.next_attempt_at <= now + timedelta(seconds=20)
        message_id = row.message_id

        recorder.refuse = []
        result = digests_send(digest_ids=[second], now=timezone.now())
    assert result.statuses == {second: Status.SENT}
    row.refresh_from_db()
    assert (row.status, row.attempts, row.message_id) == (Status.SENT, 2, message_id)
    assert [r.message_id for r in recorder.received] == [message_id]


def test_a_permanent_refusal_fails_its_digest_for_good(settings) -> None:  # type: ignore[no-untyped-def]
    """A 550 for the first digest's recipient: that digest failed with the server's reply and no
    retry time; the second is sent in the same chunk; sending the first again does nothing."""
    first, second = pending_digests(2)
    recorder = SMTPRecorder(refuse_recipients=["550 5.1.1 No such mailbox"])
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port)
        result = digests_send(digest_ids=[first, second], now=timezone.now())
        assert result.statuses == {first: Status.FAILED, second: Status.SENT}
        assert result.retry == {}
        row = ReminderDigest.objects.get(pk=first)
        assert (row.status, row.next_attempt_at) == (Status.FAILED, None)
        assert "550" in row.last_error
        assert digests_send(digest_ids=[first], now=timezone.now()).statuses == {
            first: "not claimed"
        }
    assert [r.to for r in recorder.received] == [
        [ReminderDigest.objects.get(pk=second).learner.email]
    ]


def test_a_refused_connection_leaves_the_chunk_for_a_retry(settings) -> None:  # type: ignore[no-untyped-def]
    """Nothing listens on the mail port: the first digest is failed for now, the rest of the
    chunk is left pending with the same retry time, and nothing is lost."""
    ids = pending_digests(3)
    _mail_through(settings, free_port())
    result = digests_send(digest_ids=ids, now=timezone.now())
    assert result.statuses == {ids[0]: Status.FAILED}
    assert result.unfinished == ids[1:]
    assert set(result.retry) == set(ids)
    rows = ReminderDigest.objects.in_bulk(ids)
    assert rows[ids[0]].status == Status.FAILED
    assert "ConnectionRefusedError" in rows[ids[0]].last_error
    for pk in ids[1:]:
        assert (rows[pk].status, rows[pk].attempts) == (Status.PENDING, 0)
        assert rows[pk].next_attempt_at is not None


def test_a_stalled_answer_after_the_data_is_possibly_delivered_and_never_resent(settings) -> None:  # type: ignore[no-untyped-def]
    """The server takes the message and answers only after the client's timeout: the digest is
    possibly delivered (not failed), not claimable again, and the server holds one copy."""
    (digest_id,) = pending_digests(1)
    recorder = SMTPRecorder(stall=1, stall_seconds=3)
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port, timeout=1)
        result = digests_send(digest_ids=[digest_id], now=timezone.now())
        assert result.statuses == {digest_id: Status.AMBIGUOUS}
        assert digests_send(digest_ids=[digest_id], now=timezone.now()).statuses == {
            digest_id: "not claimed"
        }
    row = ReminderDigest.objects.get(pk=digest_id)
    assert (row.status, row.next_attempt_at, row.attempts) == (Status.AMBIGUOUS, None, 1)
    assert len(recorder.received) == 1


def test_a_learner_deleted_before_their_turn_gets_nothing(settings) -> None:  # type: ignore[no-untyped-def]
    """A learner deletes their account while the chunk is under way (after it read its
    learners): their digest is not sent."""
    first, second = pending_digests(2)
    gone = ReminderDigest.objects.get(pk=second).learner_id
    recorder = SMTPRecorder()
    original = recorder.handle_DATA

    async def delete_then_accept(server, session, envelope):  # type: ignore[no-untyped-def]
        # While the first digest is with the server, the second's learner is deleted.
        from asgiref.sync import sync_to_async
        from django.db import connection

        def delete() -> None:
            User.objects.filter(pk=gone).delete()
            connection.close()

        await sync_to_async(delete, thread_sensitive=False)()
        return await original(server, session, envelope)

    recorder.handle_DATA = delete_then_accept  # type: ignore[method-assign]
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port)
        result = digests_send(digest_ids=[first, second], now=timezone.now())
    assert result.statuses == {first: Status.SENT, second: "not claimed"}
    assert len(recorder.received) == 1
    assert not ReminderDigest.objects.filter(pk=second).exists()


def test_a_chunk_past_its_time_budget_leaves_the_rest_for_its_retry(settings) -> None:  # type: ignore[no-untyped-def]
    """A chunk stops taking digests once its own time budget is spent (it ends inside the task's
    limit even when Celery cannot enforce it): nothing is claimed, each row waits for a retry."""
    ids = pending_digests(2)
    with SMTPServer(SMTPRecorder()) as server:
        _mail_through(settings, server.port)
        result = digests_send(digest_ids=ids, now=timezone.now(), budget=-1)
    assert result.statuses == {}
    assert result.unfinished == ids
    assert server.recorder.received == []
    for row in ReminderDigest.objects.filter(pk__in=ids):
        assert (row.status, row.attempts) == (Status.PENDING, 0)
        assert row.next_attempt_at is not None
