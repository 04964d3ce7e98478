"""Benchmark: sending recall digests in one process (what one worker process does), beside raw
smtplib sending as many messages of the same size over one connection to the same local sink.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything \\
        .venv/bin/python bench/reminder_send.py [--learners N] [--items-per-learner K]
            [--distinct-items] [--profile]

Starts a local SMTP sink (aiosmtpd in a child process, so it does not share the sender's GIL;
it counts and discards messages), builds a throwaway database named per run
(`bench_reminder_send_<pid>_<time>`; BENCH_DB_PREFIX replaces `bench`; dropped afterwards unless
--keep) with N due learners, scans them (nothing is enqueued: the bench holds the ids), then times
`digests_send(digest_ids=chunk, now=...)` over every chunk of REMINDER_DIGEST_CHUNK ids with
EMAIL_URL pointed at the sink. The reference, in the same run, before and after: raw
`smtplib.SMTP.sendmail` of N copies of one already-built digest (the same bytes) over one
connection to the same sink. Beside it, the median round trip of one autocommitted UPDATE (the
durable write each digest needs on top of its mail), and the MIME bytes of 200 digests written by
Django's email and by reminders.mailer's composer. --distinct-items gives each learner a first
item of its own.

Prints digests/s against the goal (issue 31: ≥ 300 digests/s per worker process over one SMTP
connection per chunk), smtplib messages/s and their ratio, and the queries per digest
(CaptureQueriesContext over a sample re-sent after the timed run); --profile adds cProfile's top
functions for the send. The send: one claim statement, each digest rendered on its own, its
bytes from reminders.mailer sent with smtplib's sendmail over Django's backend connection, one
finish UPDATE; docs/benchmarks.md compares it with the hand-made pieces it replaced.
Exits 1 if a digest was not sent or the sink missed a message. Without PostgreSQL it prints
"skipped: …" and exits 0.
"""

from __future__ import annotations

import argparse
import cProfile
import email.policy
import io
import multiprocessing
import os
import pstats
import sys
import time
from collections import Counter

from _bench_db import drop_database, skip_unless_postgres, unique_database_name
from _bench_db import use_throwaway_database as use_database
from _reminder_send_parts import (
    commit_ms,
    free_port,
    mime_costs,
    own_first_items,
    phase_timers,
    shapes_of,
    sink,
    smtplib_rate,
)
from reminder_scan import build, timed

SAMPLE = 100  # digests re-sent under CaptureQueriesContext for the query count


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--learners", type=int, default=2_000, help="due learners (digests)")
    parser.add_argument("--items-per-learner", type=int, default=5)
    parser.add_argument("--due-items", type=int, default=3, help="items due per learner")
    parser.add_argument(
        "--distinct-items",
        action="store_true",
        help="every learner's first due item its own (no two digests share a rendered shape)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the digest send")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()
    skip_unless_postgres()

    # The sink first, forked before Django is set up; the mailer reads EMAIL_URL at setup.
    port = free_port()
    received = multiprocessing.Value("i", 0)
    ready = multiprocessing.Event()
    server = multiprocessing.get_context("fork").Process(
        target=sink, args=(port, received, ready), daemon=True
    )
    server.start()
    if not ready.wait(30):
        print("the SMTP sink did not start")
        return 1
    os.environ["EMAIL_URL"] = f"smtp://127.0.0.1:{port}"

    started = time.perf_counter()
    db_name = unique_database_name("reminder_send")
    print(f"Building {db_name}: {args.learners:,} due learners × {args.items_per_learner} items")
    timed("create database + migrate", lambda: use_database(db_name))
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from reminders import scan
    from reminders.emails import DigestRenderer, digest_message_build
    from reminders.models import ReminderDigest
    from reminders.selectors import digests_content_for
    from reminders.sending import digests_send

    try:
        build(
            learners=args.learners,
            items=args.items_per_learner,
            due_learners=args.learners,
            due_items=args.due_items,
        )
        if args.distinct_items:
            timed("a first due item per learner", own_first_items)
        now = timezone.now()
        scan.digests_enqueue = lambda *, digest_ids: None  # type: ignore[assignment]
        result, _ = timed("scan (nothing enqueued)", lambda: scan.digests_scan(now=now))
        ids = result.enqueued_ids
        chunks = list(scan.digest_chunks(ids))

        # The reference message: one digest rendered as the sender renders it, as bytes.
        digest = ReminderDigest.objects.select_related("learner").get(pk=ids[0])
        content = digests_content_for(learner_ids=[digest.learner_id], now=now)[digest.learner_id]
        digest.message_id = f"<reference{digest.pk}@localhost>"
        message = digest_message_build(
            digest=digest, learner=digest.learner, content=content, now=now
        )
        raw = message.message(policy=email.policy.SMTP).as_bytes()  # as the backend sends it
        reference = {"port": port, "sender": message.from_email, "to": digest.learner.email}

        print(f"\nSink smtp://127.0.0.1:{port}; {len(ids):,} digests in {len(chunks)} chunk(s)")
        commit_before = commit_ms()
        before, _ = timed(
            f"raw smtplib, {len(ids):,} messages (before)",
            lambda: smtplib_rate(raw=raw, count=len(ids), **reference),
        )
        profiler = cProfile.Profile() if args.profile else None
        statuses: Counter[str] = Counter()

        def send_all() -> None:
            for chunk in chunks:
                statuses.update(digests_send(digest_ids=chunk, now=now).statuses.values())

        if profiler:
            profiler.enable()
        cpu_start = time.process_time()
        _, t_send = timed(f"digests_send, {len(ids):,} digests", send_all)
        cpu_send = time.process_time() - cpu_start
        if profiler:
            profiler.disable()
        after, _ = timed(
            f"raw smtplib, {len(ids):,} messages (after)",
            lambda: smtplib_rate(raw=raw, count=len(ids), **reference),
        )
        commit_after = commit_ms()
        # The MIME bytes of 200 digests, Django's composition against reminders.mailer's.
        renderer = DigestRenderer()
        sample_rows = ReminderDigest.objects.filter(pk__in=ids[:200]).select_related("learner")
        sample_contents = digests_content_for(
            learner_ids=[d.learner_id for d in sample_rows], now=now
        )
        sample_parts = [
            renderer.parts(
                digest_id=d.pk,
                message_id=f"<bench{d.pk}@localhost>",
                learner=d.learner,
                content=sample_contents[d.learner_id],
            )
            for d in sample_rows
        ]
        django_mime_ms, composer_mime_ms = mime_costs(sample_parts)
        with_commit, _ = timed(
            f"raw smtplib + an UPDATE each, {len(ids):,} messages",
            lambda: smtplib_rate(raw=raw, count=len(ids), commit=True, **reference),
        )

        # Where a digest's time goes: a sample put back to pending and sent again, timed by
        # step; then again with its queries captured.
        sample = ids[:SAMPLE]
        pending = ReminderDigest.Status.PENDING
        ReminderDigest.objects.filter(pk__in=sample).update(status=pending)
        with phase_timers() as steps:
            start = time.perf_counter()
            digests_send(digest_ids=sample, now=now)
            steps["total"] = time.perf_counter() - start
        ReminderDigest.objects.filter(pk__in=sample).update(status=pending)
        with CaptureQueriesContext(connection) as queries:
            digests_send(digest_ids=sample, now=now)
        shapes = Counter(q["sql"].split(None, 1)[0] for q in queries.captured_queries)
        db_seconds = sum(float(q["time"]) for q in queries.captured_queries)
        time.sleep(0.2)  # the sink's last acknowledgements

        rate = len(ids) / t_send
        raw_rate = (before + after) / 2
        print("\nFigures")
        print(f"  digests sent                       {statuses.get('sent', 0):>10,}")
        print(f"  sink received (all runs)           {received.value:>10,}")
        print(f"  message size                       {len(raw):>10,} bytes")
        print(f"  shapes (item, count) rendered      {len(shapes_of(ids)):>10,}")
        print(f"  digests/s (one process)            {rate:>10,.0f}")
        print(f"  raw smtplib messages/s before      {before:>10,.0f}")
        print(f"  raw smtplib messages/s after       {after:>10,.0f}")
        print(f"  digests/s ÷ smtplib (mean)         {rate / raw_rate:>10.1%}")
        print(f"  goal ≥ 300 digests/s per process   {'met' if rate >= 300 else 'MISSED':>10}")
        print(f"  ms per digest                      {1000 / rate:>10.2f}")
        print(
            f"  sender CPU ms per digest           {cpu_send * 1000 / len(ids):>10.2f}"
            "   (this process only; the load moves it little)"
        )
        print(f"  ms per smtplib message             {1000 / raw_rate:>10.2f}")
        print(
            f"  MIME bytes, ms per message         {composer_mime_ms:>10.3f} composer, "
            f"{django_mime_ms:.3f} Django's email ({django_mime_ms / composer_mime_ms:.0f}×)"
        )
        print(
            f"  ms per UPDATE + commit (median)    {commit_before:>10.2f} before, {commit_after:.2f} after"
        )
        print(
            f"  raw smtplib + one UPDATE each, /s  {with_commit:>10,.0f}"
            f"   (digests/s ÷ this: {rate / with_commit:.1%})"
        )
        print(
            "  (reference: raw smtplib.sendmail of one already-built digest's bytes, the same size,"
            "\n   over one connection to the same sink; the line above adds to each message the one"
            "\n   durable write an exactly-once sender needs, a ceiling for any such sender)"
        )
        per = len(queries.captured_queries) / len(sample)
        print(f"  queries per digest                 {per:>10.1f}   over {len(sample)} digests")
        # Every statement is waited for: the claim, then the finish after the SMTP exchange.
        print(f"  query time per digest (captured)   {db_seconds * 1000 / len(sample):>10.2f} ms")
        print("    by kind: " + ", ".join(f"{k} {v / len(sample):.1f}" for k, v in shapes.items()))
        print("  the chunk's first queries (the learners, then one digest's), ms:")
        for q in queries.captured_queries[:9]:
            print(f"    {float(q['time']) * 1000:6.2f}  {' '.join(q['sql'].split())[:100]}")
        print(f"  ms per digest by step, over {len(sample)} digests re-sent:")
        for label, seconds in steps.items():
            print(f"    {label:<36}{seconds * 1000 / len(sample):>6.2f}")
        if profiler:
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
            stats.print_stats(40)
            stats.sort_stats("tottime").print_stats(20)
            # Where the send itself waits: the SMTP client's calls, by cumulative time.
            stats.sort_stats("cumulative").print_stats(r"smtplib|socket", 12)
            print(f"\ncProfile of the timed send (cumulative, {len(ids):,} digests):")
            print(out.getvalue())
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"\nMachine: {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min)")
        print(f"\nTotal {time.perf_counter() - started:.0f} s")
        expected = 3 * len(ids) + len(ids) + 2 * len(sample)  # 3 smtplib runs, the send, samples
        ok = statuses.get("sent", 0) == len(ids) and received.value == expected
        if not ok:
            print(f"FAILED: statuses {dict(statuses)}, sink {received.value} of {expected}")
        print(f"settings: REMINDER_DIGEST_CHUNK={settings.REMINDER_DIGEST_CHUNK}")
        return 0 if ok else 1
    finally:
        server.terminate()
        server.join(10)
        if not args.keep:
            drop_database(db_name)


if __name__ == "__main__":
    sys.exit(main())
