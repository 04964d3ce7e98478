"""Reads for the peer step: a learner's place in it, their peer grade, an instructor's view of a
plan's peers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch, QuerySet

from accounts.models import User
from courses.models import Course
from planner.capstone.peer_models import (
    ExpiredPeerAssignment,
    PeerAssessment,
    PeerPlan,
    PeerScore,
    PeerSettings,
)
from planner.models import CapstoneSubmission, Criterion, Grade


def rubric_criteria(*, course: Course) -> list[Criterion]:
    """The course's criteria with their levels, lowest level first."""
    criteria = list(
        Criterion.objects.filter(rubric__course=course)
        .prefetch_related("levels")
        .order_by("position", "pk")
    )
    for criterion in criteria:
        criterion.sorted_levels = sorted(  # type: ignore[attr-defined]
            criterion.levels.all(), key=lambda lv: (lv.points, lv.pk)
        )
    return criteria


def latest_submission_for(*, learner: User, course: Course) -> CapstoneSubmission | None:
    return (
        CapstoneSubmission.objects.filter(learner=learner, course=course)
        .order_by("-version")
        .first()
    )


def peer_plan_for(*, submission: CapstoneSubmission) -> PeerPlan | None:
    return PeerPlan.objects.filter(submission=submission).first()


def open_assessment_for(*, assessor: User, course: Course) -> PeerAssessment | None:
    return PeerAssessment.objects.filter(
        assessor=assessor, course=course, kind=PeerAssessment.Kind.PEER, completed_at__isnull=True
    ).first()


def peer_assessments_done(*, assessor: User, course: Course) -> int:
    return PeerAssessment.objects.filter(
        assessor=assessor,
        course=course,
        kind=PeerAssessment.Kind.PEER,
        completed_at__isnull=False,
    ).count()


def self_assessment_for(*, plan: PeerPlan) -> PeerAssessment | None:
    return (
        PeerAssessment.objects.filter(plan=plan, kind=PeerAssessment.Kind.SELF)
        .prefetch_related("scores__level", "scores__criterion")
        .first()
    )


def assessment_for_assessor(*, assessor: User, assessment_id: int) -> QuerySet[PeerAssessment]:
    """The assessor's own peer assessment (another's id is a 404)."""
    return PeerAssessment.objects.filter(
        pk=assessment_id, assessor=assessor, kind=PeerAssessment.Kind.PEER
    ).select_related("plan__submission", "course")


@dataclass
class PeerCriterionRow:
    criterion: Criterion
    level_title: str
    level_index: int
    levels: int
    confidence: str
    sd: float
    comments: list[str] = field(default_factory=list)
    self_level: str = ""


def peer_grade_rows(*, plan: PeerPlan) -> list[PeerCriterionRow]:
    """Each criterion's peer grade, confidence and the peers' comments (anonymous), beside the
    learner's own level when they assessed themselves. Three queries."""
    criteria = rubric_criteria(course=plan.course)
    result: dict[str, Any] = plan.result.get("criteria", {})
    comments: dict[int, list[str]] = {}
    self_levels: dict[int, str] = {}
    scores = PeerScore.objects.filter(
        assessment__plan=plan, assessment__completed_at__isnull=False
    ).select_related("assessment", "level")
    for score in scores:
        if score.assessment.kind == PeerAssessment.Kind.SELF:
            self_levels[score.criterion_id] = score.level.title
        elif score.comment:
            comments.setdefault(score.criterion_id, []).append(score.comment)
    rows = []
    for criterion in criteria:
        grade = result.get(str(criterion.pk))
        levels = criterion.sorted_levels  # type: ignore[attr-defined]
        if grade is None or grade["level"] >= len(levels):
            continue
        rows.append(
            PeerCriterionRow(
                criterion=criterion,
                level_title=levels[grade["level"]].title,
                level_index=grade["level"] + 1,
                levels=len(levels),
                confidence=grade["confidence"],
                sd=grade["sd"],
                comments=comments.get(criterion.pk, []),
                self_level=self_levels.get(criterion.pk, ""),
            )
        )
    return rows


def peer_overall_comments(*, plan: PeerPlan) -> list[str]:
    return [
        c
        for c in PeerAssessment.objects.filter(
            plan=plan, kind=PeerAssessment.Kind.PEER, completed_at__isnull=False
        ).values_list("comment", flat=True)
        if c
    ]


def released_staff_grade(*, submission: CapstoneSubmission) -> Grade | None:
    """An instructor's released grade (the peers' own, in the gradebook too, is not one)."""
    return Grade.objects.filter(
        submission=submission, status=Grade.Status.RELEASED, origin=Grade.Origin.INSTRUCTOR
    ).first()


@dataclass
class AssessorRow:
    name: str
    email: str
    bias: float
    reliability: float
    down_weighted: bool
    why: str
    levels: list[str]


def peer_panel_for(*, submission: CapstoneSubmission) -> dict[str, Any] | None:
    """For the instructor's grading page: the plan's peer state, flags, each assessor's levels
    with their estimated bias and whether the model down-weighted them."""
    plan = (
        PeerPlan.objects.filter(submission=submission)
        .prefetch_related(
            Prefetch(
                "assessments",
                queryset=PeerAssessment.objects.filter(
                    kind=PeerAssessment.Kind.PEER, completed_at__isnull=False
                )
                .select_related("assessor")
                .prefetch_related("scores__level"),
            )
        )
        .first()
    )
    if plan is None:
        return None
    estimates: dict[str, Any] = plan.result.get("assessors", {})
    rows = []
    for assessment in plan.assessments.all():
        estimate = estimates.get(str(assessment.assessor_id), {})
        rows.append(
            AssessorRow(
                name=assessment.assessor.name,
                email=assessment.assessor.email,
                bias=float(estimate.get("bias", 0.0)),
                reliability=float(estimate.get("reliability", 0.0)),
                down_weighted=bool(estimate.get("down_weighted", False)),
                why=str(estimate.get("why", "")),
                levels=[
                    f"{s.level.title}"
                    for s in sorted(assessment.scores.all(), key=lambda s: s.criterion_id)
                ],
            )
        )
    return {
        "plan": plan,
        "flags": plan.result.get("flags", []),
        "assessors": rows,
        "rows": peer_grade_rows(plan=plan) if plan.result.get("criteria") else [],
    }


def peer_settings_of(*, course: Course) -> PeerSettings | None:
    return PeerSettings.objects.filter(course=course).first()


def expired_assignment_for(*, assessor: User, assessment_id: int) -> ExpiredPeerAssignment | None:
    """The assessor's own assignment given back after its lease (another's id: None)."""
    return (
        ExpiredPeerAssignment.objects.filter(assessment_id=assessment_id, assessor=assessor)
        .select_related("course")
        .first()
    )
