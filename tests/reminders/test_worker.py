"""The reminder flow across the queue: real Redis, a real Celery worker process (prefork), a real
SMTP server started by the test, and the PostgreSQL database the test commits to.

Every wait is bounded (90 s, for a loaded machine). A test starts the clock only once its worker
has said " ready." and answered a ping. Workers always stop in a `finally`.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from config.celery import app
from reminders.models import ReminderDigest
from reminders.outbox import SENDING_STALE_AFTER
from reminders.scan import digests_enqueue, digests_retry, digests_scan
from tests.reminders.factories import learner_due
from tests.reminders.worker import (
    CONCURRENCY,
    SMTPRecorder,
    SMTPServer,
    Worker,
    wait_for,
    worker_database_url,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

Status = ReminderDigest.Status


@pytest.fixture
def broker(settings):  # type: ignore[no-untyped-def]
    """This test's Redis database, emptied before and after; tasks really go through it.
    Chunks of five digests, so ten learners make two send tasks, one per pool process."""
    settings.REMINDER_DIGEST_CHUNK = 5
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    app.conf.task_always_eager = False
    yield client
    client.flushdb()


def worker_env(server: SMTPServer, *, email_timeout: int = 60) -> dict[str, str]:
    # A starved test process can be slow to answer SMTP; a client timeout after the server has
    # the message would make it "possibly delivered", so the timeout is far above any stall seen
    # under load. Retries of temporary failures start at half a second (production: 20 s).
    return {
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "EMAIL_URL": server.url,
        "EMAIL_TIMEOUT": str(email_timeout),
        "OUTBOX_RETRY_BASE_SECONDS": "0.5",
        "OUTBOX_RETRY_MAX_SECONDS": "4",
        "LOG_LEVEL": "INFO",
    }


def due_learners(n: int) -> list:  # type: ignore[type-arg]
    # UTC, day from midnight, reminder at 00:00: the reminder hour has always come.
    return [
        learner_due(
            due=timezone.now() - timedelta(hours=1),
            email=f"due{i}@example.com",
            reminder_hour=0,
            day_start_hour=0,
        )
        for i in range(n)
    ]


def statuses() -> dict[str, int]:
    return dict(
        (status, ReminderDigest.objects.filter(status=status).count()) for status in Status.values
    )


def all_sent(n: int) -> bool:
    return ReminderDigest.objects.filter(status=Status.SENT).count() == n


def test_worker_sends_exactly_one_email_per_learner(broker) -> None:  # type: ignore[no-untyped-def]
    """Several learners due: the scan's sends go through Redis to a prefork worker, which mails
    each learner once over SMTP. A second scan and a redelivery of every send change nothing."""
    learners = due_learners(5)
    with SMTPServer(SMTPRecorder()) as server:
        worker = Worker(worker_env(server))
        try:
            worker.wait_ready()
            result = digests_scan(now=timezone.now())
            assert result.created == 5
            wait_for(lambda: all_sent(5), what=f"5 digests sent, have {statuses()}")
            assert digests_scan(now=timezone.now()).enqueued_ids == []
            # As if the broker delivered every send a second time.
            digests_enqueue(digest_ids=list(ReminderDigest.objects.values_list("id", flat=True)))
            # One chunk task from the scan, one from the redelivery of all five.
            wait_for(lambda: worker.succeeded() >= 2, what="the redelivered sends to finish")
        finally:
            worker.stop()
        counts = server.recorder.per_recipient()
        assert counts == {learner.email: 1 for learner in learners}
        for digest in ReminderDigest.objects.all():
            assert digest.attempts == 1
            received = [r for r in server.recorder.received if r.to == [digest.learner.email]]
            assert received[0].message_id == digest.message_id
            # RFC 8058 over the wire: the one-click URL on one line, not an RFC 2047 encoded word.
            assert re.search(
                rb"^List-Unsubscribe: <http[^\s>]+/reminders/unsubscribe/[^\s>]+/>\r?$",
                received[0].raw,
                re.MULTILINE,
            )
            assert b"\nList-Unsubscribe-Post: List-Unsubscribe=One-Click" in received[0].raw


@pytest.mark.parametrize("server_side", ["after_accept", "before_accept"])
def test_sigkill_mid_batch_loses_nothing_and_duplicates_only_accepted_sends(  # type: ignore[no-untyped-def]
    broker, capsys, server_side
) -> None:
    """Kill the worker with SIGKILL while sends are in flight, start another, and let the outbox's
    recovery (`reminders retry`, as the scan does once a row is stale) re-enqueue what was lost:
    every learner gets their digest, and a second copy only where the server already had the
    message when the worker died (the resend carries the same Message-ID). After the first send,
    the server holds every send at a gate, either after it has the message (`after_accept`: the
    in-flight sends are duplicated) or before (`before_accept`: no duplicates at all); the kill
    comes once every pool process is waiting at that gate, so it lands at the same point however
    loaded the machine is."""
    n = 10
    learners = due_learners(n)
    recorder = SMTPRecorder(hold=server_side, pass_first=1)
    with SMTPServer(recorder) as server:
        # Sends wait at the gate until the kill: the client's socket timeout must outlast that.
        first = Worker(worker_env(server, email_timeout=120), name="first")
        second = None
        try:
            first.wait_ready()
            digests_scan(now=timezone.now())

            def mid_batch() -> bool:
                # One send done, and each pool process holds a claimed row at the server's gate.
                if recorder.held < CONCURRENCY:
                    return False
                sent = ReminderDigest.objects.filter(status=Status.SENT).count()
                sending = ReminderDigest.objects.filter(status=Status.SENDING).count()
                return sent == 1 and sending == recorder.held

            wait_for(mid_batch, what=f"one send done and the rest held, have {statuses()}")
            first.kill()
            killed_at = time.monotonic()
            recorder.release()  # the next worker's sends go straight through
            at_kill = {d.learner.email: d.status for d in ReminderDigest.objects.all()}
            server_had = {r.to[0] for r in recorder.received if r.received_at < killed_at}
            assert Status.SENT in at_kill.values() or Status.SENDING in at_kill.values()
            assert len(at_kill) == n
            assert not all(s == Status.SENT for s in at_kill.values()), "killed too late"

            # The dead worker's rows are stale once SENDING_STALE_AFTER has passed; rather than
            # wait, ask the recovery as of that moment (before the next worker starts, so none of
            # its live sends can look stale).
            recovered = digests_retry(
                now=timezone.now() + SENDING_STALE_AFTER + timedelta(minutes=1)
            )
            assert recovered.interrupted == len(
                [s for s in at_kill.values() if s == Status.SENDING]
            )
            second = Worker(worker_env(server), name="second")
            second.wait_ready()
            wait_for(lambda: all_sent(n), what=f"{n} digests sent, have {statuses()}")
        finally:
            first.stop()
            if second is not None:
                second.stop()

    counts = recorder.per_recipient()
    interrupted = {email for email, status in at_kill.items() if status == Status.SENDING}
    accepted_then_killed = interrupted & server_had
    duplicates = {email for email, c in counts.items() if c > 1}
    assert set(counts) == {learner.email for learner in learners}, "a learner got no digest"
    assert duplicates <= accepted_then_killed
    # The kill found every pool process mid-send.
    assert len(interrupted) == CONCURRENCY
    assert all(counts[email] == 2 for email in duplicates)
    for email in duplicates:
        assert len({r.message_id for r in recorder.received if r.to == [email]}) == 1
    # Held before the server had them: each sent exactly once.
    assert all(counts[email] == 1 for email in interrupted - server_had)
    assert interrupted, "the kill came between sends"
    if server_side == "before_accept":
        assert duplicates == set()
    else:
        assert duplicates == accepted_then_killed
        assert len(accepted_then_killed) == CONCURRENCY  # the held sends
    for digest in ReminderDigest.objects.filter(learner__email__in=interrupted):
        assert any("interrupted" in h["note"] for h in digest.history)
    with capsys.disabled():
        print(
            f"\n[fault test, kill {server_side.replace('_', ' ')}] {n} learners; at SIGKILL: "
            f"{sum(s == Status.SENT for s in at_kill.values())} sent, {len(interrupted)} mid-send "
            f"({len(accepted_then_killed)} already accepted by the server), "
            f"{sum(s == Status.PENDING for s in at_kill.values())} pending; recovery re-enqueued "
            f"{recovered.total} ({recovered.interrupted} interrupted, {recovered.pending} pending); "
            f"lost 0; duplicates {len(duplicates)}"
        )


def test_temporary_refusals_are_retried_and_a_permanent_one_fails_at_once(broker) -> None:  # type: ignore[no-untyped-def]
    """The server answers 421, 451, then 554: the two temporary refusals are tried again with
    backoff, the permanent one fails the digest for good with the server's reason (no further
    try). Once the server accepts again, the operator's `reminders retry` sends it."""
    (learner,) = due_learners(1)
    recorder = SMTPRecorder(
        refuse=[
            "421 4.3.2 Service not available",
            "451 4.3.0 Try again later",
            "554 5.3.0 Transaction failed",
        ]
    )
    with SMTPServer(recorder) as server:
        worker = Worker(worker_env(server))
        try:
            worker.wait_ready()
            digests_scan(now=timezone.now())

            def failed_for_good() -> ReminderDigest | None:
                d = ReminderDigest.objects.get(learner=learner)
                return d if d.status == Status.FAILED and d.next_attempt_at is None else None

            digest = wait_for(failed_for_good, what=f"the digest to fail, have {statuses()}")
            assert digest.attempts == 3
            assert len(recorder.refused) == 3
            assert "554" in digest.last_error
            assert sum(h["status"] == "sending" for h in digest.history) == 3
            assert recorder.received == []
            time.sleep(3)  # longer than any retry would wait: none comes
            assert len(recorder.refused) == 3

            recorder.refuse = []  # the server recovers
            assert digests_retry(now=timezone.now()).failed == 1
            wait_for(lambda: all_sent(1), what="the retried digest to be sent")
        finally:
            worker.stop()
    assert recorder.per_recipient() == {learner.email: 1}
    digest.refresh_from_db()
    assert digest.last_error == ""
    assert digest.attempts == 4


OUTAGE_SECONDS = 35  # longer than the retries the sends had before (5, at most 31 s in all)


def test_a_mail_outage_delays_every_email_but_loses_none(broker) -> None:  # type: ignore[no-untyped-def]
    """The server answers every message 451 for 35 s: ten digests (two chunks) and a grade email
    are retried with backoff until it accepts again, then each is delivered exactly once, soon
    after the outage ends (the backoff never waits more than the time already failing)."""
    from django.db import transaction

    from planner.capstone.grading import grade_release, submission_claim
    from tests.planner.factories import course_taught_by, submission_for

    n = 10
    learners = due_learners(n)
    course = course_taught_by()
    instructor = course.enrollments.get().user
    graded = submission_for(learners[0], course)
    recorder = SMTPRecorder(outage_until=time.monotonic() + 10_000)
    with SMTPServer(recorder) as server:
        worker = Worker(worker_env(server), queues="reminders,email,default")
        try:
            worker.wait_ready()
            recorder.outage_until = time.monotonic() + OUTAGE_SECONDS
            digests_scan(now=timezone.now())
            now = timezone.now()
            submission_claim(grader=instructor, submission_id=graded.pk, now=now)
            levels = _top_levels(course)
            with transaction.atomic():
                grade_release(
                    grader=instructor,
                    submission_id=graded.pk,
                    now=now,
                    scores=levels,
                    overall_feedback="Good.",
                )
            wait_for(
                lambda: len(recorder.refused) >= 3 * 2,
                what="the sends to be refused a few times",
            )
            wait_for(
                lambda: all_sent(n) and len(recorder.received) == n + 1,
                what=f"every email after the outage, have {statuses()}",
                timeout=OUTAGE_SECONDS + 60,
            )
            last = max(r.received_at for r in recorder.received)
            time.sleep(3)
        finally:
            worker.stop()
    counts = recorder.per_recipient()
    assert counts == {**{u.email: 1 for u in learners}, learners[0].email: 2}  # digest + grade
    assert sorted(
        r.subject.startswith("[Recall] Your capstone grade") for r in recorder.received
    ) == [False] * n + [True]
    # Within the outage plus the longest backoff step (4 s here) and a loaded machine's slack.
    assert last - (recorder.outage_until) < 20


def test_an_answer_lost_after_the_data_is_never_followed_by_a_second_copy(
    broker, client, admin_user
) -> None:  # type: ignore[no-untyped-def]
    """The server takes the first digest whole and then stalls past the client's timeout: that
    digest is recorded as possibly delivered and never sent again that day (not by the retry,
    the sweep, another scan or the operator's retry); the rest of the chunk goes out once, and
    the status page counts the one possibly delivered."""
    n = 3
    learners = due_learners(n)
    recorder = SMTPRecorder(stall=1, stall_seconds=4)
    with SMTPServer(recorder) as server:
        worker = Worker(worker_env(server, email_timeout=2))
        try:
            worker.wait_ready()
            scanned = timezone.now()
            digests_scan(now=scanned)

            def settled() -> bool:
                everyone = {r.to[0] for r in recorder.received} == {u.email for u in learners}
                busy = ReminderDigest.objects.filter(status__in=[Status.PENDING, Status.SENDING])
                return everyone and not busy.exists()

            wait_for(settled, what=f"every learner's digest, have {statuses()}")
            # Later the same day (the learners' day is the UTC date): an hour on, or halfway to
            # midnight when that is nearer; the next day's digest is rightly a new one.
            midnight = (scanned + timedelta(days=1)).replace(
                hour=0, minute=0, second=0, microsecond=0
            )
            later = scanned + min(timedelta(hours=1), (midnight - scanned) / 2)
            digests_scan(now=later)
            digests_retry(now=later)
            time.sleep(4)
        finally:
            worker.stop()
    assert recorder.per_recipient() == {u.email: 1 for u in learners}
    stalled = ReminderDigest.objects.get(learner__email=recorder.received[0].to[0])
    assert stalled.status == Status.AMBIGUOUS
    assert ReminderDigest.objects.filter(status=Status.SENT).count() == n - 1
    assert stalled.attempts == 1
    assert "possibly delivered" in stalled.history[-1]["note"]
    client.force_login(admin_user)
    page = client.get("/reminders/").content.decode()
    assert 'data-testid="count-possibly-delivered">1<' in page


def _top_levels(course):  # type: ignore[no-untyped-def]
    from planner.capstone.grading import ScoreInput
    from planner.models import Criterion

    return [
        ScoreInput(criterion_id=c.pk, level_id=c.levels.order_by("-points").first().pk)
        for c in Criterion.objects.filter(rubric__course=course)
    ]
