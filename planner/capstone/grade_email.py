"""The capstone's emails to a learner (a grade released or changed, a resubmission received),
sent from the outbox row that promised each one."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.core.mail import EmailMessage, mailers
from django.template.loader import render_to_string
from django.urls import reverse

from config.mail import SendFailure, data_was_sent, failure_reason, send_failure
from planner.capstone.outbox import (
    CapstoneEmail,
    capstone_email_claim,
    capstone_email_failed,
    capstone_email_sent,
)
from planner.models import Grade

logger = logging.getLogger(__name__)

_TEMPLATES = {
    CapstoneEmail.Kind.GRADE_RELEASED: "planner/email/grade_released",
    CapstoneEmail.Kind.GRADE_CHANGED: "planner/email/grade_changed",
    CapstoneEmail.Kind.RESUBMISSION_RECEIVED: "planner/email/resubmission_received",
    CapstoneEmail.Kind.PEER_GRADED: "planner/email/peer_graded",
    CapstoneEmail.Kind.PEER_WAITING: "planner/email/peer_waiting",
}
# Kinds about the plan itself, not a staff grade: sent whatever the grade's state.
_WITHOUT_GRADE = {
    CapstoneEmail.Kind.RESUBMISSION_RECEIVED,
    CapstoneEmail.Kind.PEER_GRADED,
    CapstoneEmail.Kind.PEER_WAITING,
}


def capstone_email_message(email: CapstoneEmail) -> EmailMessage | None:
    """The email the row promised, or None when there is nothing to say any more (a grade email
    whose grade is no longer released)."""
    submission = email.submission
    grade = email.grade
    if email.kind not in _WITHOUT_GRADE and (
        grade is None or grade.status != Grade.Status.RELEASED
    ):
        return None
    context = {
        "grade": grade,
        "kind": email.kind,
        "submission": submission,
        "learner": submission.learner,
        "course": submission.course,
        "url": settings.SITE_URL + _url(email),
    }
    template = _TEMPLATES[CapstoneEmail.Kind(email.kind)]
    subject = " ".join(render_to_string(f"{template}_subject.txt", context).split())
    body = render_to_string(f"{template}.txt", context)
    # Stored on the row at its claim: every send of the row carries the same Message-ID (a row
    # not yet claimed, shown to nobody, gets Django's own).
    headers = {"Message-ID": email.message_id} if email.message_id else {}
    return EmailMessage(subject, body, to=[submission.learner.email], headers=headers)


def _url(email: CapstoneEmail) -> str:
    if email.kind == CapstoneEmail.Kind.PEER_WAITING:
        return reverse("capstone:peer", kwargs={"course_slug": email.submission.course.slug})
    if email.kind == CapstoneEmail.Kind.PEER_GRADED:
        return reverse("capstone:peer_grade", kwargs={"submission_id": email.submission_id})
    return reverse("capstone:submission", kwargs={"submission_id": email.submission_id})


def capstone_email_send(*, email_id: int, now: datetime) -> CapstoneEmail | None:
    """Claim the row and send its email; a failure is recorded on the row (retry time, reason,
    or possibly delivered). None when the row was not there to send."""
    email = capstone_email_claim(email_id=email_id, now=now)
    if email is None:
        return None
    email = CapstoneEmail.objects.select_related(
        "submission__learner", "submission__course", "grade"
    ).get(pk=email.pk)
    backend = mailers.default
    try:
        message = capstone_email_message(email)
        if message is None:
            capstone_email_failed(
                email=email,
                failure=SendFailure.PERMANENT,
                reason="the grade is no longer released",
                now=now,
            )
            return email
        backend.send_messages([message])
    except Exception as exc:
        failure = send_failure(exc, data_sent=data_was_sent(backend))
        logger.warning("capstone email %s: %s (%s)", email.pk, failure, failure_reason(exc))
        return capstone_email_failed(
            email=email, failure=failure, reason=failure_reason(exc), now=now
        )
    finally:
        try:
            backend.close()
        except Exception:
            logger.warning("could not close the mail connection cleanly", exc_info=True)
    capstone_email_sent(email=email, now=now)
    email.status = CapstoneEmail.Status.SENT
    return email
