"""A throwaway cohort run through the peer step as the site runs it: real rows, the real
calibration, assignment and grading services, then rolled back. It tunes and proves the model.

Plans have hidden true levels; assessors are honest (their level is the truth plus normal noise
of 0.5 level, rounded), biased (the same, one level higher) or random (any level, uniformly).
"""

from __future__ import annotations

import random
import secrets
import statistics
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from courses.models import Course
from planner.capstone import peer_model
from planner.capstone.peer_assignment import (
    peer_assessment_submit,
    peer_assign,
)
from planner.capstone.peer_calibration import (
    calibration_example_next,
    calibration_submit,
)
from planner.capstone.peer_grading import (
    course_observations,
    peer_deadline_sweep,
    peer_plans_grade,
)
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    PeerPlan,
    PeerSettings,
)
from planner.capstone.peer_services import (
    LevelChoice,
    peer_plan_open,
)
from planner.models import (
    CapstoneSubmission,
    CapstoneWorksheet,
    Criterion,
    Level,
    Rubric,
)

CRITERIA = ("memory", "latency", "cost", "risks")
LEVELS = ("missing", "partial", "sound", "excellent")
# Hidden true levels drawn from this mix (a cohort mostly at "partial" and "sound").
TRUE_LEVEL_WEIGHTS = (1, 2, 3, 2)
HONEST_NOISE_SD = 0.5
CALIBRATION_EXAMPLES = 3


@dataclass(frozen=True)
class SimulationArgs:
    plans: int
    assessors_per_plan: int
    biased: float
    random: float
    seed: int


class _Rollback(Exception):
    pass


def _answer(rng: random.Random, kind: str, truth: int) -> int:
    top = len(LEVELS) - 1
    if kind == "random":
        return rng.randint(0, top)
    shift = 1 if kind == "biased" else 0
    return max(0, min(top, round(truth + shift + rng.gauss(0, HONEST_NOISE_SD))))


def _cohort(args: SimulationArgs, rng: random.Random, tag: str, now: datetime) -> dict[str, Any]:
    course = Course.objects.create(slug=f"peer-sim-{tag}", title=f"Peer simulation {tag}")
    PeerSettings.objects.create(
        course=course,
        enabled=True,
        assessors_per_plan=args.assessors_per_plan,
        calibration_attempts=3,
    )
    rubric = Rubric.objects.create(course=course, title="Simulation rubric")
    criteria: list[tuple[Criterion, list[Level]]] = []
    for i, key in enumerate(CRITERIA):
        criterion = Criterion.objects.create(rubric=rubric, key=key, title=key, position=i)
        levels = [
            Level.objects.create(criterion=criterion, key=k, title=k, points=j, position=j)
            for j, k in enumerate(LEVELS)
        ]
        criteria.append((criterion, levels))
    for e in range(CALIBRATION_EXAMPLES):
        example = CalibrationExample.objects.create(
            course=course, title=f"Example {e + 1}", plan="An example plan.", position=e
        )
        for criterion, levels in criteria:
            CalibrationStaffLevel.objects.create(
                example=example,
                criterion=criterion,
                level=levels[rng.randrange(len(levels))],
                why="The staff's reason.",
            )
    users = User.objects.bulk_create(
        User(email=f"peer-sim-{tag}-{i}@example.invalid", display_name=f"Learner {i}")
        for i in range(args.plans)
    )
    n_biased = round(args.plans * args.biased)
    n_random = round(args.plans * args.random)
    kinds = ["biased"] * n_biased + ["random"] * n_random
    kinds += ["honest"] * (args.plans - len(kinds))
    rng.shuffle(kinds)
    worksheets = CapstoneWorksheet.objects.bulk_create(
        CapstoneWorksheet(learner=u, course=course) for u in users
    )
    truth: dict[int, list[int]] = {}
    submissions = []
    for user, worksheet in zip(users, worksheets, strict=True):
        true_levels = rng.choices(
            list(range(len(LEVELS))), weights=TRUE_LEVEL_WEIGHTS, k=len(CRITERIA)
        )
        truth[user.pk] = true_levels
        # A plan whose memory reasoning is missing carries the automatic check's error.
        findings = (
            [{"code": "kv_overflow", "severity": "error", "message": "The KV cache does not fit."}]
            if true_levels[0] == 0
            else []
        )
        submissions.append(
            CapstoneSubmission(
                worksheet=worksheet,
                learner=user,
                course=course,
                version=1,
                submitted_at=now,
                check_result={"findings": findings},
            )
        )
    CapstoneSubmission.objects.bulk_create(submissions)
    return {"course": course, "users": users, "kinds": kinds, "truth": truth, "criteria": criteria}


def _choices(
    rng: random.Random, kind: str, truth: list[int], criteria: list[tuple[Criterion, list[Level]]]
) -> list[LevelChoice]:
    return [
        LevelChoice(criterion.pk, levels[_answer(rng, kind, t)].pk)
        for (criterion, levels), t in zip(criteria, truth, strict=True)
    ]


def _calibrate(cohort: dict[str, Any], rng: random.Random, now: datetime) -> None:
    course = cohort["course"]
    criteria = cohort["criteria"]
    staff = {
        (s.example_id, s.criterion_id): s.level
        for s in CalibrationStaffLevel.objects.filter(example__course=course)
    }
    for user, kind in zip(cohort["users"], cohort["kinds"], strict=True):
        attempt = 0
        while (example := calibration_example_next(learner=user, course=course)) is not None:
            attempt += 1
            truth = [levels.index(staff[(example.pk, c.pk)]) for c, levels in criteria]
            calibration_submit(
                learner=user,
                course=course,
                example_id=example.pk,
                attempt=attempt,
                choices=_choices(rng, kind, truth, criteria),
                now=now,
            )


def _assess(
    cohort: dict[str, Any], args: SimulationArgs, rng: random.Random, now: datetime
) -> list[float]:
    """Each learner asks for a plan and assesses it, in random order, round after round, as
    learners arriving at the page would. Returns each assignment's time in ms."""
    course = cohort["course"]
    timings = []
    learner_of_plan = dict(PeerPlan.objects.filter(course=course).values_list("pk", "learner_id"))
    order = list(zip(cohort["users"], cohort["kinds"], strict=True))
    for _round in range(args.assessors_per_plan):
        rng.shuffle(order)
        for user, kind in order:
            started = time.perf_counter()
            assessment = peer_assign(assessor=user, course=course, now=now)
            timings.append((time.perf_counter() - started) * 1000)
            if assessment is None or assessment.plan_id is None:
                continue
            truth = cohort["truth"][learner_of_plan[assessment.plan_id]]
            peer_assessment_submit(
                assessor=user,
                assessment_id=assessment.pk,
                choices=_choices(rng, kind, truth, cohort["criteria"]),
                comment="",
                now=now,
            )
    return timings


def _p95(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def _figures(cohort: dict[str, Any], timings: list[float]) -> dict[str, Any]:
    course = cohort["course"]
    plans = list(PeerPlan.objects.filter(course=course))
    data = course_observations(course_id=course.pk)
    medians = peer_model.median_grades(data.observations)
    position = {c.pk: i for i, (c, _levels) in enumerate(cohort["criteria"])}
    model_errors: list[int] = []
    median_errors: list[float] = []
    for plan in plans:
        truth = cohort["truth"][plan.learner_id]
        for criterion_id, grade in plan.result.get("criteria", {}).items():
            true_level = truth[position[int(criterion_id)]]
            model_errors.append(abs(grade["level"] - true_level))
            median = medians[(plan.pk, int(criterion_id))]
            median_errors.append(abs(round(median) - true_level))
    reasons = {"disagreement": 0, "check_error_passed": 0, "short_at_deadline": 0}
    for plan in plans:
        for flag in plan.result.get("flags", []):
            key = (
                "disagreement"
                if "disagree" in flag
                else "check_error_passed"
                if "automatic check" in flag
                else "short_at_deadline"
            )
            reasons[key] += 1
    graded = sum(p.state == PeerPlan.State.GRADED for p in plans)
    flagged = sum(p.state == PeerPlan.State.FLAGGED for p in plans)
    return {
        "plans": len(plans),
        "graded_by_peers": graded,
        "flagged_for_staff": flagged,
        "undecided": len(plans) - graded - flagged,
        "flags_by_reason": reasons,
        "criterion_grades": len(model_errors),
        "within_one_level_share": round(
            statistics.fmean(e <= 1 for e in model_errors) if model_errors else 0.0, 4
        ),
        "mae_levels_model": round(statistics.fmean(model_errors) if model_errors else 0.0, 4),
        "mae_levels_median": round(statistics.fmean(median_errors) if median_errors else 0.0, 4),
        "assignment_ms_p95": round(_p95(timings), 3),
        "assignments": len(timings),
    }


def peer_simulate(args: SimulationArgs) -> dict[str, Any]:
    """Build the cohort, calibrate, assign and assess, grade, flag the short at the deadline,
    measure; then roll every row back. Returns the figures."""
    rng = random.Random(args.seed)
    tag = secrets.token_hex(6)
    now = timezone.now()
    figures: dict[str, Any] = {}
    try:
        with transaction.atomic():
            cohort = _cohort(args, rng, tag, now)
            for submission in CapstoneSubmission.objects.filter(course=cohort["course"]).order_by(
                "pk"
            ):
                peer_plan_open(submission=submission, now=now, run_tag=tag)
            _calibrate(cohort, rng, now)
            timings = _assess(cohort, args, rng, now)
            peer_plans_grade(course=cohort["course"], now=now)
            PeerSettings.objects.filter(course=cohort["course"]).update(deadline=now)
            peer_deadline_sweep(course=cohort["course"], now=now + timedelta(seconds=1))
            figures = _figures(cohort, timings)
            raise _Rollback
    except _Rollback:
        pass
    return figures
