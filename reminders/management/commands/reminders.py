"""`reminders status | scan | retry`: today's digest counts, a scan now, and a re-run of failed sends."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from reminders.models import ReminderDigest
from reminders.scan import digests_retry, digests_scan
from reminders.selectors import digest_counts, utc_day_bounds


class Command(BaseCommand):
    help = "Recall reminder digests: status (today's counts), scan (run the scan now), retry (re-send failed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "scan", "retry"])

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        action = options["action"]
        if action == "scan":
            result = digests_scan(now=now)
            refused = len(set(result.not_enqueued_ids))
            self.stdout.write(
                f"scan: {result.created} new digests, {result.requeued} re-enqueued, "
                f"{result.enqueued} sends enqueued"
                + (f", {refused} left to the sweep (the broker refused them)" if refused else "")
            )
        elif action == "retry":
            retried = digests_retry(now=now)
            self.stdout.write(
                f"retry: {retried.failed} failed, {retried.interrupted} interrupted and "
                f"{retried.pending} lost sends re-enqueued"
            )
        start, end = utc_day_bounds(now=now)
        counts = digest_counts(start=start, end=end)
        self.stdout.write(
            f"digests today ({start.date()} UTC): sent {counts.sent}, failed {counts.failed}, "
            f"pending {counts.pending}, sending {counts.sending}, skipped {counts.skipped}, "
            f"possibly delivered {counts.possibly_delivered}"
        )
        if action == "status":
            failed = ReminderDigest.objects.filter(
                status=ReminderDigest.Status.FAILED, created_at__gte=start, created_at__lt=end
            ).select_related("learner")[:20]
            for digest in failed:
                self.stdout.write(
                    f"  failed: {digest.learner.email} ({digest.local_date}, "
                    f"{digest.attempts} attempts): {digest.last_error}"
                )
