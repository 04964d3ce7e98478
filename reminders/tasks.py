"""Celery tasks for reminders: thin wrappers that take ids and call the scan or the sender.

Digest sends have the `reminders` queue to themselves, apart from grading notifications on
`email`, the scan on `default` and any heavy job. Retry policy lives here; the rows' state lives
in the outbox.
"""

from __future__ import annotations

import smtplib

from celery import Task, shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.utils import timezone

from reminders.outbox import digest_mark_failed
from reminders.scan import digests_scan
from reminders.sending import SendInterrupted, digests_send

# Worth another try: the mail server refused for now, or the network failed.
SEND_RETRY_FOR = (smtplib.SMTPException, ConnectionError, TimeoutError, OSError)
MAX_RETRIES = 5


@shared_task(name="reminders.tasks.reminders_scan", queue="default", ignore_result=True)
def reminders_scan() -> int:
    """Beat's periodic scan: returns how many digests it enqueued."""
    return len(digests_scan(now=timezone.now()).enqueued_ids)


@shared_task(
    bind=True,
    name="reminders.tasks.send_digests",
    queue="reminders",
    acks_late=True,
    max_retries=MAX_RETRIES,
    ignore_result=True,
)
def send_digests(self: Task, digest_ids: list[int]) -> dict[int, str]:
    """Send a chunk of digests over one SMTP connection; after a passing failure, retry the
    digests not yet sent, with exponential backoff and jitter."""
    try:
        return digests_send(digest_ids=digest_ids, now=timezone.now()).statuses
    except SendInterrupted as interrupted:
        cause = interrupted.__cause__
        if not isinstance(cause, SEND_RETRY_FOR):
            raise
        unfinished = interrupted.result.unfinished
        if self.request.retries >= MAX_RETRIES:
            digest_mark_failed(
                digest_id=unfinished[0],
                reason=f"{type(cause).__name__}: {cause}"[:2000],
                now=timezone.now(),
                final=True,
            )
            raise cause from None
        countdown = get_exponential_backoff_interval(
            factor=1, retries=self.request.retries, maximum=600, full_jitter=True
        )
        raise self.retry(args=(unfinished,), countdown=countdown, exc=cause) from None
