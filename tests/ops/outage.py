"""Harness for outage tests: a private Redis server the test stops and starts (never the shared
one), the web app under gunicorn pointed at it, and a cookie-keeping HTTP client."""

from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from tests.reminders.worker import free_port, wait_for, worker_database_url

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
REDIS_SERVER = "redis-server"


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class RedisServer:
    """`redis-server` on a free port, no persistence: `stop()` and `start()` it at will."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _listening(self.port), what=f"redis-server on {self.port}")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def service_env(
    *, redis_url: str, email_url: str = "smtp://127.0.0.1:9", **extra: str
) -> dict[str, str]:
    """The environment of the site's processes in these tests: the test's database, the given
    Redis and mail server, fast retries."""
    return {
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": redis_url,
        "EMAIL_URL": email_url,
        "EMAIL_TIMEOUT": "5",
        "OUTBOX_RETRY_BASE_SECONDS": "0.5",
        "OUTBOX_RETRY_MAX_SECONDS": "4",
        "OUTBOX_SWEEP_SECONDS": "1",
        "LOG_LEVEL": "INFO",
        **extra,
    }


class WebServer:
    """The site under gunicorn (development settings: plain HTTP), two sync workers."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.log = Path(tempfile.mkstemp(prefix="outage-web-", suffix=".log")[1])
        full_env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "CELERY_TASK_ALWAYS_EAGER"}
        }
        full_env.update(env)
        full_env.update({"DJANGO_ENV": "development", "DJANGO_SETTINGS_MODULE": "config.settings"})
        self._logfile = self.log.open("wb")
        self.process = subprocess.Popen(
            [str(GUNICORN), "-b", f"127.0.0.1:{self.port}", "-w", "2", "-t", "60", "config.wsgi"],
            cwd=ROOT,
            env=full_env,
            stdout=self._logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> WebServer:
        def up() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited:\n{self.output()[-3000:]}")
            return _listening(self.port)

        wait_for(up, what="gunicorn to listen")
        return self

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._logfile.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """Cookies kept, redirects returned as answers, every status returned (never raised)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )

    def _csrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def request(
        self, path: str, data: dict[str, Any] | None = None, timeout: float = 30
    ) -> tuple[int, str, str]:
        """(status, body, Location) of a GET, or of a POST of `data` with the CSRF token."""
        body = None
        headers = {"Referer": self.base + path}
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self._csrf()}, doseq=True)
            headers["X-CSRFToken"] = self._csrf()
        request = urllib.request.Request(
            self.base + path, data=body.encode() if body else None, headers=headers
        )
        try:
            with self.opener.open(request, timeout=timeout) as response:
                return response.status, response.read().decode(errors="replace"), ""
        except urllib.error.HTTPError as error:
            return (
                error.code,
                error.read().decode(errors="replace"),
                error.headers.get("Location", ""),
            )

    def log_in(self, email: str, password: str) -> tuple[int, str]:
        """allauth's login form: GET it (the CSRF cookie), POST the credentials."""
        status, _, _ = self.request("/accounts/login/")
        assert status == 200, status
        status, body, location = self.request(
            "/accounts/login/", {"login": email, "password": password}
        )
        return status, location or re.sub(r"\s+", " ", body)[:300]
