"""Shared set-up for the peer assessment tests: a course with the peer step on and submitted
plans, and the level choices an assessor posts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.utils import timezone

from accounts.models import User
from courses.models import Course
from planner.capstone.peer_assignment import peer_assessment_submit, peer_assign
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    PeerAssessment,
    PeerPlan,
)
from planner.capstone.peer_services import (
    LevelChoice,
    peer_settings_save,
)
from planner.models import Criterion
from tests.factories import UserFactory
from tests.planner.factories import course_taught_by, submission_for


def peer_course(
    *, assessors_per_plan: int = 3, attempts: int = 2, deadline: datetime | None = None
) -> Course:
    course = course_taught_by()
    peer_settings_save(
        course=course,
        enabled=True,
        assessors_per_plan=assessors_per_plan,
        calibration_attempts=attempts,
        deadline=deadline,
    )
    return course


def learners_with_plans(course: Course, count: int) -> list[User]:
    learners = [UserFactory() for _ in range(count)]
    for learner in learners:
        submission_for(learner, course)
    return learners


def plan_of(learner: User, course: Course) -> PeerPlan:
    return PeerPlan.objects.get(learner=learner, course=course)


def choices(course: Course, level_key: str = "partial", comment: str = "") -> list[LevelChoice]:
    return [
        LevelChoice(c.pk, c.levels.get(key=level_key).pk, comment)
        for c in Criterion.objects.filter(rubric__course=course)
    ]


def calibration_example(course: Course, level_key: str = "partial") -> CalibrationExample:
    example = CalibrationExample.objects.create(
        course=course, title="A plan that fits on paper", plan="7B at fp16 on a 16 GB GPU."
    )
    for criterion in Criterion.objects.filter(rubric__course=course):
        CalibrationStaffLevel.objects.create(
            example=example,
            criterion=criterion,
            level=criterion.levels.get(key=level_key),
            why=f"The staff's reason for {criterion.key}.",
        )
    return example


def assess_all(
    course: Course,
    learners: list[User],
    level_for: Callable[[User, PeerAssessment], str] = lambda learner, a: "strong",
    rounds: int = 3,
) -> None:
    """Each learner takes and assesses plans, round after round, at the level `level_for` says."""
    now = timezone.now()
    for _round in range(rounds):
        for learner in learners:
            a = peer_assign(assessor=learner, course=course, now=now)
            if a is not None:
                peer_assessment_submit(
                    assessor=learner,
                    assessment_id=a.pk,
                    choices=choices(course, level_for(learner, a), comment="Clear memory maths."),
                    comment="Good plan.",
                    now=now,
                )


def split_plan(course: Course, learners: list[User]) -> PeerPlan:
    """Every plan assessed "partial" but the first learner's, whose first two assessors split
    by two levels ("missing", then "strong"): the plan the peers disagree on."""
    target = plan_of(learners[0], course)
    split: dict[int, str] = {}

    def level_for(learner: User, assessment: PeerAssessment) -> str:
        if assessment.plan_id != target.pk:
            return "partial"
        split[learner.pk] = "missing" if not split else "strong"
        return split[learner.pk]

    assess_all(course, learners, level_for)
    return target
