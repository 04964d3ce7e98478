"""Benchmark: the due queue and one grade with 1,000 learners × 200 items on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything .venv/bin/python bench/due_queue.py

Builds a throwaway database `bench_quizzes` beside DATABASE_URL's (dropped afterwards unless
--keep), fills it with COPY, then prints the due-queue time (median and p95 over --runs), the
EXPLAIN plan of the due query, and the time of one grade request through the Django test client.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import drop_database, skip_unless_postgres, use_throwaway_database

DB_NAME = "bench_quizzes"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(round(q * (len(ordered) - 1)), len(ordered) - 1)]


def copy_rows(table_and_columns: str, rows: Iterable[tuple[object, ...]]) -> None:
    """COPY `rows` into `table (columns)` in one stream."""
    from django.db import connection

    with connection.cursor() as cursor, cursor.copy(f"COPY {table_and_columns} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def build(learners: int, items: int, scheduled_share: float, now: datetime) -> None:
    from django.db import connection

    from courses.models import Course, Enrollment, Lesson, Module
    from quizzes.models import QuizItem

    course = Course.objects.create(
        slug="bench", title="Bench", learning_steps_minutes=[1, 10], relearning_steps_minutes=[10]
    )
    lessons = []
    for m in range(10):
        module = Module.objects.create(course=course, slug=f"m{m}", title=f"Module {m}", position=m)
        for lesson_no in range(4):
            lessons.append(
                Lesson(
                    module=module,
                    slug=f"l{m}-{lesson_no}",
                    title=f"Lesson {m}.{lesson_no}",
                    position=lesson_no,
                    objective="o",
                    body_markdown="b",
                )
            )
    Lesson.objects.bulk_create(lessons)
    lessons = list(Lesson.objects.filter(module__course=course))
    QuizItem.objects.bulk_create(
        QuizItem(
            lesson=lessons[i % len(lessons)],
            key=f"item-{i}",
            kind=QuizItem.Kind.FREE_RECALL,
            position=i,
            prompt=f"Prompt {i}?",
            model_answer="a",
        )
        for i in range(items)
    )
    item_ids = list(QuizItem.objects.values_list("id", flat=True).order_by("id"))
    course_of = dict(QuizItem.objects.values_list("id", "lesson__module__course_id"))
    rng = random.Random(42)
    with connection.cursor() as cursor:
        buf = io.StringIO()
        for n in range(learners):
            buf.write(
                f"!unusable\t\\N\tf\tf\tt\t{now.isoformat()}\tbench{n}@example.com\t\tUTC\t4\tt\t8\t\\N\tt\t\t\n"
            )
        with cursor.copy(
            "COPY accounts_user (password, last_login, is_superuser, is_staff, is_active, "
            "date_joined, email, display_name, time_zone, day_start_hour, reminders_enabled, "
            "reminder_hour, reminders_paused_until, review_shortcuts_enabled, first_name, last_name) "
            "FROM STDIN"
        ) as copy:
            copy.write(buf.getvalue())
        cursor.execute("SELECT id FROM accounts_user ORDER BY id")
        user_ids = [row[0] for row in cursor.fetchall()]
    Enrollment.objects.bulk_create(
        Enrollment(course=course, user_id=uid, role=Enrollment.Role.LEARNER) for uid in user_ids
    )
    per_learner = int(items * scheduled_share)

    def schedule_rows() -> Iterator[tuple[object, ...]]:
        for uid in user_ids:
            for item_id in rng.sample(item_ids, per_learner):
                stability = rng.uniform(1, 120)
                last = now - timedelta(days=rng.uniform(0, 90))
                due = last + timedelta(days=stability * rng.uniform(0.5, 1.5))
                difficulty, reps, lapses = rng.uniform(1, 10), rng.randint(1, 12), rng.randint(0, 3)
                # state 2 = Review, step NULL; created_at = updated_at = last review.
                yield (uid, item_id, course_of[item_id], 2, None, stability, difficulty, due,
                       last, reps, lapses, uuid.uuid4(), last, last)  # fmt: skip

    copy_rows(
        "quizzes_recallschedule (learner_id, item_id, course_id, state, step, stability, "
        "difficulty, due, last_review, reps, lapses, card_token, created_at, updated_at)",
        schedule_rows(),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, learner_id, item_id, last_review FROM quizzes_recallschedule")
        schedules = cursor.fetchall()
    state = json.dumps({"state": 2, "reps": 3})

    def log_rows() -> Iterator[tuple[object, ...]]:
        for sid, uid, item_id, last in schedules:
            rating, duration_ms, days = (
                rng.choice((1, 3, 3, 3)),
                rng.randint(2000, 20000),
                rng.randint(1, 60),
            )
            yield (sid, uid, item_id, rating, "review", last, duration_ms, days, uuid.uuid4(),
                   state, state)  # fmt: skip

    copy_rows(
        "quizzes_reviewlog (schedule_id, learner_id, item_id, rating, source, reviewed_at, "
        "duration_ms, scheduled_days, idempotency_key, state_before, state_after)",
        log_rows(),
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument(
        "--scheduled-share",
        type=float,
        default=0.75,
        help="share of items each learner has a schedule for (the rest are new)",
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench_quizzes database")
    args = parser.parse_args()
    skip_unless_postgres()
    use_throwaway_database(DB_NAME)
    try:
        return run(args)
    finally:
        if not args.keep:
            drop_database(DB_NAME)


def run(args: argparse.Namespace) -> int:
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from accounts.models import User
    from quizzes.models import RecallSchedule, ReviewLog
    from quizzes.selectors.queue import due_count_for, due_queue_for
    from quizzes.services.review import review_grade

    now = datetime.now(UTC)
    t = time.perf_counter()
    build(args.learners, args.items, args.scheduled_share, now)
    build_s = time.perf_counter() - t
    n_sched = RecallSchedule.objects.count()
    n_logs = ReviewLog.objects.count()
    print(
        f"built {args.learners} learners × {args.items} items: {n_sched:,} schedules, "
        f"{n_logs:,} review logs in {build_s:.1f} s"
    )

    learners = list(User.objects.order_by("?")[: args.runs])
    queue_ms, count_ms = [], []
    with CaptureQueriesContext(connection) as ctx:
        due_queue_for(learner=learners[0], now=now)
    for learner in learners:
        t = time.perf_counter()
        queue = due_queue_for(learner=learner, now=now)
        queue_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        due_count_for(learner=learner, now=now)
        count_ms.append((time.perf_counter() - t) * 1000)
    assert queue.card is not None
    print(
        f"due_queue_for (whole selector, {len(ctx)} queries, next card included): "
        f"median {statistics.median(queue_ms):.2f} ms, p95 {pct(queue_ms, 0.95):.2f} ms "
        f"over {len(learners)} learners"
    )
    print(
        f"due count query alone: median {statistics.median(count_ms):.2f} ms, "
        f"p95 {pct(count_ms, 0.95):.2f} ms"
    )

    plan_qs = RecallSchedule.objects.filter(learner=learners[0], due__lte=now).order_by(
        "due", "id"
    )[:1]
    print("\nEXPLAIN ANALYZE of the next-due-card query:")
    print(plan_qs.explain(analyze=True))
    print("\nEXPLAIN ANALYZE of the due count (the query due_count_for runs):")
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN ANALYZE SELECT COUNT(*) FROM quizzes_recallschedule "
            "WHERE learner_id = %s AND due <= %s",
            [learners[0].pk, now],
        )
        print("\n".join(row[0] for row in cursor.fetchall()))

    # One grade request through the Django test client (login session, CSRF off, full stack).
    client = Client()
    grade_ms, service_ms = [], []
    for learner in learners[:50]:
        client.force_login(learner)
        schedule = (
            RecallSchedule.objects.filter(learner=learner, due__lte=now).order_by("due").first()
        )
        if schedule is None:
            continue
        t = time.perf_counter()
        response = client.post(
            reverse("quizzes:grade"),
            {"schedule_id": schedule.pk, "card_token": str(schedule.card_token), "rating": 3},
            HTTP_HX_REQUEST="true",
        )
        grade_ms.append((time.perf_counter() - t) * 1000)
        assert response.status_code == 200, response.status_code
        schedule = (
            RecallSchedule.objects.filter(learner=learner, due__lte=now).order_by("due").first()
        )
        if schedule is not None:
            t = time.perf_counter()
            review_grade(
                learner=learner,
                schedule_id=schedule.pk,
                card_token=schedule.card_token,
                rating=3,
                now=now,
            )
            service_ms.append((time.perf_counter() - t) * 1000)
    reset_queries()
    print(
        f"\ngrade request (POST /review/grade/ via test client, renders the next card): "
        f"median {statistics.median(grade_ms):.1f} ms, p95 {pct(grade_ms, 0.95):.1f} ms "
        f"over {len(grade_ms)} requests"
    )
    print(
        f"review_grade service alone: median {statistics.median(service_ms):.2f} ms, "
        f"p95 {pct(service_ms, 0.95):.2f} ms over {len(service_ms)} grades"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
