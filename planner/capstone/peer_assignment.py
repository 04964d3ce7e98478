"""Assignment and assessing: each learner gets the open plan with the fewest assessors (never their
own, never one twice), assesses it, and may assess their own plan."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils.translation import gettext as _

from accounts.models import User
from courses.models import Course
from planner.capstone.peer_models import (
    ExpiredPeerAssignment,
    PeerAssessment,
    PeerPlan,
    PeerScore,
)
from planner.capstone.peer_services import (
    COMMENT_MAX,
    LevelChoice,
    PeerStepRefused,
    checked_choices,
    peer_settings_for,
)


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
        assessment = _slot_take(plan=plan, assessor=assessor, now=now)
        if assessment is None:
            return None
        PeerPlan.objects.filter(pk=plan.pk).update(assigned=F("assigned") + 1)
        assessment.plan = plan
        return assessment


def _slot_take(*, plan: PeerPlan, assessor: User, now: datetime) -> PeerAssessment | None:
    """Insert the assessment in the next slot; after an expiry left a hole, in the lowest free
    one. Called under the plan's row lock, where `assigned` counts the plan's rows."""
    slots = [plan.assigned + 1]
    for attempt in range(2):
        try:
            with transaction.atomic():
                return PeerAssessment.objects.create(
                    assessor=assessor,
                    course_id=plan.course_id,
                    kind=PeerAssessment.Kind.PEER,
                    plan=plan,
                    slot=slots[0],
                    assigned_at=now,
                )
        except IntegrityError:
            if attempt:
                return None
            used = set(
                PeerAssessment.objects.filter(plan=plan, kind=PeerAssessment.Kind.PEER)
                .exclude(slot=None)
                .values_list("slot", flat=True)
            )
            slots = [n for n in range(1, plan.assigned + 2) if n not in used]
            if not slots:
                return None
    return None


def _assessment_save(
    *, assessment: PeerAssessment, choices: list[LevelChoice], comment: str, now: datetime
) -> PeerAssessment:
    if len(comment) > COMMENT_MAX:
        raise ValidationError(_("The comment is longer than %(max)s characters.") % {"max": 2000})
    checked = checked_choices(course_id=assessment.course_id, choices=choices)
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


# A taken plan not assessed within this long is given back to the queue: Open edX ORA's peer
# workflow leases a submission to an assessor for 8 hours (edx-ora2,
# openassessment/assessment/models/peer.py, PeerWorkflow.TIME_LIMIT = timedelta(hours=8)).
ASSIGNMENT_LEASE = timedelta(hours=8)


def peer_assignments_expire(*, course: Course, now: datetime) -> int:
    """Give back the plans taken and not assessed within ASSIGNMENT_LEASE, so an assessor who
    walked away does not hold a slot until the deadline; the next assessor takes the freed
    slot (_slot_take). Returns how many."""
    expired = PeerAssessment.objects.filter(
        course=course,
        kind=PeerAssessment.Kind.PEER,
        completed_at__isnull=True,
        assigned_at__lt=now - ASSIGNMENT_LEASE,
    ).values_list("pk", "plan_id")
    count = 0
    for assessment_id, plan_id in list(expired[:5000]):
        with transaction.atomic():
            # The assessment's row first, then the plan's: the order a submit takes them, so
            # the two never deadlock; an assessment submitted meanwhile is no longer matched.
            assessment = (
                PeerAssessment.objects.select_for_update()
                .filter(pk=assessment_id, completed_at__isnull=True)
                .first()
            )
            if assessment is None:
                continue
            PeerPlan.objects.select_for_update().filter(pk=plan_id).first()
            # Its id kept: the assessor's link to it says it expired (peer_views), not a 404.
            ExpiredPeerAssignment.objects.get_or_create(
                assessment_id=assessment.pk,
                defaults={
                    "assessor_id": assessment.assessor_id,
                    "course_id": assessment.course_id,
                    "assigned_at": assessment.assigned_at,
                    "expired_at": now,
                },
            )
            assessment.delete()
            PeerPlan.objects.filter(pk=plan_id).update(assigned=F("assigned") - 1)
            count += 1
    return count
