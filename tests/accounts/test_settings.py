"""Production settings pass Django's deploy checks; production refuses to start without a secret."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DJANGO_ENV", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "EMAIL_URL"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_in_production_mode() -> None:
    """`check --deploy --fail-level WARNING` is clean with production values."""
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_ENV="production",
        SECRET_KEY="x7!k" + "q9Zr2vLp8Tn4Wm6Yc3Hd5Jf1Gb0Ks_aE-uXo" * 2,
        ALLOWED_HOSTS="recall.example.com",
        EMAIL_URL="smtp+tls://mailer:secret@smtp.example.com:587",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_without_secret_key_refuses_to_start() -> None:
    result = _manage(
        "check",
        DJANGO_ENV="production",
        ALLOWED_HOSTS="recall.example.com",
        EMAIL_URL="smtp://localhost:25",
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_cookies_are_host_prefixed_and_csp_has_nonce() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_NAME, s.CSRF_COOKIE_NAME, s.SESSION_COOKIE_SECURE, s.DEBUG)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "EMAIL_URL": "smtp://localhost:25",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_ENV": "production",
            "SECRET_KEY": "s" * 60,
            "ALLOWED_HOSTS": "recall.example.com",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == ["__Host-sessionid", "__Host-csrftoken", "True", "False"], (
        result.stderr
    )
