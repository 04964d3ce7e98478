"""Benchmark: importing the course, and the outline, lesson and teaching pages of a large course.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything .venv/bin/python bench/course_pages.py

Builds a throwaway database `bench_courses` beside DATABASE_URL's (dropped afterwards unless
--keep). Prints the time of the first import of the shipped course and of a no-op re-import, then
builds a course of --modules × --lessons with --learners enrolled (each with progress on a random
share of the lessons) and prints, per page, the query count and the median and p95 response time
through the Django test client.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import ROOT, drop_database, use_throwaway_database

DB_NAME = "bench_courses"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(round(q * (len(ordered) - 1)), len(ordered) - 1)]


def build(modules: int, lessons: int, learners: int) -> tuple[object, list[object], object]:
    from django.utils import timezone

    from accounts.models import User
    from accounts.services import user_make_instructor
    from courses.models import Course, Enrollment, Lesson, LessonProgress, Module
    from courses.services.rendering import markdown_render

    body = (ROOT / "content/gpus-tpus-ai-hardware/lessons/02-memory-consumers.md").read_text()
    html = markdown_render(text=body)
    course = Course.objects.create(slug="big", title="Big course")
    all_lessons: list[Lesson] = []
    for m in range(modules):
        module = Module.objects.create(course=course, slug=f"m{m}", title=f"Module {m}", position=m)
        all_lessons += Lesson.objects.bulk_create(
            Lesson(
                module=module,
                slug=f"l{m}-{n}",
                title=f"Lesson {m}.{n}",
                position=n,
                objective="Why this matters.",
                body_markdown=body,
                body_html=html,
            )
            for n in range(lessons)
        )
    users = User.objects.bulk_create(
        User(email=f"learner{i}@bench.local", password="!") for i in range(learners)
    )
    Enrollment.objects.bulk_create(Enrollment(course=course, user=u) for u in users)
    now = timezone.now()
    rng = random.Random(7)
    progress = []
    for user in users:
        for lesson in all_lessons[: rng.randint(0, len(all_lessons))]:
            progress.append(LessonProgress(lesson=lesson, learner=user, completed_at=now))
    LessonProgress.objects.bulk_create(progress, batch_size=5000)
    teacher = User.objects.create_user(email="teacher@bench.local", password="x")
    user_make_instructor(user=teacher)
    Enrollment.objects.create(course=course, user=teacher, role=Enrollment.Role.INSTRUCTOR)
    return course, users, teacher


def measure(client: object, url: str, runs: int) -> tuple[int, float, float]:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # type: ignore[attr-defined]  # a first lesson visit writes; measure a repeat
    reset_queries()
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)  # type: ignore[attr-defined]
    queries = len(ctx)  # read now: the next request resets the query log
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        client.get(url)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - t) * 1000)
    return queries, statistics.median(times), pct(times, 0.95)


def run(args: argparse.Namespace) -> int:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.urls import reverse

    from home.services.content_import import course_import

    setup_test_environment()  # lets the test client's "testserver" host through
    folder = ROOT / "content" / "gpus-tpus-ai-hardware"
    t = time.perf_counter()
    report = course_import(folder=folder)
    first_ms = (time.perf_counter() - t) * 1000
    with CaptureQueriesContext(connection) as ctx:
        t = time.perf_counter()
        again = course_import(folder=folder)
        again_ms = (time.perf_counter() - t) * 1000
    writes = sum(
        1 for q in ctx if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    )
    print(f"import_course, first run: {first_ms:.0f} ms ({len(report.changes)} rows created)")
    print(
        f"import_course, no-op re-run: {again_ms:.0f} ms, {len(ctx)} queries, {writes} writes, "
        f"changed={again.changed}"
    )

    t = time.perf_counter()
    _course, users, teacher = build(args.modules, args.lessons, args.learners)
    print(
        f"\nbuilt a course of {args.modules} modules × {args.lessons} lessons with "
        f"{args.learners} learners in {time.perf_counter() - t:.1f} s"
    )
    client = Client()
    client.force_login(users[0])
    middle = f"l{args.modules // 2}-{args.lessons // 2}"
    pages = {
        "outline": reverse("courses:outline", args=["big"]),
        "lesson": reverse("courses:lesson", args=["big", middle]),
    }
    for name, url in pages.items():
        queries, median, p95 = measure(client, url, args.runs)
        print(f"{name}: {queries} queries, median {median:.1f} ms, p95 {p95:.1f} ms")
    client.force_login(teacher)
    queries, median, p95 = measure(
        client, reverse("courses:teaching_course", args=["big"]), max(5, args.runs // 10)
    )
    from courses.models import Course
    from courses.selectors import learner_progress_for_course

    big = Course.objects.get(slug="big")
    times = []
    for _ in range(5):
        t = time.perf_counter()
        list(learner_progress_for_course(course=big)[:50])
        times.append((time.perf_counter() - t) * 1000)
    print(f"  of which one page of 50 learners' progress: median {statistics.median(times):.1f} ms")
    print(
        f"teaching page ({args.learners} learners): {queries} queries, "
        f"median {median:.1f} ms, p95 {p95:.1f} ms"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=20)
    parser.add_argument("--lessons", type=int, default=10, help="lessons per module")
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--keep", action="store_true", help="keep the bench_courses database")
    args = parser.parse_args()
    use_throwaway_database(DB_NAME)
    try:
        return run(args)
    finally:
        if not args.keep:
            drop_database(DB_NAME)


if __name__ == "__main__":
    sys.exit(main())
