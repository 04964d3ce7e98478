"""Benchmark: peer assignment (`peer_assign`) at 100,000 learners, beside a bare primary-key read.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything \\
        .venv/bin/python bench/peer_assignment.py [--learners 100000] [--runs 300] [--keep]

A throwaway database `<BENCH_DB_PREFIX>_peer_<pid>_<time>` (dropped afterwards unless --keep)
holds one course with that many learners, each with a submitted plan open to peers, in the
middle of the peer step: 60 % of the plans have their 3 assessors, 30 % one or two, 10 % none;
about 2.25 assessments a plan, by random learners. Then --runs learners who still owe
assessments each ask for a plan (the service the page calls, committing as the page does),
timed with its statement count, beside two references in the same run: a bare
`SELECT … WHERE id = %s` of a plan by primary key through the ORM (the floor of a read) and one
plan's row rewritten by primary key and committed (the floor of a request that writes, as an
assignment must).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import drop_database, unique_database_name, use_throwaway_database

PER_PLAN = 3
BATCH = 5000


def _seed(learners: int, rng: random.Random) -> tuple[object, list[int]]:
    from django.utils import timezone

    from accounts.models import User
    from courses.models import Course
    from planner.capstone.peer_models import PeerAssessment, PeerPlan, PeerSettings
    from planner.models import CapstoneSubmission, CapstoneWorksheet

    now = timezone.now()
    course = Course.objects.create(slug="peer-bench", title="Peer bench")
    PeerSettings.objects.create(course=course, enabled=True, assessors_per_plan=PER_PLAN)
    users = User.objects.bulk_create(
        (User(email=f"l{i}@bench.invalid") for i in range(learners)), batch_size=BATCH
    )
    sheets = CapstoneWorksheet.objects.bulk_create(
        (CapstoneWorksheet(learner=u, course=course) for u in users), batch_size=BATCH
    )
    subs = CapstoneSubmission.objects.bulk_create(
        (
            CapstoneSubmission(worksheet=w, learner=u, course=course, version=1, submitted_at=now)
            for u, w in zip(users, sheets, strict=True)
        ),
        batch_size=BATCH,
    )
    assigned = [
        PER_PLAN if r < 0.6 else (rng.randint(1, 2) if r < 0.9 else 0)
        for r in (rng.random() for _ in subs)
    ]
    plans = PeerPlan.objects.bulk_create(
        (
            PeerPlan(
                submission=s,
                course=course,
                learner=s.learner,
                assigned=n,
                completed=n,
                created_at=now,
            )
            for s, n in zip(subs, assigned, strict=True)
        ),
        batch_size=BATCH,
    )
    owed = [PER_PLAN] * learners
    rows = []
    for plan, n in zip(plans, assigned, strict=True):
        taken: set[int] = set()
        for slot in range(1, n + 1):
            assessor = rng.randrange(learners)
            while users[assessor].pk == plan.learner_id or assessor in taken or not owed[assessor]:
                assessor = rng.randrange(learners)
            taken.add(assessor)
            owed[assessor] -= 1
            rows.append(
                PeerAssessment(
                    assessor=users[assessor],
                    course=course,
                    kind="peer",
                    plan=plan,
                    slot=slot,
                    assigned_at=now,
                    completed_at=now,
                )
            )
    PeerAssessment.objects.bulk_create(rows, batch_size=BATCH)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    still_owing = [users[i].pk for i in range(learners) if owed[i]]
    print(
        f"seeded {learners:,} learners, {len(plans):,} plans, {len(rows):,} assessments; "
        f"{len(still_owing):,} learners still owe assessments",
        flush=True,
    )
    return course, still_owing


def _control(sql: str) -> bool:
    return sql.split(" ", 1)[0] in {"BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK"}


def _percentiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=20, method="inclusive")
    return statistics.median(values), q[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100_000, choices=range(10, 1_000_001))
    parser.add_argument("--runs", type=int, default=300, choices=range(10, 10_001))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    name = unique_database_name("peer")
    use_throwaway_database(name)
    try:
        _run(args.learners, args.runs)
    finally:
        if not args.keep:
            drop_database(name)


def _run(learners: int, runs: int) -> None:
    from django.db import connection
    from django.db.models import F
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from accounts.models import User
    from planner.capstone.peer_assignment import peer_assign
    from planner.capstone.peer_models import PeerPlan

    rng = random.Random(41)
    course, owing = _seed(learners, rng)
    askers = list(User.objects.filter(pk__in=rng.sample(owing, min(runs, len(owing)))))
    plan_ids = list(PeerPlan.objects.values_list("pk", flat=True)[:runs])
    assign_ms: list[float] = []
    pk_ms: list[float] = []
    write_ms: list[float] = []
    queries: set[int] = set()
    for i, user in enumerate(askers):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            got = peer_assign(assessor=user, course=course, now=timezone.now())  # type: ignore[arg-type]
            assign_ms.append((time.perf_counter() - started) * 1000)
        # Statements, not the transaction's BEGIN, COMMIT and savepoints.
        queries.add(sum(not _control(q["sql"]) for q in captured.captured_queries))
        assert got is not None, "a learner who owes assessments got no plan"
        started = time.perf_counter()
        PeerPlan.objects.filter(pk=plan_ids[i % len(plan_ids)]).first()
        pk_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        PeerPlan.objects.filter(pk=plan_ids[i % len(plan_ids)]).update(assigned=F("assigned"))
        write_ms.append((time.perf_counter() - started) * 1000)
    a50, a95 = _percentiles(assign_ms)
    r50, r95 = _percentiles(pk_ms)
    w50, w95 = _percentiles(write_ms)
    print(
        f"peer_assign at {learners:,} learners over {len(assign_ms)} requests: "
        f"median {a50:.2f} ms, p95 {a95:.2f} ms, statements {sorted(queries)}"
    )
    print(f"reference, one plan by primary key (same run): median {r50:.2f} ms, p95 {r95:.2f} ms")
    print(
        f"reference, one plan's counter rewritten by primary key and committed (same run): "
        f"median {w50:.2f} ms, p95 {w95:.2f} ms"
    )
    print(f"ratio p95: {a95 / r95:.1f}x the primary-key read, {a95 / w95:.1f}x the one-row write")


if __name__ == "__main__":
    main()
