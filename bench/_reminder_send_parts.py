"""Parts of bench/reminder_send.py: the SMTP sink, the per-step timers, the references (raw
smtplib, one durable commit) and the distinct-items variant of the data."""

from __future__ import annotations

import asyncio
import smtplib
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sink(port: int, received: Any, ready: Any) -> None:
    """A local SMTP server that accepts and discards every message, counting them."""
    from aiosmtpd.controller import Controller

    class Discard:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            with received.get_lock():
                received.value += 1
            return "250 OK"

    controller = Controller(Discard(), hostname="127.0.0.1", port=port)
    controller.start()
    ready.set()
    try:
        asyncio.run(asyncio.Event().wait())
    finally:
        controller.stop()


@contextmanager
def phase_timers() -> Iterator[dict[str, float]]:
    """Seconds spent in each step of a chunk's send, by wrapping the functions it calls (a few
    microseconds each): claim the row (one autocommitted statement), render the digest, compose
    its MIME bytes, the SMTP exchange (smtplib's sendmail on Django's backend connection), mark
    it sent. "total" is the chunk's wall time."""
    from django.core.mail.backends.smtp import EmailBackend

    from reminders import emails, mailer, sending

    totals: dict[str, float] = {}
    targets: list[tuple[Any, str, str]] = [
        (sending, "digest_claim", "claim (one statement)"),
        (emails.DigestRenderer, "parts", "render (templates, signed links)"),
        (mailer.DigestWire, "message_bytes", "compose MIME bytes"),
        (mailer.DigestWire, "send", "SMTP exchange (sendmail)"),
        (EmailBackend, "send_messages", "Django email path (fallback only)"),
        (sending, "digest_finish", "mark sent (one UPDATE)"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]

    def wrap(fn: Any, label: str) -> Any:
        def timed_call(*a: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                totals[label] += time.perf_counter() - start

        return timed_call

    for (owner, name, label), (_, _, fn) in zip(targets, saved, strict=True):
        totals[label] = 0.0
        setattr(owner, name, wrap(fn, label))
    try:
        yield totals
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)


def smtplib_rate(
    *, port: int, sender: str, to: str, raw: bytes, count: int, commit: bool = False
) -> float:
    """Messages/s of raw smtplib: `count` copies of `raw` over one connection; with `commit`,
    each followed by one autocommitted UPDATE (the least a sender that records each send
    durably adds: a second secondary reference, not the goal's)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_commit (id int PRIMARY KEY, n int)")
        cursor.execute("INSERT INTO bench_commit VALUES (1, 0) ON CONFLICT DO NOTHING")
        start = time.perf_counter()
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            for _ in range(count):
                smtp.sendmail(sender, [to], raw)
                if commit:
                    cursor.execute("UPDATE bench_commit SET n = n + 1 WHERE id = 1")
        return count / (time.perf_counter() - start)


def commit_ms(samples: int = 200) -> float:
    """Median ms of one autocommitted UPDATE's round trip (a synchronous commit: a WAL flush),
    the durable write each digest needs; it varies with the disk's load."""
    from django.db import connection

    times = []
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_commit (id int PRIMARY KEY, n int)")
        cursor.execute("INSERT INTO bench_commit VALUES (1, 0) ON CONFLICT DO NOTHING")
        for _ in range(samples):
            start = time.perf_counter()
            cursor.execute("UPDATE bench_commit SET n = n + 1 WHERE id = 1")
            times.append(time.perf_counter() - start)
    return sorted(times)[samples // 2] * 1000


def own_first_items() -> None:
    """Give every learner's earliest-due schedule an item of its own."""
    from django.db import connection
    from django.utils import timezone

    from quizzes.models import QuizItem, RecallSchedule

    firsts = list(
        RecallSchedule.objects.filter(due__lte=timezone.now())
        .order_by("learner_id", "due", "id")
        .distinct("learner_id")
        .values_list("id", "item__lesson_id")
    )
    items = QuizItem.objects.bulk_create(
        QuizItem(
            lesson_id=lesson_id,
            key=f"own-{schedule_id}",
            kind=QuizItem.Kind.FREE_RECALL,
            position=1000 + n,
            prompt=f"What does the item only schedule {schedule_id} asks about say?",
            model_answer="a",
        )
        for n, (schedule_id, lesson_id) in enumerate(firsts)
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE quizzes_recallschedule SET item_id = %s WHERE id = %s",
            [(item.pk, schedule_id) for item, (schedule_id, _) in zip(items, firsts, strict=True)],
        )


def shapes_of(ids: list[int]) -> set[tuple[int | None, int]]:
    from reminders.models import ReminderDigest

    return set(ReminderDigest.objects.filter(pk__in=ids).values_list("first_item_id", "due_count"))


def mime_costs(parts: list[Any], repeats: int = 3) -> tuple[float, float]:
    """Milliseconds per message to write the same digests' MIME bytes with Django's email
    (`message(policy=SMTP).as_bytes()`, what its SMTP backend sends) and with reminders.mailer's
    composer, interleaved, the best of `repeats` runs each (CPU work: the best run is the one
    the machine's other load disturbed least)."""
    import email.policy

    from django.core.mail import mailers

    from reminders.emails import digest_email
    from reminders.mailer import DigestWire

    wire = DigestWire.for_connection(mailers.default)
    assert wire is not None
    django_best = composer_best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for p in parts:
            digest_email(p).message(policy=email.policy.SMTP).as_bytes()
        django_best = min(django_best, time.perf_counter() - start)
        start = time.perf_counter()
        for p in parts:
            wire.message_bytes(p)
        composer_best = min(composer_best, time.perf_counter() - start)
    return django_best * 1000 / len(parts), composer_best * 1000 / len(parts)
