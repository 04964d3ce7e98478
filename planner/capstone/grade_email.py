"""The email telling a learner their capstone grade is out (sent by the planner's task)."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

from planner.models import Grade


def grade_release_email_send(*, grade_id: int) -> bool:
    """Email the learner that their grade is out. Only a released grade is ever sent."""
    grade = (
        Grade.objects.select_related("submission__learner", "submission__course")
        .filter(pk=grade_id, status=Grade.Status.RELEASED)
        .first()
    )
    if grade is None:
        return False
    submission = grade.submission
    context = {
        "grade": grade,
        "submission": submission,
        "learner": submission.learner,
        "course": submission.course,
        "url": settings.SITE_URL
        + reverse("capstone:submission", kwargs={"submission_id": submission.pk}),
    }
    subject = render_to_string("planner/email/grade_released_subject.txt", context).strip()
    body = render_to_string("planner/email/grade_released.txt", context)
    send_mail(subject, body, None, [submission.learner.email])
    return True
