"""Grading by peers: the course's assessments fitted by the grade model (planner/capstone/
peer_model.py, PG1 of Piech et al. 2013), each ready plan graded or flagged for staff with why,
plans short of assessors at the deadline flagged."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils.translation import gettext as _

from courses.models import Course
from planner.capstone import peer_model
from planner.capstone.peer_assignment import peer_assignments_expire
from planner.capstone.peer_gradebook import peer_grade_record
from planner.capstone.peer_models import (
    CalibrationStaffLevel,
    PeerAssessment,
    PeerPlan,
    PeerScore,
    PeerSettings,
)
from planner.capstone.peer_reminders import peer_waiting_emails
from planner.capstone.peer_services import (
    levels_index,
    peer_settings_for,
)
from planner.models import CapstoneSubmission, Criterion


@dataclass(frozen=True)
class CourseObservations:
    observations: list[peer_model.Observation]
    calibration: list[peer_model.CalibrationObservation]
    failed_calibration: frozenset[int]
    top_level: dict[int, int]
    level_ids: dict[int, list[int]]  # criterion -> level ids, lowest first


def course_observations(*, course_id: int) -> CourseObservations:
    """Every completed peer and calibration level of the course, as the model's observations
    (three queries, streamed)."""
    index = levels_index(course_id)
    position = {lv.pk: i for _c, levels in index.values() for i, lv in enumerate(levels)}
    staff = {
        (s["example_id"], s["criterion_id"]): position[s["level_id"]]
        for s in CalibrationStaffLevel.objects.filter(example__course_id=course_id).values(
            "example_id", "criterion_id", "level_id"
        )
    }
    observations: list[peer_model.Observation] = []
    calibration: list[peer_model.CalibrationObservation] = []
    attempts: dict[int, list[bool]] = {}
    rows = (
        PeerScore.objects.filter(
            assessment__course_id=course_id,
            assessment__completed_at__isnull=False,
            assessment__kind__in=[PeerAssessment.Kind.PEER, PeerAssessment.Kind.CALIBRATION],
        )
        .values_list(
            "assessment__assessor_id",
            "assessment__kind",
            "assessment__plan_id",
            "assessment__example_id",
            "assessment__calibration_passed",
            "assessment_id",
            "criterion_id",
            "level_id",
        )
        .iterator(chunk_size=5000)
    )
    seen_attempts: set[int] = set()
    for assessor, kind, plan, example, outcome, assessment, criterion, level in rows:
        if kind == PeerAssessment.Kind.PEER:
            observations.append(peer_model.Observation(assessor, plan, criterion, position[level]))
        elif (example, criterion) in staff:
            calibration.append(
                peer_model.CalibrationObservation(
                    assessor, criterion, position[level], staff[(example, criterion)]
                )
            )
            if assessment not in seen_attempts:
                seen_attempts.add(assessment)
                attempts.setdefault(assessor, []).append(bool(outcome))
    allowed = peer_settings_for(course=Course.objects.get(pk=course_id)).calibration_attempts
    failed = frozenset(
        a for a, outcomes in attempts.items() if not any(outcomes) and len(outcomes) >= allowed
    )
    return CourseObservations(
        observations=observations,
        calibration=calibration,
        failed_calibration=failed,
        top_level={c: len(levels) - 1 for c, (_x, levels) in index.items()},
        level_ids={c: [lv.pk for lv in levels] for c, (_x, levels) in index.items()},
    )


def _check_errors(submission: CapstoneSubmission) -> list[str]:
    findings = (submission.check_result or {}).get("findings") or []
    return [str(f.get("message", "")) for f in findings if f.get("severity") == "error"]


def peer_plans_grade(*, course: Course, now: datetime) -> list[int]:
    """Fit the model over the course's assessments and grade each open plan with its N peer
    assessments: graded by peers, or flagged for staff with why (a criterion where trusted
    peers disagree by more than a level, a check error every peer passed, a criterion no peer
    levelled). A plan graded by peers gets its grade in the gradebook, released, and its
    learner one email (peer_gradebook.py). Returns the plans decided."""
    settings = peer_settings_for(course=course)
    ready = PeerPlan.objects.filter(
        course=course, state=PeerPlan.State.OPEN, completed__gte=settings.assessors_per_plan
    ).select_related("submission__course", "submission__learner")
    if not ready.exists():
        return []
    data = course_observations(course_id=course.pk)
    fit = peer_model.peer_fit(
        data.observations,
        data.calibration,
        top_level=data.top_level,
        failed_calibration=data.failed_calibration,
    )
    spread: dict[int, list[tuple[int, float]]] = {}
    for (p, c), gap in sorted(peer_model.disagreements(data.observations, fit).items()):
        spread.setdefault(p, []).append((c, gap))
    grades: dict[int, list[tuple[int, peer_model.CriterionGrade]]] = {}
    for (p, c), g in fit.grades.items():
        grades.setdefault(p, []).append((c, g))
    by_plan: dict[int, list[peer_model.Observation]] = {}
    for o in data.observations:
        by_plan.setdefault(o.plan, []).append(o)
    decided = []
    criteria = {c.pk: c for c in Criterion.objects.filter(rubric__course=course)}
    for plan in ready.iterator(chunk_size=500):
        observations = by_plan.get(plan.pk, [])
        flags = [
            _("Peers disagree by %(spread)s levels on %(criterion)s.")
            % {"spread": int(gap), "criterion": criteria[c]}
            for c, gap in spread.get(plan.pk, [])
            if c in criteria
        ]
        errors = _check_errors(plan.submission)
        if errors and all(o.level > 0 for o in observations):
            flags.append(
                _("The automatic check found an error every peer passed: %(error)s")
                % {"error": errors[0]}
            )
        graded = {c for c, _g in grades.get(plan.pk, [])}
        unscored = [str(criteria[c]) for c in criteria if c not in graded]
        if unscored:  # a criterion added to the rubric after the peers assessed
            flags.append(_("No peer levels for %(criteria)s.") % {"criteria": ", ".join(unscored)})
        plan_assessors = {o.assessor for o in observations}
        result: dict[str, object] = {
            "flags": flags,
            "criteria": {
                str(c): {
                    "level_id": data.level_ids[c][g.level],
                    "level": g.level,
                    "estimate": round(g.estimate, 3),
                    "sd": round(g.sd, 3),
                    "confidence": g.confidence,
                }
                for c, g in grades.get(plan.pk, [])
                if c in data.level_ids
            },
            "assessors": {
                str(a): {
                    "bias": round(fit.assessors[a].bias, 3),
                    "reliability": round(fit.assessors[a].reliability, 3),
                    "down_weighted": fit.assessors[a].down_weighted,
                    "why": fit.assessors[a].why,
                }
                for a in plan_assessors
            },
        }
        _plan_decide(plan=plan, result=result, now=now)
        decided.append(plan.pk)
    return decided


def _plan_decide(*, plan: PeerPlan, result: dict[str, object], now: datetime) -> None:
    with transaction.atomic():
        locked = PeerPlan.objects.select_for_update().get(pk=plan.pk)
        if locked.state != PeerPlan.State.OPEN:
            return
        locked.state = PeerPlan.State.FLAGGED if result["flags"] else PeerPlan.State.GRADED
        locked.result = result
        locked.graded_at = now
        locked.save(update_fields=["state", "result", "graded_at"])
        peer_grade_record(plan=locked, now=now)


def peer_deadline_sweep(*, course: Course, now: datetime) -> int:
    """Past the course's peer deadline, plans still short of N assessments go to the
    instructors' grading queue, flagged with why. Returns how many."""
    settings = peer_settings_for(course=course)
    if settings.deadline is None or now < settings.deadline:
        return 0
    why = _("Only %(done)s of %(needed)s peer assessments by the deadline.")
    count = 0
    short = PeerPlan.objects.filter(
        course=course, state=PeerPlan.State.OPEN, completed__lt=settings.assessors_per_plan
    )
    for plan in short.iterator(chunk_size=500):
        updated = PeerPlan.objects.filter(pk=plan.pk, state=PeerPlan.State.OPEN).update(
            state=PeerPlan.State.FLAGGED,
            graded_at=now,
            result={
                **plan.result,
                "flags": [why % {"done": plan.completed, "needed": settings.assessors_per_plan}],
            },
        )
        count += updated
    return count


def peer_courses_run(*, now: datetime) -> int:
    """Each peer-enabled course: grade the ready plans, flag the late ones, send reminders.
    Returns the plans decided."""
    decided = 0
    for settings in PeerSettings.objects.filter(enabled=True).select_related("course"):
        decided += len(peer_plans_grade(course=settings.course, now=now))
        peer_assignments_expire(course=settings.course, now=now)
        decided += peer_deadline_sweep(course=settings.course, now=now)
        peer_waiting_emails(course=settings.course, now=now)
    return decided
