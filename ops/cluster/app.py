"""The cluster run's steps that need Django, run on the driver node against the cluster's
database with the nodes' environment:

    python -m ops.cluster.app seed --learners 10 --digests 300 --submissions 40 --out seed.json
    python -m ops.cluster.app recover --ahead 660

`seed` imports the real course and writes the run's people: learners with cards due (and a
signed-in session each, made as a sign-in makes it), instructors with a password, learners
whose cards fall due later (the digest scan's work) and whose capstone plans wait for a grade.
`recover` runs the outbox sweeps as of `--ahead` seconds from now: what beat's sweep would do
once the rows a killed worker left `sending` or unsent have gone stale (10 minutes), without
waiting 10 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

COURSE = "content/gpus-tpus-ai-hardware"
LEARNER = "cluster-learner{}@example.com"
DIGEST_LEARNER = "cluster-digest{}@example.com"
INSTRUCTOR = "cluster-instructor{}@example.com"
INSTRUCTORS = 2
CARDS_PER_LEARNER = 30
CARDS_PER_DIGEST_LEARNER = 2
# A plan that passes the capstone's submit checks: the course's baseline (24 GB GPU, 14 GB
# weights, 3 GB overhead, 0.6 GB KV per user -> 11 users).
PLAN: dict[str, Any] = {
    "feature": "Live lesson chat",
    "user_problem": "Learners ask questions about a lesson and expect an answer within 2 s.",
    "workload_kind": "interactive_serving",
    "model_name": "7B instruct",
    "framework": "PyTorch + vLLM",
    "precision": "int8",
    "latency_target": "first token under 2 s, p95",
    "batch_window": "none (interactive)",
    "data_source": "lesson Markdown from the course repository",
    "autoscaling": "one replica per 10 active users, scale on queue depth",
    "budget": "$900 a month",
    "recommendation": "gpu",
    "recommendation_reasons": "A 7B model at int8 fits one 24 GB GPU with room for 10 users.",
    "gpu_memory_gb": 24,
    "model_gb": 14,
    "params_billion": 14,
    "overhead_gb": 3,
    "kv_per_user_gb": 0.6,
    "context_tokens": 8000,
    "batch_size": 1,
    "concurrency": 10,
    "claimed_max_users": 11,
}


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _sessions(user_ids: list[int]) -> dict[int, str]:
    """A signed-in session per user, made by django.contrib.auth.login as a sign-in makes it."""
    from django.conf import settings
    from django.contrib.auth import login
    from django.test import RequestFactory

    from accounts.models import User

    store = __import__(settings.SESSION_ENGINE, fromlist=["SessionStore"]).SessionStore
    keys: dict[int, str] = {}
    for user in User.objects.filter(pk__in=user_ids):
        request = RequestFactory().get("/")
        request.session = store()
        login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
        request.session.save()
        keys[user.pk] = str(request.session.session_key)
    return keys


def seed(*, learners: int, digests: int, submissions: int, password: str) -> dict[str, Any]:
    from django.conf import settings
    from django.core.management import call_command
    from django.utils import timezone

    from accounts.models import User
    from accounts.services import user_create_verified
    from courses.models import Course, Enrollment
    from planner.capstone.outbox import CapstoneEmail
    from planner.capstone.services import worksheet_autosave, worksheet_submit
    from planner.models import CapstoneSubmission, CapstoneWorksheet, Grade
    from quizzes.models import QuizItem, RecallSchedule, ReviewLog
    from reminders.models import ReminderDigest

    call_command("import_course", COURSE, verbosity=0)
    course = Course.objects.order_by("id").first()
    assert course is not None, f"{COURSE} imported no course"
    now = timezone.now()
    rng = random.Random(39)
    instructors = []
    for n in range(INSTRUCTORS):
        email = INSTRUCTOR.format(n)
        user = user_create_verified(email=email, password=password, instructor=True)
        Enrollment.objects.create(course=course, user=user, role=Enrollment.Role.INSTRUCTOR)
        instructors.append(email)
    # Learners who review now; their day and reminder hour as the defaults have them.
    User.objects.bulk_create(
        User(email=LEARNER.format(n), password="!", time_zone="UTC") for n in range(learners)
    )
    # Learners whose cards fall due when the run says so (a reminder at the start of a UTC day).
    User.objects.bulk_create(
        User(
            email=DIGEST_LEARNER.format(n),
            password="!",
            time_zone="UTC",
            day_start_hour=0,
            reminder_hour=0,
        )
        for n in range(digests)
    )
    reviewers = list(User.objects.filter(email__startswith="cluster-learner").order_by("id"))
    later = list(User.objects.filter(email__startswith="cluster-digest").order_by("id"))
    Enrollment.objects.bulk_create(
        Enrollment(course=course, user=u, role=Enrollment.Role.LEARNER) for u in reviewers + later
    )
    items = list(QuizItem.objects.filter(lesson__module__course=course).order_by("id"))

    def cards(user: User, count: int, due: Any) -> list[RecallSchedule]:
        return [
            RecallSchedule(
                learner=user,
                item=item,
                course=course,
                state=RecallSchedule.State.REVIEW,
                stability=rng.uniform(2, 30),
                difficulty=rng.uniform(3, 8),
                due=due,
                last_review=now - timedelta(days=3),
                reps=3,
                lapses=0,
                card_token=uuid.uuid4(),
            )
            for item in rng.sample(items, min(count, len(items)))
        ]

    RecallSchedule.objects.bulk_create(
        [
            card
            for user in reviewers
            for card in cards(user, CARDS_PER_LEARNER, now - timedelta(hours=rng.uniform(1, 48)))
        ]
        + [
            card
            for user in later
            for card in cards(user, CARDS_PER_DIGEST_LEARNER, now + timedelta(days=1))
        ]
    )
    submission_ids = []
    for user in later[:submissions]:
        worksheet = CapstoneWorksheet.objects.create(learner=user, course=course)
        worksheet_autosave(worksheet=worksheet, data=PLAN)
        submission_ids.append(worksheet_submit(worksheet=worksheet, now=now).pk)
    sessions = _sessions([u.pk for u in reviewers])
    return {
        "session_cookie": settings.SESSION_COOKIE_NAME,
        "learners": [{"email": u.email, "session": sessions[u.pk]} for u in reviewers],
        "instructors": instructors,
        "submissions": submission_ids,
        "digest_learner_ids": [u.pk for u in later],
        "digest_learners": [u.email for u in later],
        "tables": {
            "user": User._meta.db_table,
            "schedule": RecallSchedule._meta.db_table,
            "log": ReviewLog._meta.db_table,
            "digest": ReminderDigest._meta.db_table,
            "email": CapstoneEmail._meta.db_table,
            "grade": Grade._meta.db_table,
            "submission": CapstoneSubmission._meta.db_table,
        },
        "values": {
            "sent": ReminderDigest.Status.SENT.value,
            "sending": ReminderDigest.Status.SENDING.value,
            "released": Grade.Status.RELEASED.value,
            "grade_released": CapstoneEmail.Kind.GRADE_RELEASED.value,
        },
    }


def recover(*, ahead: float) -> dict[str, int]:
    from django.utils import timezone

    from planner.capstone.outbox import capstone_emails_sweep
    from reminders.scan import digests_sweep

    later = timezone.now() + timedelta(seconds=ahead)
    digests = digests_sweep(now=later)
    emails = capstone_emails_sweep(now=later)
    return {"digests": digests.total, "grade_emails": len(emails)}


def _bounded(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        if len(text) > 6 or not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"a whole number from {low} to {high}")
        return int(text)

    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.cluster.app")
    sub = parser.add_subparsers(dest="step", required=True)
    seeding = sub.add_parser("seed")
    seeding.add_argument("--learners", type=_bounded(1, 100), required=True)
    seeding.add_argument("--digests", type=_bounded(1, 5000), required=True)
    seeding.add_argument("--submissions", type=_bounded(1, 1000), required=True)
    seeding.add_argument("--out", type=Path, required=True)
    recovering = sub.add_parser("recover")
    recovering.add_argument("--ahead", type=_bounded(0, 86_400), required=True)
    args = parser.parse_args(argv)
    _setup()
    if args.step == "seed":
        if args.submissions > args.digests:
            parser.error("--submissions: at most one plan per digest learner")
        password = os.environ.get("CLUSTER_PASSWORD", "")
        if not password:
            parser.error("CLUSTER_PASSWORD: the instructors' password, from the environment")
        result = seed(
            learners=args.learners,
            digests=args.digests,
            submissions=args.submissions,
            password=password,
        )
        args.out.write_text(json.dumps(result))
    else:
        json.dump(recover(ahead=args.ahead), sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
