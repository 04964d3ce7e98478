"""Benchmark: the nightly item analysis of the shipped course at 100,000 learners, beside a
plain COUNT over the same review logs measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything \\
        .venv/bin/python bench/item_analysis.py [--learners 100000] [--items 10] [--keep]

A throwaway database `<BENCH_DB_PREFIX>_item_analysis_<pid>_<time>` (dropped afterwards unless
--keep) is seeded by COPY: the shipped course, that many learners, each with recall schedules
of --items of its items and a few review logs each (1 + an exponential number, mean 2) over
half a year. Then, twice each (the second, warm, is printed): the COUNT(*) of the course's
logs; the first-answer read alone (DISTINCT ON); and the whole job as the nightly task runs it
(`item_analysis_refresh`: first answers, the figures, the calculated templates' stats, the
cohort's recall per item, the stored row), with its peak Python memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
import tracemalloc
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import ROOT, drop_database, unique_database_name, use_throwaway_database

COURSE = "content/gpus-tpus-ai-hardware"
SPAN_DAYS = 180
NOW = datetime.now(UTC).replace(microsecond=0)


def _copy(table_and_columns: str, lines: Iterable[str], chunk: int = 50_000) -> None:
    from django.db import connection

    with connection.cursor() as cursor, cursor.copy(f"COPY {table_and_columns} FROM STDIN") as cp:
        buffer: list[str] = []
        for line in lines:
            buffer.append(line)
            if len(buffer) >= chunk:
                cp.write("".join(buffer))
                buffer.clear()
        if buffer:
            cp.write("".join(buffer))


def seed(learners: int, items_each: int) -> tuple[int, int]:
    """The course, its learners, schedules and logs. Returns (schedules, logs)."""
    from django.core.management import call_command
    from django.db import connection

    from courses.models import Course
    from quizzes.models import QuizItem

    call_command("import_course", str(ROOT / COURSE), verbosity=0)
    course = Course.objects.get()
    items = QuizItem.objects.filter(lesson__module__course=course).prefetch_related("choices")
    item_ids = [item.pk for item in items]
    # A choice item's first answer records the keys picked: the key, or one distractor.
    options = {
        item.pk: (
            [c.key for c in item.choices.all() if c.is_correct],
            [c.key for c in item.choices.all() if not c.is_correct],
        )
        for item in items
        if item.kind == QuizItem.Kind.MULTIPLE_CHOICE
    }
    _copy(
        "accounts_user (password, is_superuser, first_name, last_name, email, is_staff, "
        "is_active, date_joined, display_name, time_zone, day_start_hour, reminders_enabled, "
        "reminder_hour, review_shortcuts_enabled)",
        (
            f"!\tf\t\t\tlearner{n}@bench.local\tf\tt\t{NOW.isoformat()}\tLearner {n}\tUTC\t4\tf\t8\tt\n"
            for n in range(learners)
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM accounts_user ORDER BY id")
        user_ids = [row[0] for row in cursor.fetchall()]
    rng = random.Random(learners)
    # A learner's ability decides their ratings, so the figures are not noise.
    plans = []
    for uid in user_ids:
        ability = rng.random()
        for item in rng.sample(item_ids, min(items_each, len(item_ids))):
            start = NOW - timedelta(days=rng.uniform(1, SPAN_DAYS))
            n = min(1 + int(rng.expovariate(1 / 2.0)), 20)
            plans.append((uid, item, start, n, ability))

    def schedule_lines() -> Iterator[str]:
        for uid, item, start, n, _ability in plans:
            last = start + timedelta(days=3 * (n - 1))
            yield (
                f"{uid}\t{item}\t{course.pk}\t2\t\\N\t{3.0 * n}\t5.0\t"
                f"{(last + timedelta(days=3)).isoformat()}\t{last.isoformat()}\t{n}\t0\t"
                f"00000000-0000-4000-8000-{n:04x}{uid:08x}\tf\t{NOW.isoformat()}\t{NOW.isoformat()}\n"
            )

    _copy(
        "quizzes_recallschedule (learner_id, item_id, course_id, state, step, stability, "
        "difficulty, due, last_review, reps, lapses, card_token, suspended, created_at, "
        "updated_at)",
        schedule_lines(),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT learner_id, item_id, id FROM quizzes_recallschedule")
        schedule_id = {(u, i): s for u, i, s in cursor.fetchall()}
    state = json.dumps({"state": 2, "reps": 1, "lapses": 0})
    counter = iter(range(1, 10**12))

    def log_lines() -> Iterator[str]:
        for uid, item, start, n, ability in plans:
            sid = schedule_id[(uid, item)]
            for k in range(n):
                rating = 3 if rng.random() < 0.3 + 0.6 * ability else 1
                at = start + timedelta(days=3 * k)
                picked = "\\N"
                if k == 0 and item in options:
                    keyed, distractors = options[item]
                    wrong = [rng.choice(distractors)] if distractors else []
                    picked = json.dumps(sorted(keyed) if rating > 1 else wrong)
                yield (
                    f"{sid}\t{uid}\t{item}\t{rating}\treview\t{at.isoformat()}\t5000\t0\t"
                    f"00000000-0000-4000-8000-{next(counter):012x}\t{state}\t{state}\t{picked}\n"
                )

    _copy(
        "quizzes_reviewlog (schedule_id, learner_id, item_id, rating, source, reviewed_at, "
        "duration_ms, scheduled_days, idempotency_key, state_before, state_after, choice_keys)",
        log_lines(),
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return len(plans), sum(p[3] for p in plans)


def _timed(fn):  # type: ignore[no-untyped-def]
    fn()  # warm-up
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def measure() -> None:
    from django.db import connection
    from django.utils import timezone

    from courses.models import Course
    from quizzes.item_analysis import item_analysis
    from quizzes.models import QuizItem, ReviewLog
    from quizzes.selectors.calculated_stats import calculated_stats_for
    from quizzes.services.item_analysis import cohort_recall, first_answers, item_analysis_refresh

    course = Course.objects.get()
    ids = list(QuizItem.objects.filter(lesson__module__course=course).values_list("pk", flat=True))

    def count() -> int:
        return ReviewLog.objects.filter(item_id__in=ids).count()

    def firsts() -> int:
        return sum(1 for _ in first_answers(item_ids=ids))

    rows = list(first_answers(item_ids=ids))

    def figures() -> int:
        return len(item_analysis(rows, item_ids=ids))

    def templates() -> int:
        return len(calculated_stats_for(course=course))

    def recall() -> int:
        return len(cohort_recall(course=course, now=timezone.now()))

    def job() -> int:
        return item_analysis_refresh(course=course, now=timezone.now()).responses

    count_s, logs = _timed(count)
    first_s, answers = _timed(firsts)
    figures_s, _n = _timed(figures)
    templates_s, _n = _timed(templates)
    recall_s, _n = _timed(recall)
    rows.clear()
    job_s, responses = _timed(job)
    # Memory in a run of its own: tracemalloc slows Python down two to three times.
    tracemalloc.start()
    job()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert responses == answers
    print(f"  review logs of the course:           {logs:>12,}")
    print(f"  first answers (learner x item):      {answers:>12,}")
    print(f"  reference: COUNT(*) of those logs:   {count_s * 1000:>10.0f} ms")
    print(f"  first answers read (DISTINCT ON):    {first_s * 1000:>10.0f} ms "
          f"({first_s / count_s:.1f}x the COUNT)")  # fmt: skip
    print(f"  its parts: the figures in Python {figures_s:.1f} s, the calculated templates' "
          f"stats {templates_s:.1f} s, the cohort's recall per item {recall_s:.1f} s")  # fmt: skip
    print(f"  whole nightly job (item_analysis_refresh): {job_s:>6.1f} s "
          f"({job_s / count_s:.1f}x the COUNT), peak Python memory {peak / 2**20:.0f} MiB, "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")  # fmt: skip
    print(f"  database: {connection.settings_dict['NAME']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=10, help="items each learner has answered")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()
    if not 1 <= args.learners <= 1_000_000 or not 1 <= args.items <= 58:
        print("learners: 1 to 1,000,000; items: 1 to 58", file=sys.stderr)
        sys.exit(2)
    name = unique_database_name("item_analysis")
    use_throwaway_database(name)
    try:
        started = time.perf_counter()
        schedules, logs = seed(args.learners, args.items)
        print(
            f"item analysis at {args.learners:,} learners: seeded {schedules:,} schedules and "
            f"{logs:,} logs in {time.perf_counter() - started:.0f} s"
        )
        measure()
    finally:
        if not args.keep:
            drop_database(name)


if __name__ == "__main__":
    main()
