"""The peer step's settings, plans opened to peers and the rubric levels every step checks.

The steps: peer_calibration.py, peer_assignment.py, peer_grading.py (with the grade model,
peer_model.py), peer_reminders.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from courses.models import Course
from planner.capstone.peer_models import (
    PeerPlan,
    PeerSettings,
)
from planner.models import CapstoneSubmission, Criterion, Level

COMMENT_MAX = 2000


class PeerStepRefused(Exception):
    """The learner cannot take this step now (the reason is the message)."""


@dataclass(frozen=True)
class LevelChoice:
    criterion_id: int
    level_id: int
    comment: str = ""


def peer_settings_for(*, course: Course) -> PeerSettings:
    """The course's peer settings; the defaults (peer step off), unsaved, before any are set:
    reading them writes nothing."""
    return PeerSettings.objects.filter(course=course).first() or PeerSettings(course=course)


def peer_settings_save(
    *,
    course: Course,
    enabled: bool,
    assessors_per_plan: int,
    calibration_attempts: int,
    deadline: datetime | None,
) -> PeerSettings:
    settings, _created = PeerSettings.objects.get_or_create(course=course)
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


def levels_index(course_id: int) -> dict[int, tuple[Criterion, list[Level]]]:
    """Each criterion with its levels lowest first (the model's level index is the position
    in this list)."""
    criteria = Criterion.objects.filter(rubric__course_id=course_id).prefetch_related("levels")
    return {c.pk: (c, sorted(c.levels.all(), key=lambda lv: (lv.points, lv.pk))) for c in criteria}


def checked_choices(
    *, course_id: int, choices: list[LevelChoice]
) -> list[tuple[Criterion, Level, str]]:
    """Every criterion of the course's rubric, each with one of its own levels."""
    index = levels_index(course_id)
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
