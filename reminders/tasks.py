"""Celery tasks for reminders: thin wrappers that take ids and call the scan, the sender or the
outbox sweep.

Digest sends have the `reminders` queue to themselves, apart from grading notifications on
`email`, the scan and the sweep on `default` and any heavy job. The rows' state (and when each
failed send is tried again) lives in the outbox; a lost task is found again by the sweep.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from reminders.scan import digests_enqueue, digests_scan, digests_sweep
from reminders.sending import digests_send

logger = logging.getLogger(__name__)


@shared_task(name="reminders.tasks.reminders_scan", queue="default", ignore_result=True)
def reminders_scan() -> int:
    """Beat's periodic scan: returns how many digests it enqueued."""
    return digests_scan(now=timezone.now()).enqueued


@shared_task(name="reminders.tasks.outbox_sweep", queue="default", ignore_result=True)
def outbox_sweep() -> int:
    """Beat's frequent sweep: re-enqueue digests whose retry is due or whose send was lost."""
    return digests_sweep(now=timezone.now()).total


@shared_task(
    name="reminders.tasks.send_digests", queue="reminders", acks_late=True, ignore_result=True
)
def send_digests(digest_ids: list[int]) -> dict[int, str]:
    """Send a chunk of digests over one SMTP connection; what failed for now (or was cut short)
    is sent again by a task due at its retry time (or by the sweep, should that be lost)."""
    result = digests_send(digest_ids=digest_ids, now=timezone.now())
    at = result.next_retry()
    if at is not None:
        digests_enqueue(digest_ids=sorted(result.retry), eta=at)
    return result.statuses
