"""Writes for peer assessment: open a plan to peers, calibrate, assign, assess, grade and flag.

The grade model is planner/capstone/peer_model.py (PG1 of Piech et al. 2013); this module feeds
it the course's assessments and writes its grades and flags back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from courses.models import Course
from planner.capstone import peer_model
from planner.capstone.outbox import CapstoneEmail, capstone_email_promise
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    PeerAssessment,
    PeerPlan,
    PeerScore,
    PeerSettings,
)
from planner.models import CapstoneSubmission, Criterion, Level

COMMENT_MAX = 2000
# "A plan is waiting for your assessment" goes to one learner at most this often.
WAITING_EMAIL_EVERY = timedelta(days=1)
WAITING_EMAIL_BATCH = 500


class PeerStepRefused(Exception):
    """The learner cannot take this step now (the reason is the message)."""


@dataclass(frozen=True)
class LevelChoice:
    criterion_id: int
    level_id: int
    comment: str = ""


def peer_settings_for(*, course: Course) -> PeerSettings:
    settings, _created = PeerSettings.objects.get_or_create(course=course)
    return settings


def peer_settings_save(
    *,
    course: Course,
    enabled: bool,
    assessors_per_plan: int,
    calibration_attempts: int,
    deadline: datetime | None,
) -> PeerSettings:
    settings = peer_settings_for(course=course)
    settings.enabled = enabled
    settings.assessors_per_plan = assessors_per_plan
    settings.calibration_attempts = calibration_attempts
    settings.deadline = deadline
    settings.full_clean()
    settings.save()
    if enabled:
        _open_latest_plans(course=course, now=timezone.now())
    return settings


def _open_latest_plans(*, course: Course, now: datetime) -> None:
    """Open each learner's latest submitted version to peers (those submitted before the peer
    step was turned on)."""
    latest = (
        CapstoneSubmission.objects.filter(course=course)
        .exclude(Exists(PeerPlan.objects.filter(submission=OuterRef("pk"))))
        .order_by("learner_id", "-version")
        .distinct("learner_id")
        .values_list("pk", "learner_id")
    )
    PeerPlan.objects.bulk_create(
        (
            PeerPlan(submission_id=pk, course=course, learner_id=learner, created_at=now)
            for pk, learner in latest.iterator(chunk_size=2000)
        ),
        batch_size=2000,
        ignore_conflicts=True,
    )


def peer_plan_open(*, submission: CapstoneSubmission, now: datetime, run_tag: str = "") -> PeerPlan:
    """Open the submitted plan to peers (once per submission)."""
    plan, _created = PeerPlan.objects.get_or_create(
        submission=submission,
        defaults={
            "course_id": submission.course_id,
            "learner_id": submission.learner_id,
            "created_at": now,
            "run_tag": run_tag,
        },
    )
    return plan


def _levels_index(course_id: int) -> dict[int, tuple[Criterion, list[Level]]]:
    """Each criterion with its levels lowest first (the model's level index is the position
    in this list)."""
    criteria = Criterion.objects.filter(rubric__course_id=course_id).prefetch_related("levels")
    return {c.pk: (c, sorted(c.levels.all(), key=lambda lv: (lv.points, lv.pk))) for c in criteria}


def _checked_choices(
    *, course_id: int, choices: list[LevelChoice]
) -> list[tuple[Criterion, Level, str]]:
    """Every criterion of the course's rubric, each with one of its own levels."""
    index = _levels_index(course_id)
    given = {c.criterion_id: c for c in choices}
    if not index:
        raise ValidationError(_("This course has no rubric criteria to assess against."))
    out = []
    for criterion_id, (criterion, levels) in index.items():
        choice = given.get(criterion_id)
        level = next((lv for lv in levels if choice and lv.pk == choice.level_id), None)
        if choice is None or level is None:
            raise ValidationError(
                _("%(criterion)s: choose one of its levels.") % {"criterion": criterion},
                code="level_missing",
                params={"criterion_id": criterion_id},
            )
        if len(choice.comment) > COMMENT_MAX:
            raise ValidationError(
                _("%(criterion)s: the comment is longer than %(max)s characters.")
                % {"criterion": criterion, "max": COMMENT_MAX}
            )
        out.append((criterion, level, choice.comment.strip()))
    return out


# Calibration -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationFeedback:
    criterion: Criterion
    yours: Level
    staff: Level
    why: str
    within_one: bool


@dataclass(frozen=True)
class CalibrationState:
    attempts: int
    attempts_allowed: int
    passed: bool

    @property
    def done(self) -> bool:
        return self.passed or self.attempts >= self.attempts_allowed

    @property
    def failed(self) -> bool:
        return self.done and not self.passed


def calibration_state(*, learner: User, course: Course) -> CalibrationState:
    """Two queries: the settings and the learner's calibration attempts."""
    settings = peer_settings_for(course=course)
    attempts = list(
        PeerAssessment.objects.filter(
            assessor=learner, course=course, kind=PeerAssessment.Kind.CALIBRATION
        ).values_list("calibration_passed", flat=True)
    )
    return CalibrationState(
        attempts=len(attempts),
        attempts_allowed=settings.calibration_attempts,
        passed=any(attempts),
    )


def calibration_example_next(*, learner: User, course: Course) -> CalibrationExample | None:
    """The example for the learner's next attempt (examples in turn), None when done."""
    state = calibration_state(learner=learner, course=course)
    examples = list(CalibrationExample.objects.filter(course=course))
    if state.done or not examples:
        return None
    return examples[state.attempts % len(examples)]


def calibration_submit(
    *,
    learner: User,
    course: Course,
    example_id: int,
    choices: list[LevelChoice],
    now: datetime,
) -> list[CalibrationFeedback]:
    """Record one calibration attempt and return the staff level and why beside each of the
    learner's; the attempt passes when every criterion is within one level."""
    with transaction.atomic():
        expected = calibration_example_next(learner=learner, course=course)
        if expected is None:
            raise PeerStepRefused(_("Your calibration is finished."))
        if expected.pk != example_id:
            raise PeerStepRefused(_("That example is not your next one; reload the page."))
        checked = _checked_choices(course_id=course.pk, choices=choices)
        index = _levels_index(course.pk)
        staff = {
            s.criterion_id: s
            for s in CalibrationStaffLevel.objects.filter(example=expected).select_related("level")
        }
        feedback = []
        for criterion, level, _comment in checked:
            s = staff.get(criterion.pk)
            if s is None:
                continue
            levels = index[criterion.pk][1]
            gap = abs(levels.index(level) - levels.index(s.level))
            feedback.append(CalibrationFeedback(criterion, level, s.level, s.why, gap <= 1))
        passed = all(f.within_one for f in feedback)
        state = calibration_state(learner=learner, course=course)
        try:
            # Two tabs submitting the same attempt at once: the unique (assessor, course,
            # attempt) lets one in.
            with transaction.atomic():
                assessment = PeerAssessment.objects.create(
                    assessor=learner,
                    course=course,
                    kind=PeerAssessment.Kind.CALIBRATION,
                    example=expected,
                    attempt=state.attempts + 1,
                    calibration_passed=passed,
                    assigned_at=now,
                    completed_at=now,
                )
        except IntegrityError as exc:
            raise PeerStepRefused(_("That attempt is already recorded; reload the page.")) from exc
        PeerScore.objects.bulk_create(
            PeerScore(assessment=assessment, criterion=c, level=lv) for c, lv, _x in checked
        )
        return feedback


# Assignment ------------------------------------------------------------------------------


def peer_assign(*, assessor: User, course: Course, now: datetime) -> PeerAssessment | None:
    """The assessor's next plan to assess: their unfinished one, else the open plan with the
    fewest assessors (oldest first among equals), never their own, never one they assessed.
    None when they have assessed their N or no plan is left for them.

    Five statements however many learners: the assessor's own peer assessments in the course
    (at most N rows: the unfinished one and the count), the settings, the pick, the insert and
    the counter's update. The pick reads
    the (course, state, assigned, id) index and locks the row with SKIP LOCKED, so two
    assessors asking at once take different plans; the unique (plan, slot) refuses an N+1th
    assessor should anything else race.
    """
    mine = list(
        PeerAssessment.objects.filter(
            assessor=assessor, course=course, kind=PeerAssessment.Kind.PEER
        ).select_related("plan__submission")
    )
    current = next((a for a in mine if a.completed_at is None), None)
    if current is not None:
        return current
    settings = peer_settings_for(course=course)
    if len(mine) >= settings.assessors_per_plan:
        return None
    seen = PeerAssessment.objects.filter(assessor=assessor, plan=OuterRef("pk"))
    with transaction.atomic():
        plan = (
            PeerPlan.objects.select_for_update(skip_locked=True)
            .filter(
                course=course,
                state=PeerPlan.State.OPEN,
                assigned__lt=settings.assessors_per_plan,
            )
            .exclude(learner=assessor)
            .exclude(Exists(seen))
            .order_by("assigned", "id")
            .first()
        )
        if plan is None:
            return None
        try:
            with transaction.atomic():
                assessment = PeerAssessment.objects.create(
                    assessor=assessor,
                    course=course,
                    kind=PeerAssessment.Kind.PEER,
                    plan=plan,
                    slot=plan.assigned + 1,
                    assigned_at=now,
                )
        except IntegrityError:
            return None
        PeerPlan.objects.filter(pk=plan.pk).update(assigned=F("assigned") + 1)
        assessment.plan = plan
        return assessment


def _assessment_save(
    *, assessment: PeerAssessment, choices: list[LevelChoice], comment: str, now: datetime
) -> PeerAssessment:
    if len(comment) > COMMENT_MAX:
        raise ValidationError(_("The comment is longer than %(max)s characters.") % {"max": 2000})
    checked = _checked_choices(course_id=assessment.course_id, choices=choices)
    assessment.comment = comment.strip()
    assessment.completed_at = now
    assessment.save(update_fields=["comment", "completed_at"])
    PeerScore.objects.bulk_create(
        PeerScore(assessment=assessment, criterion=c, level=lv, comment=text)
        for c, lv, text in checked
    )
    return assessment


def peer_assessment_submit(
    *,
    assessor: User,
    assessment_id: int,
    choices: list[LevelChoice],
    comment: str,
    now: datetime,
) -> PeerAssessment:
    """Complete the assessor's assignment; the plan is graded once its N-th is in."""
    with transaction.atomic():
        assessment = (
            PeerAssessment.objects.select_for_update()
            .filter(
                pk=assessment_id,
                assessor=assessor,
                kind=PeerAssessment.Kind.PEER,
            )
            .first()
        )
        if assessment is None:
            raise PeerAssessment.DoesNotExist
        if assessment.completed_at is not None:
            raise PeerStepRefused(_("You have already assessed this plan."))
        _assessment_save(assessment=assessment, choices=choices, comment=comment, now=now)
        PeerPlan.objects.filter(pk=assessment.plan_id or 0).update(completed=F("completed") + 1)
        return assessment


def self_assessment_submit(
    *, learner: User, plan: PeerPlan, choices: list[LevelChoice], comment: str, now: datetime
) -> PeerAssessment:
    """The learner's optional assessment of their own plan (shown beside the peers'; not in
    the model, which a learner's own stake would bias)."""
    if plan.learner_id != learner.pk:
        raise PeerAssessment.DoesNotExist
    with transaction.atomic():
        try:
            with transaction.atomic():
                assessment = PeerAssessment.objects.create(
                    assessor=learner,
                    course_id=plan.course_id,
                    kind=PeerAssessment.Kind.SELF,
                    plan=plan,
                    assigned_at=now,
                )
        except IntegrityError as exc:
            raise PeerStepRefused(_("You have already assessed your own plan.")) from exc
        return _assessment_save(assessment=assessment, choices=choices, comment=comment, now=now)


# Grading ----------------------------------------------------------------------------------


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
    index = _levels_index(course_id)
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
    peers disagree by more than a level, or a check error every peer passed). Emails each
    learner graded by peers, once. Returns the plans decided."""
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
        if locked.state == PeerPlan.State.GRADED and not locked.run_tag:
            capstone_email_promise(
                kind=CapstoneEmail.Kind.PEER_GRADED, submission=plan.submission, now=now
            )


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


def peer_waiting_emails(*, course: Course, now: datetime) -> int:
    """Tell learners who still owe assessments (and have none open) that a plan waits for
    them, at most once a day each; at most WAITING_EMAIL_BATCH per run."""
    settings = peer_settings_for(course=course)
    if (
        not settings.enabled
        or not PeerPlan.objects.filter(
            course=course, state=PeerPlan.State.OPEN, assigned__lt=settings.assessors_per_plan
        ).exists()
    ):
        return 0
    recent = CapstoneEmail.objects.filter(
        submission__learner=OuterRef("learner"),
        submission__course=course,
        kind=CapstoneEmail.Kind.PEER_WAITING,
        created_at__gt=now - WAITING_EMAIL_EVERY,
    )
    owing = PeerAssessment.objects.filter(
        assessor=OuterRef("learner"), course=course, kind=PeerAssessment.Kind.PEER
    )
    candidates = (
        PeerPlan.objects.filter(course=course, run_tag="")
        .exclude(Exists(recent))
        .exclude(Exists(owing.filter(Q(completed_at__isnull=True))))
        .select_related("submission")
        .order_by("learner_id", "-created_at")
        .distinct("learner_id")
    )
    sent = 0
    for plan in candidates[: WAITING_EMAIL_BATCH * 2]:
        if sent >= WAITING_EMAIL_BATCH:
            break
        done = PeerAssessment.objects.filter(
            assessor_id=plan.learner_id, course=course, kind=PeerAssessment.Kind.PEER
        ).count()
        if done >= settings.assessors_per_plan:
            continue
        with transaction.atomic():
            # The learner's plan row serialises two sweeps: the second sees the first's row.
            PeerPlan.objects.select_for_update().get(pk=plan.pk)
            if CapstoneEmail.objects.filter(
                submission__learner_id=plan.learner_id,
                submission__course=course,
                kind=CapstoneEmail.Kind.PEER_WAITING,
                created_at__gt=now - WAITING_EMAIL_EVERY,
            ).exists():
                continue
            capstone_email_promise(
                kind=CapstoneEmail.Kind.PEER_WAITING, submission=plan.submission, now=now
            )
            sent += 1
    return sent


def peer_courses_run(*, now: datetime) -> int:
    """Each peer-enabled course: grade the ready plans, flag the late ones, send reminders.
    Returns the plans decided."""
    decided = 0
    for settings in PeerSettings.objects.filter(enabled=True).select_related("course"):
        decided += len(peer_plans_grade(course=settings.course, now=now))
        decided += peer_deadline_sweep(course=settings.course, now=now)
        peer_waiting_emails(course=settings.course, now=now)
    return decided
