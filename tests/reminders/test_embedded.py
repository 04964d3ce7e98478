"""The embedded default (no Redis, no mail server): a real worker process on the filesystem
broker writes the digest into a mail folder. Needs PostgreSQL only, so the worker process and the
test share the database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery import Celery
from django.conf import settings
from django.utils import timezone

from reminders.models import ReminderDigest
from tests.reminders.factories import learner_due
from tests.reminders.worker import Worker, wait_for, worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_embedded_default_filesystem_broker_writes_the_digest_to_the_mail_folder(  # type: ignore[no-untyped-def]
    tmp_path,
) -> None:
    """With no Redis and no mail server (the embedded default), a worker on the filesystem broker
    runs the scan from the `default` queue, sends the digest through the `reminders` queue, and the
    file backend writes it to the mail folder."""
    learner = learner_due(
        due=timezone.now() - timedelta(hours=1),
        email="embedded@example.com",
        reminder_hour=0,
        day_start_hour=0,
    )
    for sub in ("queue", "processed", "control", "mail"):
        (tmp_path / sub).mkdir()
    env = {
        "DATABASE_URL": worker_database_url(),
        "DJANGO_SETTINGS_MODULE": "tests.reminders.embedded_settings",
        "REMINDER_EMBEDDED_DIR": str(tmp_path),
        "REDIS_URL": "",
        "EMAIL_URL": "",
    }
    # What beat does in embedded mode: put the scan on the `default` queue, here from a producer
    # on the same filesystem broker.
    # Not the current app: shared tasks in later tests must still resolve to config.celery.
    producer = Celery("embedded-beat", broker="filesystem://", set_as_current=False)
    producer.conf.broker_transport_options = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "control_folder": str(tmp_path / "control"),
    }
    producer.conf.task_queues = settings.CELERY_TASK_QUEUES
    worker = Worker(env, name="embedded")
    try:
        worker.wait_ready(ping=False)  # the control ping needs a Redis broker
        producer.send_task("reminders.tasks.reminders_scan", queue="default")
        mail_files = wait_for(
            lambda: list((tmp_path / "mail").glob("*.log")), what="a digest in the mail folder"
        )
        wait_for(
            lambda: ReminderDigest.objects.filter(status="sent").exists(),
            what="the digest row to be sent",
        )
    finally:
        worker.stop()
    text = "".join(path.read_text() for path in mail_files)
    assert "To: embedded@example.com" in text
    assert "List-Unsubscribe-Post: List-Unsubscribe=One-Click" in text
    assert text.count("Message-ID:") == 1
    assert ReminderDigest.objects.get(learner=learner).status == ReminderDigest.Status.SENT
