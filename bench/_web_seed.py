"""Seed data for bench/web.py: the real course, a 400-item recall course, learners with recall
schedules and review logs (COPY), and logged-in sessions."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta

REAL_COURSE = "content/gpus-tpus-ai-hardware"
BENCH_ITEMS = 400


def copy_rows(table_and_columns: str, rows: Iterable[tuple[object, ...]]) -> None:
    from django.db import connection

    with connection.cursor() as cursor, cursor.copy(f"COPY {table_and_columns} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _bench_course() -> list[int]:
    from courses.models import Course, Lesson, Module
    from quizzes.models import QuizItem

    course = Course.objects.create(
        slug="bench-recall", title="Bench recall", learning_steps_minutes=[1, 10],
        relearning_steps_minutes=[10], daily_new_limit=20, daily_review_limit=200,
    )  # fmt: skip
    lessons = []
    for m in range(10):
        module = Module.objects.create(course=course, slug=f"m{m}", title=f"Module {m}", position=m)
        lessons += [
            Lesson(
                module=module,
                slug=f"l{m}-{n}",
                title=f"Lesson {m}.{n}",
                position=n,
                objective="o",
                body_markdown="b",
            )
            for n in range(4)
        ]
    Lesson.objects.bulk_create(lessons)
    lessons = list(Lesson.objects.filter(module__course=course))
    QuizItem.objects.bulk_create(
        QuizItem(
            lesson=lessons[i % len(lessons)],
            key=f"item-{i}",
            kind=QuizItem.Kind.FREE_RECALL,
            position=i,
            prompt=f"What does HBM bandwidth bound, case {i}?",
            model_answer="The decode step.",
            explanation="Memory-bound decode.",
        )
        for i in range(BENCH_ITEMS)
    )
    return list(QuizItem.objects.filter(lesson__module__course=course).values_list("id", flat=True))


def seed(
    *, learners: int, schedules_per_learner: int, logs_per_schedule: int, now: datetime
) -> None:
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import User
    from courses.models import Course, Enrollment
    from quizzes.models import QuizItem

    call_command("import_course", REAL_COURSE, verbosity=0)
    item_ids = _bench_course()
    course_of = dict(QuizItem.objects.values_list("id", "lesson__module__course_id"))
    User.objects.bulk_create(
        User(email=f"bench{n}@example.com", password="!unusable", time_zone="UTC")
        for n in range(learners)
    )
    user_ids = list(User.objects.order_by("id").values_list("id", flat=True))
    Enrollment.objects.bulk_create(
        Enrollment(course=course, user_id=uid, role=Enrollment.Role.LEARNER)
        for course in Course.objects.all()
        for uid in user_ids
    )
    rng = random.Random(42)

    def schedule_rows() -> Iterator[tuple[object, ...]]:
        for uid in user_ids:
            for item_id in rng.sample(item_ids, schedules_per_learner):
                stability = rng.uniform(1, 120)
                last = now - timedelta(days=rng.uniform(0.5, 90))
                due = last + timedelta(days=stability * rng.uniform(0.3, 1.5))
                yield (uid, item_id, course_of[item_id], 2, None, stability, rng.uniform(1, 10),
                       due, last, rng.randint(1, 12), rng.randint(0, 5), uuid.uuid4(), last,
                       last)  # fmt: skip

    copy_rows(
        "quizzes_recallschedule (learner_id, item_id, course_id, state, step, stability, "
        "difficulty, due, last_review, reps, lapses, card_token, created_at, updated_at)",
        schedule_rows(),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, learner_id, item_id, last_review FROM quizzes_recallschedule")
        schedules = cursor.fetchall()
    before, after = json.dumps({"state": 2, "reps": 3}), json.dumps({"state": 2, "reps": 4})

    def log_rows() -> Iterator[tuple[object, ...]]:
        for sid, uid, item_id, last in schedules:
            for k in range(logs_per_schedule):
                yield (sid, uid, item_id, rng.choice((1, 3, 3, 3)), "review",
                       last - timedelta(days=9 * k), rng.randint(2000, 20000), rng.randint(1, 60),
                       uuid.uuid4(), before, after)  # fmt: skip

    copy_rows(
        "quizzes_reviewlog (schedule_id, learner_id, item_id, rating, source, reviewed_at, "
        "duration_ms, scheduled_days, idempotency_key, state_before, state_after)",
        log_rows(),
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def sessions_for(user_ids: list[int]) -> dict[int, str]:
    """A signed-in session per learner, made by django.contrib.auth.login as a sign-in makes it
    (with what the project keeps in it at sign-in); returns learner id -> session key."""
    from django.conf import settings
    from django.contrib.auth import login
    from django.test import RequestFactory

    from accounts.models import User

    store_class = __import__(settings.SESSION_ENGINE, fromlist=["SessionStore"]).SessionStore
    keys: dict[int, str] = {}
    for user in User.objects.filter(pk__in=user_ids):
        request = RequestFactory().get("/")
        request.session = store_class()
        login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
        request.session.save()
        assert request.session.session_key is not None
        keys[user.pk] = request.session.session_key
    return keys
