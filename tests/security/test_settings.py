"""The default run hides the environment: DEBUG only when asked for, no secret in the code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATABASE_PASSWORD = "pg-pass-zz9q"
MAIL_PASSWORD = "mail-pass-hunter7"

# One request to a view that raises, through the settings as a default run loads them.
BOOM = """
import sys, types
import django
django.setup()
from django.conf import settings
from django.test import Client
from django.urls import clear_url_caches, path

def boom(request):
    raise ZeroDivisionError("boom in a view")

urls = types.ModuleType("boom_urls")
urls.urlpatterns = [path("boom/", boom)]
sys.modules["boom_urls"] = urls
settings.ROOT_URLCONF = "boom_urls"
clear_url_caches()
response = Client(raise_request_exception=False).get("/boom/")
print("DEBUG", settings.DEBUG, "STATUS", response.status_code)
print(response.content.decode())
"""


def _python(code: str, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "DJANGO_DEBUG", "SECRET_KEY", "DJANGO_ENV", "VAR_DIR"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        VAR_DIR=str(tmp_path / "var"),
        DATABASE_URL=f"postgres://postgres:{DATABASE_PASSWORD}@127.0.0.1:5432/nowhere",
        EMAIL_URL=f"smtp://mailer:{MAIL_PASSWORD}@127.0.0.1:2525",
        **extra,
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_500_in_the_default_run_is_plain_and_the_traceback_is_logged(tmp_path: Path) -> None:
    """No DJANGO_DEBUG: the 500 page shows no environment value; the log has the traceback."""
    result = _python(BOOM, tmp_path)
    assert "DEBUG False STATUS 500" in result.stdout, result.stderr
    page = result.stdout
    for secret in (DATABASE_PASSWORD, MAIL_PASSWORD, "DATABASE_URL", "REDIS_URL", "boom in"):
        assert secret not in page
    assert "Traceback" in result.stderr
    assert "ZeroDivisionError: boom in a view" in result.stderr


def test_debug_is_on_only_when_asked_for(tmp_path: Path) -> None:
    result = _python(BOOM, tmp_path, DJANGO_DEBUG="1")
    assert "DEBUG True STATUS 500" in result.stdout, result.stderr


def test_the_development_secret_is_generated_once_into_var(tmp_path: Path) -> None:
    """No SECRET_KEY outside production: a random key is written to var/ and kept."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    first = _python(code, tmp_path).stdout.strip()
    second = _python(code, tmp_path).stdout.strip()
    other = _python(code, tmp_path / "elsewhere").stdout.strip()
    assert len(first) >= 50
    assert first == second == (tmp_path / "var" / "secret_key").read_text().strip()
    assert other != first
    assert first not in (ROOT / "config" / "settings.py").read_text()


def test_var_is_ignored_by_git() -> None:
    result = subprocess.run(
        ["git", "check-ignore", "var/secret_key"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0
