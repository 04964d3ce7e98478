"""Celery tasks for the planner: thin, they take ids and call a service."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from planner.capstone.grade_email import capstone_email_send as email_send
from planner.capstone.outbox import CapstoneEmail, capstone_emails_enqueue, capstone_emails_sweep


@shared_task(
    name="planner.tasks.capstone_email_send", queue="email", acks_late=True, ignore_result=True
)
def capstone_email_send(email_id: int) -> str | None:
    """Send one promised capstone email; a temporary failure is sent again at its retry time
    (by a task due then, or by the sweep should that be lost)."""
    email = email_send(email_id=email_id, now=timezone.now())
    if email is None:
        return None
    if email.status == CapstoneEmail.Status.FAILED and email.next_attempt_at is not None:
        capstone_emails_enqueue(email_ids=[email.pk], eta=email.next_attempt_at)
    return str(email.status)


@shared_task(name="planner.tasks.capstone_emails_sweep", queue="default", ignore_result=True)
def capstone_emails_sweep_task() -> int:
    """Beat's frequent sweep of the capstone email outbox."""
    return len(capstone_emails_sweep(now=timezone.now()))


@shared_task(name="planner.tasks.peer_grading_run", queue="heavy", ignore_result=True)
def peer_grading_run() -> int:
    """Beat's peer step for every course with it on: grade, flag the late, remind."""
    from planner.capstone.peer_grading import peer_courses_run  # it imports the outbox

    return peer_courses_run(now=timezone.now())
