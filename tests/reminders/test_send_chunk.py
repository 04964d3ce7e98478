"""A chunk's sends on PostgreSQL in autocommit (as a worker runs them): each digest's claim goes
to the database while the digest before it is with the mail server, carrying the finish of the
one sent before that: one statement per digest, and no finish lost when that statement fails."""

from __future__ import annotations

import os
import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reminders import outbox_pg
from reminders.mailer import DigestMailer
from reminders.models import ReminderDigest
from reminders.pg_statement import statement_answer, statement_send
from reminders.sending import SendInterrupted, digests_send
from tests.reminders.factories import learner_due
from tests.reminders.worker import SMTPRecorder, SMTPServer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

Status = ReminderDigest.Status
# The chunk's reads: its learners, their first due schedules (with the counts), the choices.
CHUNK_READS = 3


def pending_digests(n: int) -> list[int]:
    day = timezone.now().date()
    return [
        ReminderDigest.objects.create(
            learner=learner_due(due=timezone.now() - timedelta(hours=1)), local_date=day
        ).pk
        for _ in range(n)
    ]


def _mail_through(settings, port: int) -> None:  # type: ignore[no-untyped-def]
    """Send over Django's SMTP backend to the test's server on `port`."""
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 30},
        }
    }


def test_a_chunk_takes_one_statement_per_digest() -> None:
    """Five digests: the chunk's reads, five claims (the last three each with the finish of the
    digest two before, sent while the one between was with the mail server), and the last two
    finishes together."""
    ids = pending_digests(5)
    with CaptureQueriesContext(connection) as queries:
        result = digests_send(digest_ids=ids, now=timezone.now())
    assert result.statuses == {pk: Status.SENT for pk in ids}
    assert len(queries.captured_queries) == CHUNK_READS + len(ids) + 1
    statements = [q["sql"] for q in queries.captured_queries[CHUNK_READS:]]
    claims = [sql for sql in statements if "RETURNING" in sql]
    assert len(claims) == len(ids)
    assert [sql.count("finished0 AS") for sql in claims] == [0, 0, 1, 1, 1]
    for claim, finished in zip(claims[2:], ids, strict=False):
        assert f"WHERE id = {finished})" in claim  # the finish of the digest two before
    assert statements[-1].count("UPDATE") == 2  # the last two finishes, in one statement
    assert len(mail.outbox) == 5
    for digest in ReminderDigest.objects.filter(pk__in=ids):
        assert digest.status == Status.SENT
        assert digest.sent_at is not None
        assert digest.due_count == 1
        assert [(h["status"], h["attempt"]) for h in digest.history] == [
            ("sending", 1),
            ("sent", 1),
        ]
        assert digest.history[-1]["note"] == "1 due"


def test_a_failed_claim_keeps_the_finish_it_carried() -> None:
    """The claim failing (here a Message-ID too long for its column) takes the finish it carried
    down with its statement; the finish is kept, and `flush` writes it alone."""
    first, second = pending_digests(2)
    now = timezone.now()
    digest = outbox_pg.claim(digest_id=first, now=now, message_id="<a@example.com>")
    assert digest is not None
    digest.status = Status.SENT
    digest.sent_at = now
    carried = outbox_pg.CarriedFinish()
    outbox_pg.finish(digest=digest, note="sent", now=now, carried=carried)
    assert ReminderDigest.objects.get(pk=first).status == Status.SENDING  # held, not yet sent
    with pytest.raises(DataError):
        outbox_pg.claim(
            digest_id=second, now=now, message_id=f"<{'x' * 300}@example.com>", carried=carried
        )
    assert ReminderDigest.objects.get(pk=first).status == Status.SENDING
    assert ReminderDigest.objects.get(pk=second).status == Status.PENDING
    carried.flush()
    assert ReminderDigest.objects.get(pk=first).status == Status.SENT
    assert carried.held == []


def test_a_claim_that_takes_no_row_still_commits_the_finish_it_carried() -> None:
    """A redelivered digest already sent: the claim takes nothing, the carried finish is
    written all the same."""
    first, second = pending_digests(2)
    now = timezone.now()
    ReminderDigest.objects.filter(pk=second).update(status=Status.SENT)
    digest = outbox_pg.claim(digest_id=first, now=now, message_id="<a@example.com>")
    assert digest is not None
    digest.status = Status.SENT
    carried = outbox_pg.CarriedFinish()
    outbox_pg.finish(digest=digest, note="sent", now=now, carried=carried)
    assert outbox_pg.claim(digest_id=second, now=now, message_id="<b@x>", carried=carried) is None
    finished = ReminderDigest.objects.get(pk=first)
    assert finished.status == Status.SENT
    assert [h["status"] for h in finished.history] == ["sending", "sent"]


def test_each_digest_is_rendered_once_while_its_claim_is_on_its_way(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A chunk renders every digest once, during its claim; a retried digest is rendered with
    the Message-ID its first claim stored (the chunk reads it with the learners)."""
    first, retried, third = pending_digests(3)
    ReminderDigest.objects.filter(pk=retried).update(
        status=Status.FAILED, message_id="<kept@example.com>", attempts=1
    )
    rendered: list[tuple[int, str]] = []
    prepare = DigestMailer.prepare

    def counted(self, **kwargs):  # type: ignore[no-untyped-def]
        rendered.append((kwargs["digest_id"], kwargs["message_id"]))
        return prepare(self, **kwargs)

    monkeypatch.setattr(DigestMailer, "prepare", counted)
    digests_send(digest_ids=[first, retried, third], now=timezone.now())
    assert [pk for pk, _ in rendered] == [first, retried, third]
    assert rendered[1][1] == "<kept@example.com>"
    sent = {m.extra_headers["X-Recall-Digest"]: m.extra_headers["Message-ID"] for m in mail.outbox}
    assert sent[str(retried)] == "<kept@example.com>"
    assert sent[str(first)] == ReminderDigest.objects.get(pk=first).message_id


def test_a_refused_send_mid_chunk_gives_back_the_digest_claimed_ahead(settings) -> None:  # type: ignore[no-untyped-def]
    """The mail server refuses the second of three digests while the third's claim is on its
    way: the first is sent, the second failed with the server's reply, the third is as it was
    before its claim (pending, no attempt), and the task's retry of the two sends each once."""
    first, second, third = pending_digests(3)
    recorder = SMTPRecorder(refuse=["250 2.0.0 OK", "451 4.3.0 Try again later"])
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port)
        with pytest.raises(SendInterrupted) as interrupted:
            digests_send(digest_ids=[first, second, third], now=timezone.now())
        assert isinstance(interrupted.value.__cause__, smtplib.SMTPDataError)
        assert interrupted.value.result.statuses == {first: Status.SENT}
        assert interrupted.value.result.unfinished == [second, third]
        rows = ReminderDigest.objects.in_bulk([first, second, third])
        assert rows[first].status == Status.SENT
        assert rows[second].status == Status.FAILED
        assert "451" in rows[second].last_error
        assert (rows[third].status, rows[third].attempts, rows[third].history) == (
            Status.PENDING,
            0,
            [],
        )

        recorder.refuse = []
        result = digests_send(digest_ids=[second, third], now=timezone.now())
    assert result.statuses == {second: Status.SENT, third: Status.SENT}
    assert sorted(len(r.to) for r in recorder.received) == [1, 1]
    rows = ReminderDigest.objects.in_bulk([second, third])
    assert (rows[second].attempts, rows[third].attempts) == (2, 1)
    assert [h["status"] for h in rows[third].history] == ["sending", "sent"]


def test_a_refused_recipient_fails_its_digest_with_the_servers_reply(settings) -> None:  # type: ignore[no-untyped-def]
    """The mail server refuses the first digest's recipient: that digest failed with the server's
    reply, nothing was delivered, the second (claimed ahead) is as it was before its claim, and
    the task's retry sends both over the same server."""
    first, second = pending_digests(2)
    recorder = SMTPRecorder(refuse_recipients=["550 5.1.1 No such mailbox"])
    with SMTPServer(recorder) as server:
        _mail_through(settings, server.port)
        with pytest.raises(SendInterrupted) as interrupted:
            digests_send(digest_ids=[first, second], now=timezone.now())
        assert isinstance(interrupted.value.__cause__, smtplib.SMTPRecipientsRefused)
        assert interrupted.value.result.unfinished == [first, second]
        rows = ReminderDigest.objects.in_bulk([first, second])
        assert rows[first].status == Status.FAILED
        assert "550" in rows[first].last_error
        assert (rows[second].status, rows[second].attempts) == (Status.PENDING, 0)
        assert recorder.received == []

        result = digests_send(digest_ids=[first, second], now=timezone.now())
    assert result.statuses == {first: Status.SENT, second: Status.SENT}
    assert sorted(len(r.to) for r in recorder.received) == [1, 1]


def test_an_answer_is_waited_for_on_a_database_socket_numbered_past_1023() -> None:
    """A worker holding many files (sockets, logs) gets a database socket numbered past 1,023,
    where `select()` cannot wait: a claim still running when its answer is read is waited for
    all the same, and a chunk sends every digest."""
    ids = pending_digests(3)
    held: list[int] = []
    connection.close()  # the next connection takes the lowest free number: past the held ones
    try:
        while len(held) < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        connection.ensure_connection()
        assert connection.connection is not None
        pgconn = connection.connection.pgconn
        assert pgconn.socket > 1023
        statement_send(pgconn, "SELECT pg_sleep(%s), %s", [0.2, "slept"])
        assert statement_answer(pgconn) == ["", "slept"]
        result = digests_send(digest_ids=ids, now=timezone.now())
    finally:
        for fd in held:
            os.close(fd)
    assert result.statuses == {pk: Status.SENT for pk in ids}
    assert len(mail.outbox) == 3
