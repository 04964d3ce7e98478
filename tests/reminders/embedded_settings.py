"""Settings for the embedded-mode reminder test's worker: the project's settings with no Redis, so
the filesystem broker and the file mail backend, only with their folders moved into the test's
temporary folder (REMINDER_EMBEDDED_DIR) instead of var/."""

from __future__ import annotations

import os
from pathlib import Path

from config.settings import *  # noqa: F403
from config.settings import CELERY_BROKER_URL, MAILERS

_folder = Path(os.environ["REMINDER_EMBEDDED_DIR"])

assert CELERY_BROKER_URL == "filesystem://", "the embedded worker must run without REDIS_URL"
assert MAILERS["default"]["BACKEND"] == "django.core.mail.backends.filebased.EmailBackend"

CELERY_BROKER_TRANSPORT_OPTIONS = {
    "data_folder_in": str(_folder / "queue"),
    "data_folder_out": str(_folder / "queue"),
    "processed_folder": str(_folder / "processed"),
    "control_folder": str(_folder / "control"),
    "store_processed": False,
}
MAILERS = {
    "default": {
        "BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "OPTIONS": {"file_path": str(_folder / "mail")},
    }
}
