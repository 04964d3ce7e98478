"""Benchmark: every instructor page and job at 1k, 10k and 100k learners, with growth exponents.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything \\
        .venv/bin/python bench/instructor_scale.py [--sizes 1000,10000,100000] [--runs 7] [--keep]

For each size a throwaway database `<BENCH_DB_PREFIX>_scale_<size>_<pid>_<time>` (dropped
afterwards unless --keep) is seeded by COPY with two courses (the shipped course and a bench
course of 40 items: more items than the rollup's batch of 64, so a learner's day spans batches),
that many learners enrolled in both (about 24 recall schedules of the first and 8 of the second,
some 160 review logs each over half a year), a heavy learner with 50,000 logs over both courses,
capstone submissions from half of them (some graded, released or claimed) and today's digests. Each size runs in its own process. Then, through Django's test client as the
course's instructor, each page's p50 and p95 over --runs (after one warm-up) and its query
count; the grades CSV's peak Python memory; the review rollup's first (catch-up) and steady
run; the nightly parameter training (wall time and peak RSS of a child process). Each page's
statements are run again under EXPLAIN (ANALYZE, BUFFERS): its slowest is printed, and any
sequential scan of the review log is flagged. Last, each figure's growth exponent k (time ~
learners^k, least squares over the sizes): 0 is constant, 1 linear.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import ROOT, drop_database, unique_database_name, use_throwaway_database

REAL_COURSE = "content/gpus-tpus-ai-hardware"
SCHEDULES_PER_LEARNER = 24
# The second course: generated items (the shipped second course has only six), and how many of
# them each learner remembers.
BENCH_COURSE_ITEMS = 40
SECOND_COURSE_SCHEDULES = 8
HEAVY_LOGS = 50_000
SPAN_DAYS = 180
NOW = datetime.now(UTC).replace(microsecond=0)


# ---------------------------------------------------------------- seeding (COPY, not the ORM)


def _copy_text(table_and_columns: str, lines: Iterable[str], chunk: int = 20_000) -> None:
    """COPY tab-separated lines (already escaped) in chunks: the fast path for the logs."""
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


def _copy_model(model: Any, rows: Iterable[dict[str, Any]]) -> None:
    """COPY rows of `model`, every column not given taking its field's default (blank text,
    empty JSON, null)."""
    from django.db import connection
    from django.db.models import JSONField

    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    defaults: dict[str, Any] = {}
    for f in fields:
        if f.has_default():
            value = f.get_default()
        elif f.null:
            value = None
        else:
            value = ""
        defaults[f.attname] = json.dumps(value) if isinstance(f, JSONField) else value
    columns = ", ".join(f.column for f in fields)
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as cp,
    ):
        for row in rows:
            cp.write_row([row.get(f.attname, defaults[f.attname]) for f in fields])


def _history(rng: random.Random, n: int, start: datetime) -> list[tuple[datetime, int, int, int]]:
    """One card's reviews: (when, rating, state before, scheduled days), intervals growing."""
    out = []
    at, interval, state = start, 0, 1
    for _ in range(n):
        rating = 1 if rng.random() < 0.15 else (3 if rng.random() < 0.85 else rng.choice((2, 4)))
        out.append((at, rating, state, interval if state == 2 else 0))
        if rating == 1:
            interval, state = 1, (3 if state == 2 else 1)
        else:
            interval, state = max(1, int(interval * 2.5) or 1), 2
        at += timedelta(days=interval, minutes=rng.randint(0, 600))
        if at > NOW:
            break
    return out


def seed(learners: int) -> dict[str, Any]:
    """The course, its learners, their schedules, logs, plans and digests. Returns timings."""
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import User
    from accounts.services import user_make_instructor
    from courses.models import Course, Enrollment
    from planner.models import CapstoneSubmission, CapstoneWorksheet, Grade, GradingClaim
    from quizzes.models import QuizItem
    from reminders.models import ReminderDigest

    started = time.perf_counter()
    call_command("import_course", str(ROOT / REAL_COURSE), verbosity=0)
    course = Course.objects.get()
    second = _bench_course()
    item_ids = list(
        QuizItem.objects.filter(lesson__module__course=course).values_list("pk", flat=True)
    )
    second_ids = list(
        QuizItem.objects.filter(lesson__module__course=second).values_list("pk", flat=True)
    )
    course_of = {**dict.fromkeys(item_ids, course.pk), **dict.fromkeys(second_ids, second.pk)}
    rng = random.Random(learners)
    teacher = User.objects.create_user(email="teacher@bench.local", password="x")
    user_make_instructor(user=teacher)
    for taught in (course, second):
        Enrollment.objects.create(course=taught, user=teacher, role=Enrollment.Role.INSTRUCTOR)
    assert Group.objects.exists()
    _copy_model(
        User,
        (
            {"email": f"learner{n}@bench.local", "password": "!", "display_name": f"Learner {n}",
             "date_joined": NOW}
            for n in range(learners)
        ),
    )  # fmt: skip
    user_ids = list(
        User.objects.filter(email__startswith="learner").order_by("pk").values_list("pk", flat=True)
    )
    heavy = user_ids[0]
    _copy_model(
        Enrollment,
        ({"course_id": c.pk, "user_id": uid, "role": "learner", "enrolled_at": NOW}
         for uid in user_ids for c in (course, second)),
    )  # fmt: skip

    schedules: list[tuple[int, int, list[tuple[datetime, int, int, int]]]] = []
    for uid in user_ids:
        if uid == heavy:
            # Two years of daily reviews of every item of both courses: 50,000 logs in all.
            every = item_ids + second_ids
            per_item = HEAVY_LOGS // len(every) + 1
            step = timedelta(days=720) / per_item
            for item in every:
                start = NOW - timedelta(days=720, minutes=rng.randint(0, 600))
                history = [
                    (start + step * k, 1 if rng.random() < 0.1 else 3, 2, max(step.days, 1))
                    for k in range(per_item)
                ]
                schedules.append((uid, item, history))
            continue
        remembered = rng.sample(item_ids, min(SCHEDULES_PER_LEARNER, len(item_ids)))
        remembered += rng.sample(second_ids, SECOND_COURSE_SCHEDULES)
        for item in remembered:
            n = min(1 + int(rng.expovariate(1 / 4.0)), 30)
            start = NOW - timedelta(days=rng.uniform(1, SPAN_DAYS))
            schedules.append((uid, item, _history(rng, n, start)))
    seeded_schedules = time.perf_counter()

    def schedule_lines() -> Iterator[str]:
        for uid, item, history in schedules:
            last, _rating, _state, days = history[-1]
            lapses = sum(1 for _, r, s, _ in history if r == 1 and s == 2)
            due = last + timedelta(days=max(days, 1))
            yield (
                f"{uid}\t{item}\t{course_of[item]}\t2\t\\N\t{max(days, 1) * 1.0}\t5.0\t{due.isoformat()}\t"
                f"{last.isoformat()}\t{len(history)}\t{lapses}\t"
                f"00000000-0000-4000-8000-{len(history):04x}{uid:08x}\tf\t{last.isoformat()}\t"
                f"{last.isoformat()}\n"
            )

    _copy_text(
        "quizzes_recallschedule (learner_id, item_id, course_id, state, step, stability, "
        "difficulty, due, last_review, reps, lapses, card_token, suspended, created_at, "
        "updated_at)",
        schedule_lines(),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT learner_id, item_id, id FROM quizzes_recallschedule")
        schedule_id = {(u, i): s for u, i, s in cursor.fetchall()}
    states = {s: json.dumps({"state": s, "reps": 3, "lapses": 0}) for s in (1, 2, 3)}
    after = json.dumps({"state": 2, "reps": 4, "lapses": 0})
    counter = iter(range(1, 10**12))

    def log_lines() -> Iterator[str]:
        for uid, item, history in schedules:
            sid = schedule_id[(uid, item)]
            for at, rating, state, days in history:
                yield (
                    f"{sid}\t{uid}\t{item}\t{rating}\treview\t{at.isoformat()}\t"
                    f"{rng.randint(2000, 20000)}\t{days}\t"
                    f"00000000-0000-4000-8000-{next(counter):012x}\t{states[state]}\t{after}\n"
                )

    logs = sum(len(h) for _, _, h in schedules)
    _copy_text(
        "quizzes_reviewlog (schedule_id, learner_id, item_id, rating, source, reviewed_at, "
        "duration_ms, scheduled_days, idempotency_key, state_before, state_after)",
        log_lines(),
    )
    seeded_logs = time.perf_counter()
    schedules.clear()

    submitters = user_ids[1 : 1 + learners // 2]
    _copy_model(
        CapstoneWorksheet,
        ({"learner_id": uid, "course_id": course.pk, "created_at": NOW, "updated_at": NOW}
         for uid in submitters),
    )  # fmt: skip
    worksheet = dict(
        CapstoneWorksheet.objects.filter(course=course).values_list("learner_id", "pk")
    )

    def submissions() -> Iterator[dict[str, Any]]:
        for n, uid in enumerate(submitters):
            at = NOW - timedelta(days=60) + timedelta(seconds=n * 50)
            yield {"worksheet_id": worksheet[uid], "learner_id": uid, "course_id": course.pk,
                   "version": 1, "submitted_at": at}  # fmt: skip
            if n % 10 == 0:
                yield {"worksheet_id": worksheet[uid], "learner_id": uid, "course_id": course.pk,
                       "version": 2, "submitted_at": at + timedelta(days=3)}  # fmt: skip

    _copy_model(CapstoneSubmission, submissions())
    submission_ids = list(
        CapstoneSubmission.objects.filter(course=course).order_by("pk").values_list("pk", flat=True)
    )
    graded = submission_ids[::33]
    _copy_model(
        Grade,
        ({"submission_id": sid, "grader_id": teacher.pk, "status": "released" if k % 2 else "draft",
          "total_points": 6, "max_points": 8, "released_at": NOW if k % 2 else None,
          "created_at": NOW, "updated_at": NOW}
         for k, sid in enumerate(graded)),
    )  # fmt: skip
    _copy_model(
        GradingClaim,
        ({"submission_id": sid, "grader_id": teacher.pk, "claimed_at": NOW,
          "expires_at": NOW + timedelta(days=365)}
         for sid in submission_ids[1::197]),
    )  # fmt: skip
    _copy_model(
        ReminderDigest,
        ({"learner_id": uid, "local_date": NOW.date(), "status": "sent", "due_count": 3,
          "created_at": NOW, "updated_at": NOW}
         for uid in user_ids),
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("SELECT count(*) FROM quizzes_recallschedule")
        n_schedules = cursor.fetchone()[0]
    return {
        "seed_s": time.perf_counter() - started,
        "schedules_s": seeded_schedules - started,
        "logs_s": seeded_logs - seeded_schedules,
        "schedules": n_schedules,
        "logs": logs,
        "submissions": len(submission_ids),
        "course": course.slug,
        "second_course": second.slug,
        "items": len(course_of),
        "teacher": teacher.pk,
        "heavy": heavy,
    }


def _bench_course() -> Any:
    """The second course: one lesson of BENCH_COURSE_ITEMS free-recall items, labelled as the
    bench's own."""
    from courses.models import Course, Lesson, Module
    from quizzes.models import QuizItem

    second = Course.objects.create(
        slug="bench-second-course", title="Bench second course", summary="Generated by the bench.",
        is_published=True,
    )  # fmt: skip
    module = Module.objects.create(course=second, slug="bench", title="Bench", position=1)
    lesson = Lesson.objects.create(
        module=module, slug="bench-lesson", title="Bench lesson", position=1,
        objective="Bench.", body_markdown="x", body_html="<p>x</p>",
    )  # fmt: skip
    QuizItem.objects.bulk_create(
        QuizItem(lesson=lesson, key=f"bench-{n}", kind=QuizItem.Kind.FREE_RECALL, position=n,
                 prompt=f"Bench prompt {n}?", model_answer="An answer.")
        for n in range(1, BENCH_COURSE_ITEMS + 1)
    )  # fmt: skip
    return second


# ---------------------------------------------------------------- measuring


def _explain(queries: list[dict[str, str]]) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) each SELECT the page ran: the slowest's plan, and whether any
    plan reads the review log by a sequential scan."""
    from django.db import connection

    slowest: tuple[float, str, str] = (-1.0, "", "")
    seq_scan = False
    for query in queries:
        sql = query["sql"]
        if not sql.lstrip().upper().startswith(("SELECT", "WITH", "(SELECT")):
            continue
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
                plan = "\n".join(row[0] for row in cursor.fetchall())
        except Exception:
            continue
        if "Seq Scan on quizzes_reviewlog" in plan:
            seq_scan = True
        ms = float(plan.rsplit("Execution Time: ", 1)[1].split(" ")[0])
        if ms > slowest[0]:
            slowest = (ms, sql, plan)
    return {"slowest_ms": slowest[0], "slowest_sql": slowest[1][:400], "plan": slowest[2],
            "reviewlog_seq_scan": seq_scan}  # fmt: skip


def _page(client: Any, url: str, runs: int) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def fetch() -> tuple[int, int]:
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        return response.status_code, len(body)

    status, size = fetch()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fetch()
        times.append(time.perf_counter() - started)
    with CaptureQueriesContext(connection) as captured:
        fetch()
    ordered = sorted(times)
    return {
        "status": status,
        "bytes": size,
        "p50": statistics.median(times),
        "p95": ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)],
        "queries": len(captured.captured_queries),
        **_explain(captured.captured_queries),
    }


def _in_child(target: str, course_slug: str) -> dict[str, float]:
    """Run a job in a fresh process on this database: its wall time and peak resident memory."""
    code = (
        f"import os, sys, time, resource, django; sys.path.insert(0, {str(ROOT)!r});"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup();"
        "from django.utils import timezone; from courses.models import Course;"
        f"course = Course.objects.get(slug={course_slug!r}); t = time.perf_counter();"
        f"{target};"
        # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report
        # the seeding parent's size; the high-water mark belongs to the new address space.
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1];"
        "print(time.perf_counter() - t, hwm)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ
    )
    if done.returncode != 0:
        raise SystemExit(f"the job failed:\n{done.stderr[-3000:]}")
    out = done.stdout.split()
    return {"seconds": float(out[-2]), "peak_mib": int(out[-1]) / 1024}


def measure_size(learners: int, runs: int, keep: bool) -> dict[str, Any]:
    name = unique_database_name(f"scale_{learners}")
    use_throwaway_database(name)
    try:
        return _measure(learners, runs)
    finally:
        if not keep:
            drop_database(name)


def _measure(learners: int, runs: int) -> dict[str, Any]:
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse
    from django.utils import timezone

    from accounts.models import User
    from quizzes.services.rollup import review_rollups_refresh

    setup_test_environment()  # the test client's response.context, and "testserver" allowed
    seeded = seed(learners)
    print(f"  seeded {learners} learners in {seeded['seed_s']:.0f} s "
          f"({seeded['schedules']} schedules, {seeded['logs']} logs, two courses of "
          f"{seeded['items']} items)", flush=True)  # fmt: skip
    result: dict[str, Any] = {"seed": seeded, "pages": {}, "jobs": {}}
    started = time.perf_counter()
    review_rollups_refresh(now=timezone.now())
    result["jobs"]["rollup, first run (catch-up)"] = {"seconds": time.perf_counter() - started}
    started = time.perf_counter()
    review_rollups_refresh(now=timezone.now())
    result["jobs"]["rollup, steady run"] = {"seconds": time.perf_counter() - started}
    from quizzes.models import LearnerDayRollup, ReviewRollupWatermark

    # The rollup ran (two courses, learners in both) and the pages read it from here on.
    assert ReviewRollupWatermark.objects.get(pk=1).rolled_up_to is not None
    print(f"  rollup: {LearnerDayRollup.objects.count():,} learner-days, "
          f"first run {result['jobs']['rollup, first run (catch-up)']['seconds']:.1f} s, "
          f"steady run {result['jobs']['rollup, steady run']['seconds']:.1f} s",
          flush=True)  # fmt: skip

    slug = seeded["course"]
    teacher = User.objects.get(pk=seeded["teacher"])
    client = Client()
    client.force_login(teacher)
    queue = reverse("capstone:grading_queue")
    first_page = client.get(queue).context["next_after"]
    teaching = reverse("courses:teaching_course", args=[slug])
    last_page = client.get(teaching).context["learners"].paginator.num_pages
    pages = {
        "grading queue, all": queue,
        "grading queue, course, ungraded": f"{queue}?course={slug}&status=ungraded",
        "grading queue, second page": f"{queue}?after={first_page}",
        "grading queue, released": f"{queue}?status=released",
        "course stats": reverse("quizzes:course_stats", args=[slug]),
        "instructor home": reverse("dashboard"),
        "teaching course, last page": f"{teaching}?page={last_page}",
        "reminders status": reverse("reminders:status"),
        "FSRS parameters page": reverse("quizzes:course_parameters", args=[slug]),
        "grades CSV": reverse("capstone:export", args=[slug]),
    }
    for label, url in pages.items():
        result["pages"][label] = _page(client, url, runs)
        page = result["pages"][label]
        print(f"  {label}: p50 {page['p50'] * 1000:.0f} ms, p95 {page['p95'] * 1000:.0f} ms, "
              f"{page['queries']} queries", flush=True)  # fmt: skip
    heavy = Client()
    heavy.force_login(User.objects.get(pk=seeded["heavy"]))
    result["pages"]["heavy learner's statistics"] = _page(heavy, reverse("quizzes:stats"), runs)
    # Its review days run as a prepared statement, which EXPLAIN cannot take as captured:
    # explain the same queryset with the heavy learner's values.
    from quizzes.selectors.stats_days import _review_days_queryset

    learner = User.objects.get(pk=seeded["heavy"])
    days = _review_days_queryset(
        learner_id=learner.pk, time_zone=learner.time_zone, day_start_hour=learner.day_start_hour
    )
    sql, params = days.query.sql_with_params()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    ms = float(plan.rsplit("Execution Time: ", 1)[1].split(" ")[0])
    page = result["pages"]["heavy learner's statistics"]
    page["reviewlog_seq_scan"] |= "Seq Scan on quizzes_reviewlog" in plan
    if ms > page["slowest_ms"]:
        page.update(slowest_ms=ms, slowest_sql=str(days.query)[:400], plan=plan)
    # The same-run references: a light learner's statistics (the heavy learner's page should
    # cost what this one does) and dashboard, which read only that learner's rows.
    plain = Client()
    plain.force_login(User.objects.get(email="learner7@bench.local"))
    result["pages"]["reference: a light learner's statistics"] = _page(
        plain, reverse("quizzes:stats"), runs
    )
    result["pages"]["reference: a learner's dashboard"] = _page(plain, reverse("dashboard"), runs)
    heavy_page = result["pages"]["heavy learner's statistics"]
    light_page = result["pages"]["reference: a light learner's statistics"]
    print(
        f"  heavy learner's statistics (50,000 logs, two courses): p50 "
        f"{heavy_page['p50'] * 1000:.0f} ms, p95 {heavy_page['p95'] * 1000:.0f} ms; a light "
        f"learner's: p50 {light_page['p50'] * 1000:.0f} ms (target: heavy <= 500 ms)",
        flush=True,
    )

    first_bytes = []
    for _ in range(runs):
        started = time.perf_counter()
        streamed: Any = client.get(pages["grades CSV"])
        next(iter(streamed.streaming_content))
        first_bytes.append(time.perf_counter() - started)
    result["jobs"]["grades CSV, first byte"] = {"seconds": statistics.median(first_bytes)}

    tracemalloc.start()
    body: Any = client.get(pages["grades CSV"])
    rows = sum(chunk.count(b"\n") for chunk in body.streaming_content)
    result["jobs"]["grades CSV, Python peak"] = {
        "peak_mib": tracemalloc.get_traced_memory()[1] / 2**20, "rows": rows
    }  # fmt: skip
    tracemalloc.stop()

    result["jobs"]["nightly parameter training"] = _in_child(
        "from quizzes.services.parameters import parameters_refresh;"
        "sets = parameters_refresh(course=course, now=timezone.now(), progress=print)",
        slug,
    )
    print(f"  training: {result['jobs']['nightly parameter training']}", flush=True)
    return result


def exponent(sizes: list[int], values: list[float]) -> float | None:
    """Least-squares slope of log(value) on log(size)."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if v > 0]
    if len(points) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else None


def report(results: dict[int, dict[str, Any]]) -> None:
    sizes = sorted(results)
    largest = results[sizes[-1]]
    head = " | ".join(f"{s:,} learners" for s in sizes)
    print(f"\n| page (p50 / p95, queries) | {head} | exponent k (p50) | review-log seq scan |")
    print("|---|" + "---|" * len(sizes) + "---|---|")
    for label in largest["pages"]:
        cells = [
            f"{results[s]['pages'][label]['p50'] * 1000:.0f} / "
            f"{results[s]['pages'][label]['p95'] * 1000:.0f} ms, "
            f"{results[s]['pages'][label]['queries']}"
            for s in sizes
        ]
        k = exponent(sizes, [results[s]["pages"][label]["p50"] for s in sizes])
        scans = any(results[s]["pages"][label]["reviewlog_seq_scan"] for s in sizes)
        ks = f"{k:+.2f}" if k is not None else "–"
        print(f"| {label} | {' | '.join(cells)} | {ks} | {'YES' if scans else 'none'} |")
    print("\n| job | " + head + " | exponent k |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for label in largest["jobs"]:
        cells = []
        for s in sizes:
            job = results[s]["jobs"][label]
            text = f"{job['seconds']:.1f} s" if "seconds" in job else ""
            if "peak_mib" in job:
                text += f"{', ' if text else ''}{job['peak_mib']:.0f} MiB peak"
            cells.append(text)
        key = "seconds" if "seconds" in largest["jobs"][label] else "peak_mib"
        k = exponent(sizes, [results[s]["jobs"][label][key] for s in sizes])
        print(f"| {label} | {' | '.join(cells)} | {f'{k:+.2f}' if k is not None else '–'} |")
    print("\nSeeded: " + "; ".join(
        f"{s:,}: {results[s]['seed']['schedules']:,} schedules, {results[s]['seed']['logs']:,} logs, "
        f"{results[s]['seed']['submissions']:,} plans in {results[s]['seed']['seed_s']:.0f} s"
        for s in sizes
    ))  # fmt: skip
    print(
        f"\nSlowest statement of each page at {sizes[-1]:,} learners, EXPLAIN (ANALYZE, BUFFERS):"
    )
    for label, page in largest["pages"].items():
        print(f"\n--- {label}: {page['slowest_ms']:.1f} ms\n{page['slowest_sql']}")
        print("\n".join(page["plan"].splitlines()[:30]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_size:
        result = measure_size(args.one_size, args.runs, args.keep)
        Path(args.out).write_text(json.dumps(result, default=str))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(not 10 <= s <= 1_000_000 for s in sizes):
        print("sizes: each between 10 and 1,000,000 learners", file=sys.stderr)
        sys.exit(2)
    results: dict[int, dict[str, Any]] = {}
    for size in sizes:
        print(f"{size:,} learners", flush=True)
        out = ROOT / "var" / f"instructor_scale_{size}_{os.getpid()}.json"
        out.parent.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, __file__, "--one-size", str(size), "--runs", str(args.runs),
             "--out", str(out), *(["--keep"] if args.keep else [])],
            check=True,
        )  # fmt: skip
        results[size] = json.loads(out.read_text())
    report(results)


if __name__ == "__main__":
    main()
