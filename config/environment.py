"""The environment every settings module reads: `.env` loaded once, the project's folders, and the
Redis URL (settings.py and celery_settings.py take them from here, so each has one default)."""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
# Where the embedded default keeps its database, mail, broker folders and secret.
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
REDIS_URL = env.str("REDIS_URL", default="")
