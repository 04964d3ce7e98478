"""`manage.py reminders scan` while Redis is down: it writes the day's digests, says the broker
refused their sends and that the sweep will send them, and never claims it enqueued them."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from reminders.models import ReminderDigest
from tests.reminders.factories import learner_due
from tests.reminders.worker import ROOT, free_port, worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_scan_during_a_redis_outage_does_not_count_refused_sends_as_enqueued() -> None:
    for i in range(3):
        learner_due(
            due=timezone.now() - timedelta(hours=1),
            email=f"due{i}@example.com",
            reminder_hour=0,
            day_start_hour=0,
        )
    env = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
    env.update(
        DATABASE_URL=worker_database_url(),
        # Nothing listens there: every publish is refused.
        REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "reminders", "scan"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    scan_line = done.stdout.splitlines()[0]
    assert scan_line == (
        "scan: 3 new digests, 0 re-enqueued, 0 sends enqueued, "
        "3 left to the sweep (the broker refused them)"
    ), done.stdout
    assert ReminderDigest.objects.filter(status=ReminderDigest.Status.PENDING).count() == 3
