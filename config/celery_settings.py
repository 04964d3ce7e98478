"""Celery's settings, read into config/settings.py: the broker (Redis, or embedded the filesystem
transport under var/celery, no server needed), the queues, time limits and the beat schedule."""

from __future__ import annotations

from celery.schedules import crontab
from kombu import Exchange, Queue

from config.environment import REDIS_URL, env
from config.environment import VAR_DIR as _VAR_DIR

if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A Redis that does not answer fails a publish within seconds (the outboxes' sweep sends
    # it later), rather than holding a web request or a task past its time limit.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": 3600,
        "socket_connect_timeout": 2,
        "socket_timeout": 5,
        "max_retries": 1,
    }
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_VAR_DIR / "celery" / "queue"),
        "data_folder_out": str(_VAR_DIR / "celery" / "queue"),
        "processed_folder": str(_VAR_DIR / "celery" / "processed"),
        "control_folder": str(_VAR_DIR / "celery" / "control"),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# A publish tries twice within about a second, then raises; every caller that publishes after a
# commit catches that and leaves the row to its outbox's sweep.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 0.5,
}
# Both limits stay well below the broker's visibility timeout (3600 s), so a task is never
# redelivered to a second worker while the first is still running it.
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_DEFAULT_QUEUE = "default"
# Patient batch work never queues in front of impatient work: the daily digests (reminders),
# notifications such as released grades (email), and heavy jobs each have their own queue.
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in ("default", "reminders", "email", "heavy")
)
CELERY_TASK_DEFAULT_EXCHANGE = "default"
CELERY_TASK_DEFAULT_ROUTING_KEY = "default"
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Digests per send task: one SMTP connection each, well inside the task's time limit.
REMINDER_DIGEST_CHUNK = env.int("REMINDER_DIGEST_CHUNK", default=500)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "reminders-scan": {
        "task": "reminders.tasks.reminders_scan",
        "schedule": env.float("REMINDER_SCAN_SECONDS", default=300.0),
        "options": {"queue": "default", "expires": 240},
    },
    # Failed sends whose retry is due and sends that were lost, re-enqueued (digests and grade
    # emails): a mail or broker outage is followed by sends within a minute of its end.
    "outbox-sweep": {
        "task": "reminders.tasks.outbox_sweep",
        "schedule": env.float("OUTBOX_SWEEP_SECONDS", default=30.0),
        "options": {"queue": "default", "expires": 25},
    },
    "capstone-emails-sweep": {
        "task": "planner.tasks.capstone_emails_sweep",
        "schedule": env.float("OUTBOX_SWEEP_SECONDS", default=30.0),
        "options": {"queue": "default", "expires": 25},
    },
    # Peer assessment: plans with their N assessments graded (one model fit per course and
    # run, not per assessment), plans past the deadline flagged, "a plan waits for you" emails.
    "peer-grading": {
        "task": "planner.tasks.peer_grading_run",
        "schedule": env.float("PEER_GRADING_SECONDS", default=300.0),
        "options": {"queue": "heavy", "expires": 280},
    },
    # Learnt FSRS parameters: candidates for grown scopes, adopted only when they score better.
    "parameters-nightly": {
        "task": "quizzes.tasks.parameters_nightly",
        "schedule": crontab(hour=3, minute=17),
        "options": {"queue": "heavy", "expires": 3600},
    },
    # Item analysis (facility, discrimination, flags) per course, stored for the instructor page.
    "item-analysis-nightly": {
        "task": "quizzes.tasks.item_analysis_nightly",
        "schedule": crontab(hour=3, minute=47),
        "options": {"queue": "heavy", "expires": 3600},
    },
    # The review rollups the instructor pages read (quizzes/services/rollup.py): each run
    # recomputes the days since two days before the last, so a missed run is caught up.
    "review-rollups": {
        "task": "quizzes.tasks.review_rollups_refresh",
        "schedule": env.float("REVIEW_ROLLUP_SECONDS", default=600.0),
        "options": {"queue": "heavy", "expires": 540},
    },
}
