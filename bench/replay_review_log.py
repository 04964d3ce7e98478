"""Replay a real learner's review log through review_grade and compare every step with fsrs.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything \
        .venv/bin/python bench/replay_review_log.py [--review-log PATH] [--limit N]

The log (card_id, review_rating, review_time, review_duration) is the py-fsrs project's test
data, kept outside the repository (see ../shared/data/fsrs-review-log/README.md). Each card
becomes a quiz item; its first review goes through schedule_start, the rest through
review_grade, in time order. After each grade the stored state is compared with
fsrs.Scheduler.review_card run directly on the same ratings and times (its fuzz seeded per
(learner, item, reps), as the review service seeds it). Prints the mismatches
(expected: 0) and the throughput. Runs in a throwaway database `bench_quizzes_replay`.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import drop_database, skip_unless_postgres, use_throwaway_database

DB_NAME = "bench_quizzes_replay"
DEFAULT_LOG = (
    Path(__file__).resolve().parent.parent.parent / "shared/data/fsrs-review-log/review_logs.csv"
)
FIELDS = ("state", "step", "stability", "difficulty", "due", "last_review")


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--review-log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--limit", type=int, default=0, help="replay only the first N reviews")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway database")
    args = parser.parse_args()
    skip_unless_postgres()
    if not args.review_log.exists():
        sys.exit(f"No review log at {args.review_log}: pass --review-log PATH")
    with args.review_log.open(newline="") as fh:
        rows = [
            (
                int(r["card_id"]),
                int(r["review_rating"]),
                datetime.fromisoformat(r["review_time"]),
                int(r["review_duration"]) if r["review_duration"] else None,
            )
            for r in csv.DictReader(fh)
        ]
    rows.sort(key=lambda r: r[2])
    if args.limit:
        rows = rows[: args.limit]
    use_throwaway_database(DB_NAME)
    try:
        return replay(rows)
    finally:
        if not args.keep:
            drop_database(DB_NAME)


def replay(rows: list[tuple[int, int, datetime, int | None]]) -> int:
    import fsrs

    from accounts.models import User
    from courses.models import Course, Enrollment, Lesson, Module
    from quizzes.models import QuizItem, RecallSchedule, ReviewLog
    from quizzes.services import fsrs_adapter
    from quizzes.services.review import review_grade, schedule_start

    course = Course.objects.create(
        slug="replay",
        title="Replay",
        desired_retention=0.9,
        learning_steps_minutes=[1, 10],
        relearning_steps_minutes=[10],
        maximum_interval_days=36500,
    )
    module = Module.objects.create(course=course, slug="m", title="Module")
    lesson = Lesson.objects.create(
        module=module, slug="l", title="Lesson", objective="o", body_markdown="b"
    )
    learner = User.objects.create_user(email="replay@example.com", password=None)
    Enrollment.objects.create(course=course, user=learner)
    card_ids = sorted({r[0] for r in rows})
    QuizItem.objects.bulk_create(
        QuizItem(
            lesson=lesson,
            key=f"card-{cid}",
            kind=QuizItem.Kind.FREE_RECALL,
            position=i,
            prompt=f"Card {cid}",
        )
        for i, cid in enumerate(card_ids)
    )
    items = {int(i.key.removeprefix("card-")): i for i in QuizItem.objects.filter(lesson=lesson)}

    def scheduler(cid: int, reps: int) -> fsrs.Scheduler:
        # fsrs itself, its fuzz seeded per (learner, item, reps) as the review service seeds it.
        return fsrs_adapter.SeededScheduler(
            desired_retention=0.9,
            learning_steps=(timedelta(minutes=1), timedelta(minutes=10)),
            relearning_steps=(timedelta(minutes=10),),
            maximum_interval=36500,
            enable_fuzzing=True,
            seed=fsrs_adapter.fuzz_seed(learner_id=learner.pk, item_id=items[cid].pk, reps=reps),
        )

    reps: dict[int, int] = {}
    direct: dict[int, fsrs.Card] = {}
    schedule_ids: dict[int, int] = {}
    tokens: dict[int, uuid.UUID] = {}
    mismatches: list[str] = []
    t0 = time.perf_counter()
    for n, (cid, rating, when, duration) in enumerate(rows, 1):
        card = direct.get(cid) or fsrs.Card(card_id=cid, due=when)
        direct[cid], _ = scheduler(cid, reps.get(cid, 0)).review_card(
            card, fsrs.Rating(rating), review_datetime=when
        )
        reps[cid] = reps.get(cid, 0) + 1
        if cid not in schedule_ids:
            log = schedule_start(
                learner=learner,
                item=items[cid],
                card_token=uuid.uuid4(),
                rating=rating,
                now=when,
                duration_ms=duration,
                source="review",
            ).log
            schedule_ids[cid] = log.schedule_id
        else:
            log = review_grade(
                learner=learner,
                schedule_id=schedule_ids[cid],
                card_token=tokens[cid],
                rating=rating,
                now=when,
                duration_ms=duration,
            )
        tokens[cid] = log.schedule.card_token
        expected = direct[cid].to_dict()
        for f in FIELDS:
            got, want = log.state_after[f], expected[f]  # type: ignore[literal-required]
            if isinstance(want, float):
                same = got is not None and abs(got - want) <= 1e-9 * max(1.0, abs(want))
            else:
                same = got == want
            if not same:
                mismatches.append(f"review {n} card {cid} {f}: platform {got!r} fsrs {want!r}")
    elapsed = time.perf_counter() - t0

    # And the rows as stored, once more, against fsrs.
    for s in RecallSchedule.objects.filter(learner=learner).select_related("item"):
        card = direct[int(s.item.key.removeprefix("card-"))]
        stored = (s.state, s.step, s.stability, s.difficulty, s.due, s.last_review)
        want = (
            card.state.value,
            card.step,
            card.stability,
            card.difficulty,
            card.due,
            card.last_review,
        )
        for f, a, b in zip(FIELDS, stored, want, strict=True):
            same = (
                abs(a - b) <= 1e-9 * max(1.0, abs(b))
                if isinstance(b, float) and a is not None
                else a == b
            )
            if not same:
                mismatches.append(f"stored card {s.item.key} {f}: platform {a!r} fsrs {b!r}")
    logs = ReviewLog.objects.filter(learner=learner).count()
    print(
        f"replayed {len(rows):,} reviews of {len(card_ids):,} cards "
        f"({rows[0][2]:%Y-%m-%d} to {rows[-1][2]:%Y-%m-%d}); {logs:,} review logs written"
    )
    print(f"mismatches against fsrs.Scheduler.review_card: {len(mismatches)}")
    for line in mismatches[:20]:
        print("  " + line)
    print(
        f"throughput: {len(rows) / elapsed:,.0f} grades/s ({elapsed * 1000 / len(rows):.2f} ms per grade, "
        "each the schedule read, then its compare-and-swap write with the log)"
    )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
