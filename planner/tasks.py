"""Celery tasks for the planner: thin, they take ids and call a service."""

from __future__ import annotations

from celery import shared_task

from planner.capstone.grade_email import grade_release_email_send


@shared_task(
    queue="email",
    acks_late=True,
    autoretry_for=(OSError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def grade_released_notify(grade_id: int) -> bool:
    return grade_release_email_send(grade_id=grade_id)
