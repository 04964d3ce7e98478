"""Benchmark: the reminder scan and enqueue on PostgreSQL, 100,000 learners with 5 million recall
schedules of whom 20,000 have items due.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything REDIS_URL=redis://... \\
        .venv/bin/python bench/reminder_scan.py [--learners N] [--items-per-learner K] [--keep]

Builds a throwaway database `bench_reminders` beside DATABASE_URL's (bench/_bench_db.py; dropped
afterwards unless --keep) with INSERT … SELECT generate_series, then times the scan (the candidate
query, the digest inserts) and the enqueue into a real Redis (REDIS_URL's database 15, or
BENCH_REDIS_URL, flushed before and after). Without PostgreSQL and Redis configured it prints
"skipped: …" and exits 0. Prints learners per second and the scan query's EXPLAIN (ANALYZE,
BUFFERS) plan, and fails if the plan reads the schedule table sequentially.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from urllib.parse import urlsplit, urlunsplit

from _bench_db import drop_database, use_throwaway_database

DB_NAME = "bench_reminders"
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


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<44} {elapsed:8.2f} s", flush=True)
    return result, elapsed


def build(*, learners: int, items: int, due_learners: int, due_items: int) -> None:
    """Learners spread over eight zones, reminder hour 0 and day start 0 (so every due learner is
    owed a digest now); every learner has a schedule for every item; the first `due_items` items
    of every (learners / due_learners)-th learner are due, every other schedule is due later."""
    from django.db import connection

    from courses.models import Course, Lesson, Module
    from quizzes.models import QuizItem

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
    stride = learners // due_learners
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
                INSERT INTO quizzes_recallschedule (learner_id, item_id, state, step, stability,
                    difficulty, due, last_review, reps, lapses, card_token, created_at, updated_at)
                SELECT u.id, i.id, 2, NULL, 10.0, 5.0,
                    CASE WHEN u.rn %% %s = 0 AND i.rn <= %s
                         THEN now() - interval '1 hour' * i.rn
                         ELSE now() + interval '1 hour' * (1 + (u.rn * 7 + i.rn * 13) %% 720) END,
                    now() - interval '3 days', 3, 0, gen_random_uuid(), now(), now()
                FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM accounts_user) AS u
                CROSS JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn
                            FROM quizzes_quizitem) AS i
                ORDER BY u.id, i.id
                """,
                [stride, due_items],
            ),
        )
        timed(
            "vacuum analyze",
            lambda: [
                cursor.execute(f"VACUUM ANALYZE {table}")
                for table in ("accounts_user", "quizzes_recallschedule", "quizzes_quizitem")
            ],
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--items-per-learner", type=int, default=50)
    parser.add_argument("--due-learners", type=int, default=20_000)
    parser.add_argument("--due-items", type=int, default=3, help="items due per due learner")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()

    base = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("BENCH_REDIS_URL", "")
    if not redis_url and os.environ.get("REDIS_URL"):
        redis_url = urlunsplit(urlsplit(os.environ["REDIS_URL"])._replace(path="/15"))
    if not base.startswith(("postgres://", "postgresql://")) or not redis_url:
        print(
            "skipped: needs PostgreSQL and Redis (set DATABASE_URL=postgres://... and REDIS_URL "
            "or BENCH_REDIS_URL=redis://...)"
        )
        return 0
    os.environ["REDIS_URL"] = redis_url  # the broker the scan enqueues into

    started = time.perf_counter()
    print(f"Building {DB_NAME}: {args.learners:,} learners × {args.items_per_learner} items")
    timed("create database + migrate", lambda: use_throwaway_database(DB_NAME))
    import redis
    from django.utils import timezone

    from quizzes.selectors import reminders as selectors
    from quizzes.services import reminders as services
    from reminders.models import ReminderDigest

    try:
        build(
            learners=args.learners,
            items=args.items_per_learner,
            due_learners=args.due_learners,
            due_items=args.due_items,
        )
        now = timezone.now()

        enqueued = 0
        enqueue_seconds = 0.0
        real_enqueue = services.digests_enqueue
        broker = redis.Redis.from_url(redis_url)
        broker.flushdb()
        target = f"Redis {redis_url}"

        def timed_enqueue(*, digest_ids: list[int]) -> None:
            nonlocal enqueued, enqueue_seconds
            start = time.perf_counter()
            real_enqueue(digest_ids=digest_ids)
            enqueued += len(digest_ids)
            enqueue_seconds += time.perf_counter() - start

        services.digests_enqueue = timed_enqueue  # type: ignore[assignment]

        print(f"\nScan at {now:%Y-%m-%d %H:%M} UTC; enqueue into {target}")
        candidates, t_query = timed(
            "candidate query + per-zone filter", lambda: selectors.digest_candidates(now=now)
        )
        _, t_summary = timed(
            "due count + first item per due learner",
            lambda: selectors.digest_due_summary(
                learner_ids=[c.learner_id for c in candidates], now=now
            ),
        )
        result, t_scan = timed(
            "scan: query, insert digests, enqueue", lambda: services.digests_scan(now=now)
        )
        assert int(broker.llen("reminders")) == enqueued, "the reminders queue holds every send"
        again, t_again = timed("second scan (no-op)", lambda: services.digests_scan(now=now))
        digests = ReminderDigest.objects.count()

        print("\nFigures")
        print(f"  learners due (candidates)          {len(candidates):>10,}")
        print(f"  digests written                    {digests:>10,}")
        print(f"  sends enqueued                     {enqueued:>10,}")
        print(
            f"  second scan wrote / enqueued       {again.created:>6,} / {len(again.enqueued_ids):,}"
        )
        print(f"  candidate query                    {t_query * 1000:>10.0f} ms")
        print(f"  due summary (count, first item)    {t_summary * 1000:>10.0f} ms")
        print(f"  scan + enqueue                     {t_scan:>10.2f} s")
        print(f"    of which enqueue                 {enqueue_seconds:>10.2f} s")
        print(f"  learners per second (scan+enqueue) {result.created / t_scan:>10,.0f}")
        print(f"  second scan                        {t_again * 1000:>10.0f} ms")

        plan = selectors.digest_candidate_rows(now=now).explain(analyze=True, buffers=True)
        print("\nEXPLAIN (ANALYZE, BUFFERS) of the scan's candidate query:")
        print(plan)
        seq_on_schedules = "Seq Scan on quizzes_recallschedule" in plan
        print(
            "\nPlan check: "
            + (
                "SEQUENTIAL scan on the schedule table (bad)"
                if seq_on_schedules
                else "index scan on the schedule table (good)"
            )
        )
        broker.flushdb()
        print(f"\nTotal {time.perf_counter() - started:.0f} s")
        ok = (
            not seq_on_schedules
            and result.created == args.due_learners
            and enqueued == args.due_learners
            and again.created == 0
        )
        return 0 if ok else 1
    finally:
        if not args.keep:
            drop_database(DB_NAME)


if __name__ == "__main__":
    sys.exit(main())
