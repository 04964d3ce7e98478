"""The status page's view of the capstone email outbox (the page's view lists digests only)."""

from __future__ import annotations

from dataclasses import dataclass

from django import template
from django.db.models import Count, Q

from accounts.models import User
from planner.capstone.outbox import CapstoneEmail, capstone_emails_visible_to

register = template.Library()

Status = CapstoneEmail.Status


@dataclass(frozen=True)
class CapstoneEmailStatus:
    sent: int
    waiting: int  # pending, sending, or failed for now and to be retried
    failed: int  # failed for good
    possibly_delivered: int
    failures: list[CapstoneEmail]


@register.simple_tag
def capstone_email_status(user: User) -> CapstoneEmailStatus:
    """Counts of the capstone emails the user may see, and the latest failed or possibly
    delivered ones with their reasons."""
    emails = capstone_emails_visible_to(user=user)
    counts = emails.aggregate(
        sent=Count("pk", filter=Q(status=Status.SENT)),
        waiting=Count(
            "pk",
            filter=Q(status__in=[Status.PENDING, Status.SENDING])
            | Q(status=Status.FAILED, next_attempt_at__isnull=False),
        ),
        failed=Count("pk", filter=Q(status=Status.FAILED, next_attempt_at__isnull=True)),
        possibly_delivered=Count("pk", filter=Q(status=Status.AMBIGUOUS)),
    )
    failures = list(
        emails.filter(Q(status=Status.FAILED) | Q(status=Status.AMBIGUOUS))
        .select_related("submission__learner", "submission__course")
        .order_by("-updated_at")[:20]
    )
    return CapstoneEmailStatus(**counts, failures=failures)
