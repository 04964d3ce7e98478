"""Celery tasks for reminders: thin wrappers that take ids and call the outbox.

Digest sends have the `reminders` queue to themselves, apart from grading notifications on
`email`, the scan on `default` and any heavy job. Retry policy lives here; the row's state lives
in the outbox.
"""

from __future__ import annotations

import smtplib

from celery import Task, shared_task
from django.utils import timezone

from reminders.outbox import digest_mark_failed, digest_send, digests_scan

# Worth another try: the mail server refused for now, or the network failed.
SEND_RETRY_FOR = (smtplib.SMTPException, ConnectionError, TimeoutError, OSError)


@shared_task(name="reminders.tasks.reminders_scan", queue="default", ignore_result=True)
def reminders_scan() -> int:
    """Beat's periodic scan: returns how many digests it enqueued."""
    return len(digests_scan(now=timezone.now()).enqueued_ids)


@shared_task(
    bind=True,
    name="reminders.tasks.send_digest",
    queue="reminders",
    acks_late=True,
    autoretry_for=SEND_RETRY_FOR,
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=5,
    ignore_result=True,
)
def send_digest(self: Task, digest_id: int) -> str:
    try:
        digest = digest_send(digest_id=digest_id, now=timezone.now())
    except SEND_RETRY_FOR as exc:
        if self.request.retries >= (self.max_retries or 0):
            digest_mark_failed(
                digest_id=digest_id,
                reason=f"{type(exc).__name__}: {exc}"[:2000],
                now=timezone.now(),
                final=True,
            )
        raise
    return digest.status if digest is not None else "not claimed"
