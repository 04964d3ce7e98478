"""Writes and reads for calibration: a learner scores example plans until within one level of the
staff on every criterion, or the course's attempts run out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from accounts.models import User
from courses.models import Course
from planner.capstone.peer_models import (
    CalibrationExample,
    CalibrationStaffLevel,
    PeerAssessment,
    PeerScore,
)
from planner.capstone.peer_services import (
    LevelChoice,
    PeerStepRefused,
    checked_choices,
    levels_index,
    peer_settings_for,
)
from planner.models import Criterion, Level


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
    attempt: int,
    choices: list[LevelChoice],
    now: datetime,
) -> list[CalibrationFeedback]:
    """Record the learner's attempt number `attempt` (the one the page showed) and return the
    staff level and why beside each of theirs; it passes when every criterion is within one
    level. A form sent twice (a double click, two tabs) is refused the second time."""
    with transaction.atomic():
        expected = calibration_example_next(learner=learner, course=course)
        if expected is None:
            raise PeerStepRefused(_("Your calibration is finished."))
        if attempt != calibration_state(learner=learner, course=course).attempts + 1:
            raise PeerStepRefused(_("That attempt is already recorded; reload the page."))
        if expected.pk != example_id:
            raise PeerStepRefused(_("That example is not your next one; reload the page."))
        checked = checked_choices(course_id=course.pk, choices=choices)
        index = levels_index(course.pk)
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
        try:
            # Two tabs submitting the same attempt at once: the unique (assessor, course,
            # attempt) lets one in.
            with transaction.atomic():
                assessment = PeerAssessment.objects.create(
                    assessor=learner,
                    course=course,
                    kind=PeerAssessment.Kind.CALIBRATION,
                    example=expected,
                    attempt=attempt,
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
