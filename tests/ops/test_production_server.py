"""The production web server: gunicorn with production settings, static files through whitenoise,
and the health check against the real database and Redis (and their absence)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")

pytestmark = pytest.mark.django_db


def _free_port() -> int:
    """A port nothing listens on (bound, read, closed): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One GET with http.client: redirects are answers here, not something to follow."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", parts.path or "/", headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def _health(client) -> tuple[int, dict[str, object]]:  # type: ignore[no-untyped-def]
    response = client.get(reverse("healthz"))
    return response.status_code, json.loads(response.content)


@pytest.mark.postgres
@pytest.mark.redis
def test_health_is_ok_when_postgres_and_redis_answer(client):
    """With the real PostgreSQL and Redis up, /healthz answers 200 and names both checks."""
    assert _health(client) == (
        200,
        {"status": "ok", "checks": {"database": "ok", "redis": "ok"}},
    )


def test_health_is_503_when_redis_is_unreachable(client, settings):
    """Redis configured but nothing listening on its port: 503, the database still ok."""
    settings.REDIS_URL = f"redis://127.0.0.1:{_free_port()}/5"
    started = time.monotonic()
    status, body = _health(client)
    assert status == 503
    assert body == {"status": "unavailable", "checks": {"database": "ok", "redis": "unavailable"}}
    assert time.monotonic() - started < 5  # a balancer's probe must not hang


def test_health_without_redis_checks_only_the_database(client, settings):
    """Embedded mode (no REDIS_URL): the database is the only service to check."""
    settings.REDIS_URL = ""
    assert _health(client) == (200, {"status": "ok", "checks": {"database": "ok"}})


def test_health_refuses_writes_and_is_never_cached(client):
    """Only GET, and a balancer or proxy never caches the answer."""
    assert client.post(reverse("healthz")).status_code == 405
    assert "no-cache" in client.get(reverse("healthz"))["Cache-Control"]


@contextmanager
def _production_server(tmp_path: Path, **env: str) -> Iterator[str]:
    """gunicorn started as `make serve` starts it (config/gunicorn.py, production settings), on a
    free port, with its static files collected into tmp_path; yields its base URL."""
    port = _free_port()
    base = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    full_env = {
        **base,
        "DJANGO_ENV": "production",
        "SECRET_KEY": "test-only-" + "k3Yq8Zr2vLp8Tn4Wm6Yc3Hd5Jf1Gb0Ks" * 2,
        "ALLOWED_HOSTS": "127.0.0.1",
        "EMAIL_URL": "smtp://127.0.0.1:2525",
        "STATIC_ROOT": str(tmp_path / "static"),
        "PORT": str(port),
        "WEB_CONCURRENCY": "2",
        "WEB_ACCESS_LOG": "",
        **env,
    }
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collect.returncode == 0, collect.stderr
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [str(GUNICORN), "-c", "config/gunicorn.py", "config.wsgi"],
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "gunicorn.log").read_text()
                assert time.monotonic() < deadline, "gunicorn did not start in 60 s"
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.postgres
@pytest.mark.redis
def test_gunicorn_serves_pages_hashed_static_files_and_health(tmp_path):
    """The production server answers the health check, serves hashed, compressed static files
    with far-future caching, and pages that link to those hashed files, with DEBUG off."""
    test_db = connection.settings_dict["NAME"]
    database_url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{test_db}"
    with _production_server(tmp_path, DATABASE_URL=database_url) as url:
        status, _, body = _get(f"{url}/healthz")
        assert status == 200 and json.loads(body)["checks"] == {"database": "ok", "redis": "ok"}

        manifest = json.loads((tmp_path / "static" / "staticfiles.json").read_text())
        hashed = manifest["paths"]["css/site.css"]
        assert hashed != "css/site.css"
        status, headers, _css = _get(
            f"{url}/static/{hashed}", **{"Accept-Encoding": "gzip", "X-Forwarded-Proto": "https"}
        )
        assert status == 200 and headers.get("Content-Encoding") == "gzip"
        assert (
            "immutable" in headers["Cache-Control"]
            and "max-age=315360000" in (headers["Cache-Control"])
        )

        # Behind the TLS proxy (X-Forwarded-Proto), the login page links the hashed stylesheet.
        status, headers, html = _get(f"{url}/accounts/login/", **{"X-Forwarded-Proto": "https"})
        assert status == 200, html[:500]
        assert f"/static/{hashed}".encode() in html
        assert "Strict-Transport-Security" in headers

        # Without the proxy's header, production redirects to HTTPS (but not the health check).
        status, headers, _ = _get(f"{url}/accounts/login/")
        assert status == 301 and headers["Location"].startswith("https://")
        status, _, body = _get(f"{url}/no-such-page/", **{"X-Forwarded-Proto": "https"})
        assert status == 404 and b"Traceback" not in body and b"URLconf" not in body


@pytest.mark.postgres
def test_gunicorn_health_is_503_when_postgres_is_unreachable(tmp_path):
    """The production server with its database on a closed port: the health check says 503."""
    closed = f"postgres://postgres@127.0.0.1:{_free_port()}/nowhere"
    with _production_server(tmp_path, DATABASE_URL=closed, REDIS_URL="") as url:
        status, _, body = _get(f"{url}/healthz")
    assert status == 503
    assert json.loads(body) == {"status": "unavailable", "checks": {"database": "unavailable"}}
