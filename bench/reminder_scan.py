"""Benchmark: the set-based reminder scan and its enqueue on PostgreSQL and Redis, 100,000 learners
with 5 million recall schedules of whom 20,000 have items due, beside redis-benchmark's LPUSH.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python bench/reminder_scan.py [--learners N] [--items-per-learner K]
            [--due-learners D] [--due-items I] [--keep]

Builds a throwaway database named per run (`bench_reminders_<pid>_<time>`; BENCH_DB_PREFIX
replaces `bench`; dropped afterwards unless --keep) with INSERT … SELECT generate_series, then
times `digests_scan(now=...)` end to end (slots query, one INSERT … SELECT per range of learners,
the enqueues on commit into REDIS_URL's Redis), separately its enqueue part, and the whole scan
once more with the caches warm (digests deleted first). The send tasks go to a queue named for
this run, which the bench counts with LLEN and deletes afterwards (with its binding key): no
FLUSHDB, nobody else's keys. In the same run, `redis-benchmark -t lpush`
against the same Redis database is the reference; the bench deletes its `mylist` key afterwards.

Prints learners/s, the scan's CPU seconds here and in its database backend (read from /proc when
PostgreSQL runs on this machine: a figure the load moves little), publishes/s and their ratio to
LPUSH/s, and the EXPLAIN (ANALYZE, BUFFERS) of one range's INSERT (in a transaction rolled
back); exits 1 if that plan reads the schedule table sequentially or the counts are wrong. The 1M case (issue 15: the scan finishes for a
million due learners inside the task's 240 s soft limit):

    ... bench/reminder_scan.py --learners 1000000 --due-learners 1000000 \\
            --items-per-learner 2 --due-items 1

Without PostgreSQL and Redis configured it prints "skipped: …" and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from _bench_db import drop_database, unique_database_name, use_throwaway_database

ZONES = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "Pacific/Auckland",
    "Asia/Kolkata",
    "America/Sao_Paulo",
]
SOFT_TIME_LIMIT = 240  # CELERY_TASK_SOFT_TIME_LIMIT, the scan task's budget
LPUSH_REQUESTS = 100_000


def timed(label: str, fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<44} {elapsed:8.2f} s", flush=True)
    return result, elapsed


def build(*, learners: int, items: int, due_learners: int, due_items: int) -> None:
    """Learners spread over eight zones, reminder hour 0 and day start 0 (so every due learner is
    owed a digest now); every learner has a REVIEW-state schedule (the scan ignores cards in
    intraday learning steps) for every item, last reviewed three days ago; the first `due_items`
    items of every (learners / due_learners)-th learner are due, every other schedule later."""
    from django.db import connection

    from courses.models import Course, Lesson, Module
    from quizzes.models import QuizItem, RecallSchedule

    course = Course.objects.create(slug="bench", title="Bench")
    module = Module.objects.create(course=course, slug="m", title="Module", position=0)
    lesson = Lesson.objects.create(
        module=module, slug="l", title="Lesson", position=0, objective="o", body_markdown="b"
    )
    QuizItem.objects.bulk_create(
        QuizItem(
            lesson=lesson,
            key=f"item-{i}",
            kind=QuizItem.Kind.FREE_RECALL,
            position=i,
            prompt=f"What does item {i} say?",
            model_answer="a",
        )
        for i in range(items)
    )
    stride = max(1, learners // due_learners)
    zones = "ARRAY[" + ",".join(f"'{z}'" for z in ZONES) + "]"
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")
        timed(
            f"insert {learners:,} learners",
            lambda: cursor.execute(
                f"""
                INSERT INTO accounts_user (password, last_login, is_superuser, is_staff, is_active,
                    date_joined, email, first_name, last_name, display_name, time_zone,
                    day_start_hour, reminders_enabled, reminder_hour, reminders_paused_until,
                    review_shortcuts_enabled)
                SELECT '!unusable', NULL, false, false, true, now(), 'bench' || g || '@example.com',
                    '', '', '', ({zones})[1 + g %% {len(ZONES)}], 0, true, 0, NULL, true
                FROM generate_series(1, %s) AS g
                """,
                [learners],
            ),
        )
        timed(
            f"insert {learners * items:,} recall schedules",
            lambda: cursor.execute(
                """
                INSERT INTO quizzes_recallschedule (learner_id, item_id, course_id, state, step,
                    stability, difficulty, due, last_review, reps, lapses, card_token, created_at,
                    updated_at)
                SELECT u.id, i.id, i.course_id, %s, NULL, 10.0, 5.0,
                    CASE WHEN u.rn %% %s = 0 AND i.rn <= %s
                         THEN now() - interval '1 hour' * i.rn
                         ELSE now() + interval '1 hour' * (1 + (u.rn * 7 + i.rn * 13) %% 720) END,
                    now() - interval '3 days', 3, 0, gen_random_uuid(), now(), now()
                FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM accounts_user) AS u
                CROSS JOIN (SELECT qi.id, m.course_id, row_number() OVER (ORDER BY qi.id) AS rn
                            FROM quizzes_quizitem qi
                            JOIN courses_lesson l ON l.id = qi.lesson_id
                            JOIN courses_module m ON m.id = l.module_id) AS i
                ORDER BY u.id, i.id
                """,
                [RecallSchedule.State.REVIEW, stride, due_items],
            ),
        )
        timed(
            "vacuum analyze",
            lambda: [
                cursor.execute(f"VACUUM ANALYZE {table}")
                for table in ("accounts_user", "quizzes_recallschedule", "quizzes_quizitem")
            ],
        )


def redis_benchmark_lpush(redis_url: str, *, clients: int, requests: int) -> float | None:
    """redis-benchmark's LPUSH requests/s against the database of `redis_url` (its key `mylist`
    is deleted afterwards), or None without the tool."""
    tool = shutil.which("redis-benchmark")
    if tool is None:
        return None
    parts = urlsplit(redis_url)
    db = (parts.path or "/0").lstrip("/") or "0"
    command = [tool, "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 6379)]
    if parts.password:
        command += ["-a", parts.password]
    command += ["--dbnum", db, "-n", str(requests), "-c", str(clients), "-q", "-t", "lpush"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True).stdout
    import redis

    redis.Redis.from_url(redis_url).delete("mylist")
    rates = re.findall(r"LPUSH[^:]*:\s*([\d.]+) requests per second", out)
    return float(rates[-1]) if rates else None


def backend_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of PostgreSQL backend `pid`, read from /proc when the server
    runs on this machine (None otherwise): unlike wall time, it hardly moves with the load."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def explain_insert(*, now: Any, learners: tuple[int, int]) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the scan's INSERT for one range of learners, as the scan
    runs it: that range's digests are deleted first and everything is rolled back after."""
    from django.db import connection, transaction

    from reminders import scan
    from reminders.models import ReminderDigest
    from reminders.selectors import digest_slots

    slots = digest_slots(now=now)
    lines: list[str] = []

    def explain(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        return execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params, many, context)

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    f"DELETE FROM {ReminderDigest._meta.db_table} "
                    "WHERE learner_id >= %s AND learner_id < %s",
                    list(learners),
                )
            with connection.execute_wrapper(explain):
                # The wrapped cursor's rows are the plan's lines, returned here as "ids".
                lines = [
                    str(line)
                    for line in scan._digests_insert(now=now, slots=slots, learners=learners)
                ]
            raise Rollback
    except Rollback:
        pass
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--items-per-learner", type=int, default=50)
    parser.add_argument("--due-learners", type=int, default=20_000)
    parser.add_argument("--due-items", type=int, default=3, help="items due per due learner")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()

    base = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if not base.startswith(("postgres://", "postgresql://")) or not redis_url:
        print(
            "skipped: needs PostgreSQL and Redis "
            "(set DATABASE_URL=postgres://... and REDIS_URL=redis://...)"
        )
        return 0

    started = time.perf_counter()
    db_name = unique_database_name("reminders")
    queue = f"bench.reminders.{os.getpid()}.{int(time.time())}"
    print(
        f"Building {db_name}: {args.learners:,} learners × {args.items_per_learner} items, "
        f"{args.due_learners:,} due",
        flush=True,
    )
    timed("create database + migrate", lambda: use_throwaway_database(db_name))
    import redis
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from reminders import scan
    from reminders.models import ReminderDigest
    from reminders.tasks import send_digests

    broker = redis.Redis.from_url(redis_url)
    try:
        build(
            learners=args.learners,
            items=args.items_per_learner,
            due_learners=args.due_learners,
            due_items=args.due_items,
        )
        now = timezone.now()

        # This run's own queue. The task names its queue (`reminders`) in its decorator, and an
        # explicit task queue outranks CELERY_TASK_ROUTES, so the task's own option is what moves.
        send_digests.queue = queue  # type: ignore[attr-defined]  # not in the stubs
        send_digests._exec_options = None  # type: ignore[attr-defined]  # Celery caches them

        enqueued = 0
        enqueue_seconds = 0.0
        insert_seconds = 0.0
        slots_seconds = 0.0
        real_enqueue, real_insert, real_slots = (
            scan.digests_enqueue,
            scan._digests_insert,
            scan.digest_slots,
        )

        def timed_enqueue(*, digest_ids: list[int]) -> None:
            nonlocal enqueued, enqueue_seconds
            start = time.perf_counter()
            real_enqueue(digest_ids=digest_ids)
            enqueued += len(digest_ids)
            enqueue_seconds += time.perf_counter() - start

        def timed_insert(**kwargs: Any) -> list[int]:
            nonlocal insert_seconds
            start = time.perf_counter()
            ids = real_insert(**kwargs)
            insert_seconds += time.perf_counter() - start
            return ids

        def timed_slots(**kwargs: Any) -> Any:
            nonlocal slots_seconds
            start = time.perf_counter()
            slots = real_slots(**kwargs)
            slots_seconds += time.perf_counter() - start
            return slots

        scan.digests_enqueue = timed_enqueue  # type: ignore[assignment]
        scan._digests_insert = timed_insert  # type: ignore[assignment]
        scan.digest_slots = timed_slots  # type: ignore[assignment]

        print(f"\nScan at {now:%Y-%m-%d %H:%M} UTC; enqueue into {redis_url} queue {queue}")
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        db_cpu_before, py_cpu_before = backend_cpu_seconds(backend), time.process_time()
        result, t_scan = timed("scan: slots, inserts, enqueue", lambda: scan.digests_scan(now=now))
        db_cpu_after, py_cpu = backend_cpu_seconds(backend), time.process_time() - py_cpu_before
        # The first scan's share only: the wrappers stay on for the no-op scan below.
        slots_seconds_first, insert_seconds_first = slots_seconds, insert_seconds
        publishes = int(broker.llen(queue))
        message_bytes = sum(len(m) for m in broker.lrange(queue, 0, -1)) / max(publishes, 1)
        scan.digests_enqueue = real_enqueue  # type: ignore[assignment]
        # The enqueue alone, its connection already open: the same ids published once more.
        _, t_warm = timed(
            "enqueue again (connection warm)",
            lambda: real_enqueue(digest_ids=result.enqueued_ids),
        )
        warm_publishes = int(broker.llen(queue)) - publishes
        again, t_again = timed("second scan (no-op)", lambda: scan.digests_scan(now=now))
        scan._digests_insert, scan.digest_slots = real_insert, real_slots  # type: ignore[assignment]
        digests = ReminderDigest.objects.count()
        # The same scan with the caches warm (the first ran straight after seeding): every
        # digest deleted, then scanned and enqueued again.
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {ReminderDigest._meta.db_table}")
        rescan, t_rescan = timed("scan again, caches warm", lambda: scan.digests_scan(now=now))

        print("\nReference: redis-benchmark LPUSH, same Redis database", flush=True)
        lpush, _ = timed(
            f"-t lpush -n {LPUSH_REQUESTS:,} -c 50",
            lambda: redis_benchmark_lpush(redis_url, clients=50, requests=LPUSH_REQUESTS),
        )
        lpush_one, _ = timed(
            f"-t lpush -n {LPUSH_REQUESTS // 5:,} -c 1 (one connection)",
            lambda: redis_benchmark_lpush(redis_url, clients=1, requests=LPUSH_REQUESTS // 5),
        )

        rate = result.created / t_scan if t_scan else 0.0
        publish_rate = publishes / enqueue_seconds if enqueue_seconds else 0.0
        warm_rate = warm_publishes / t_warm if t_warm else 0.0
        print("\nFigures")
        print(f"  digests written                    {digests:>10,}")
        print(f"  digest ids enqueued                {enqueued:>10,}")
        print(
            f"  send tasks published (LLEN)        {publishes:>10,}"
            f"   ({settings.REMINDER_DIGEST_CHUNK} ids each)"
        )
        print(
            f"  second scan wrote / enqueued       {again.created:>6,} / {len(again.enqueued_ids):,}"
        )
        print(f"  slots query                        {slots_seconds_first * 1000:>10.0f} ms")
        print(f"  inserts (statements + RETURNING)   {insert_seconds_first:>10.2f} s")
        print(f"  enqueue                            {enqueue_seconds:>10.3f} s")
        rest = t_scan - slots_seconds_first - insert_seconds_first - enqueue_seconds
        print(f"  commits (FK checks), requeue, rest {rest:>10.2f} s")
        print(f"  scan + enqueue                     {t_scan:>10.2f} s")
        print(
            f"    vs the {SOFT_TIME_LIMIT} s soft time limit       {t_scan / SOFT_TIME_LIMIT:>10.1%}"
        )
        print(f"  due learners/s (scan+enqueue)      {rate:>10,.0f}   (goal ≥ 20,000)")
        print(f"  CPU in the scan: this process      {py_cpu:>10.2f} s")
        if db_cpu_before is not None and db_cpu_after is not None:
            db_cpu = db_cpu_after - db_cpu_before
            print(f"  CPU in the scan: database backend  {db_cpu:>10.2f} s")
            cpu_rate = result.created / max(py_cpu + db_cpu, 1e-9)
            print(
                f"  due learners per CPU second        {cpu_rate:>10,.0f}   (steadier under load)"
            )
        print(f"  due learners/s, caches warm        {rescan.created / t_rescan:>10,.0f}")
        print(
            f"  digest ids enqueued/s              {enqueued / max(enqueue_seconds, 1e-9):>10,.0f}"
        )
        print(f"  mean message size                  {message_bytes:>10,.0f} bytes")
        print(f"  publishes/s in the scan            {publish_rate:>10,.0f}")
        print(f"  publishes/s, connection warm       {warm_rate:>10,.0f}")
        for label, reference in (("-c 50", lpush), ("-c 1", lpush_one)):
            if not reference:
                print(f"  redis-benchmark {label:<19}not found: no LPUSH reference")
                continue
            print(f"  redis-benchmark LPUSH/s ({label})   {reference:>10,.0f}")
            print(f"    scan's publishes/s ÷ LPUSH/s     {publish_rate / reference:>10.1%}")
            print(f"    warm publishes/s ÷ LPUSH/s       {warm_rate / reference:>10.1%}")
        print(f"  second scan                        {t_again * 1000:>10.0f} ms")

        first = next(iter(scan._learner_ranges()))
        plan = explain_insert(now=now, learners=first)
        print(f"\nEXPLAIN (ANALYZE, BUFFERS) of the INSERT for learners [{first[0]}, {first[1]}):")
        print(plan)
        seq_on_schedules = "Seq Scan on quizzes_recallschedule" in plan
        print(
            "\nPlan check: "
            + (
                "SEQUENTIAL scan on the schedule table (bad)"
                if seq_on_schedules
                else "no sequential scan on the schedule table (good)"
            )
        )
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"\nMachine: {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min)")
        print(f"\nTotal {time.perf_counter() - started:.0f} s")
        ok = (
            not seq_on_schedules
            and result.created == args.due_learners
            and enqueued == args.due_learners
            and again.created == 0
            and rescan.created == args.due_learners
        )
        return 0 if ok else 1
    finally:
        broker.delete(queue, *broker.keys(f"_kombu.binding*.{queue}"))
        if not args.keep:
            drop_database(db_name)


if __name__ == "__main__":
    sys.exit(main())
