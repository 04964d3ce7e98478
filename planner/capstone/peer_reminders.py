""" "A plan is waiting for your assessment": at most once a day to a learner who owes assessments."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from courses.models import Course
from planner.capstone.outbox import CapstoneEmail, capstone_email_promise
from planner.capstone.peer_models import (
    PeerAssessment,
    PeerPlan,
)
from planner.capstone.peer_services import (
    peer_settings_for,
)

# "A plan is waiting for your assessment" goes to one learner at most this often.
WAITING_EMAIL_EVERY = timedelta(days=1)
WAITING_EMAIL_BATCH = 500


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
