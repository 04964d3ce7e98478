"""The site's nodes: the one production environment, each node's Procfile.production line,
and the run's build (servers, release steps, seed, then the proxy, web, worker and beat nodes)."""

from __future__ import annotations

import argparse
import json
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ops.cluster import servers
from ops.cluster.net import Network, Process
from ops.cluster.records import Delivery
from ops.cluster.servers import WEB_NODES

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
# In the order they are made; the run removes them in reverse (the servers last).
NODES = {
    "postgres": 41,
    "redis": 42,
    "driver": 1,
    "proxy": 2,
    "web1": 11,
    "web2": 12,
    "worker1": 21,
    "worker2": 22,
    "beat": 31,
}
WORKER_NODES = ("worker1", "worker2")
WORKER_LINES = ("reminders", "email", "default", "heavy")
SMTP_PORT = 2525
# Every wait of the run is bounded; the run as a whole stays under five minutes.
START_LIMIT = 120.0


def say(text: str) -> None:
    print(text, flush=True)


def procfile(path: Path) -> dict[str, str]:
    """`name: command` lines of a Procfile (comments and blank lines skipped)."""
    lines: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        name, _, command = line.partition(":")
        lines[name.strip()] = command.strip()
    return lines


def wait_for(predicate: Callable[[], Any], *, what: str, limit: float, every: float = 0.1) -> Any:
    deadline = time.monotonic() + limit
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {limit:.0f} s waiting for {what}")
        time.sleep(every)


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def wait_for_or_none(predicate: Callable[[], Any], *, limit: float, every: float = 0.1) -> Any:
    try:
        return wait_for(predicate, what="", limit=limit, every=every)
    except RuntimeError:
        return None


class Site:
    """The site's nodes and the servers under them, built for one run."""

    def __init__(self, network: Network, args: argparse.Namespace) -> None:
        self.net = network
        self.args = args
        self.dir = network.run_dir
        self.lines = procfile(ROOT / "Procfile.production")
        self.pg_password = secrets.token_urlsafe(18)
        self.proxy_ip = network.address("proxy")
        self.deliveries: list[Delivery] = []
        self.sink_lock = threading.Lock()
        self.db: Any = None
        self.seed: dict[str, Any] = {}
        self.t0 = time.monotonic()
        self.secret_key = secrets.token_urlsafe(50)
        self.password = secrets.token_urlsafe(16)

    def app_env(self) -> dict[str, str]:
        """The one environment every node of the site runs with (production values)."""
        return {
            "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": str(self.dir),
            "LANG": "C.UTF-8",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DJANGO_ENV": "production",
            "SECRET_KEY": self.secret_key,
            "ALLOWED_HOSTS": self.proxy_ip,
            "SITE_URL": f"https://{self.proxy_ip}",
            "DATABASE_URL": f"postgres://postgres:{self.pg_password}@"
            f"{self.net.address('postgres')}:5432/recall",
            "REDIS_URL": f"redis://{self.net.address('redis')}:6379/0",
            "EMAIL_URL": f"smtp://{self.net.address('driver')}:{SMTP_PORT}",
            "WEB_BIND": "0.0.0.0:8000",
            "FORWARDED_ALLOW_IPS": self.proxy_ip,
            "WEB_CONCURRENCY": "2",
            "WEB_ACCESS_LOG": "",
            "STATIC_ROOT": str(self.dir / "static"),
            "VAR_DIR": str(self.dir / "var"),
            # Beat's periods shortened so a one-minute run sees several scans and sweeps.
            "REMINDER_SCAN_SECONDS": "5",
            "OUTBOX_SWEEP_SECONDS": "5",
            "OUTBOX_RETRY_BASE_SECONDS": "1",
            "OUTBOX_RETRY_MAX_SECONDS": "4",
            "REMINDER_DIGEST_CHUNK": "20",
            "LOG_LEVEL": "INFO",
        }

    def start_line(self, node: str, name: str) -> Process:
        command = self.lines[name].replace(
            "var/celerybeat-schedule", str(self.dir / "celerybeat-schedule")
        )
        # Dies with the run (its parent): a run killed outright leaves no server behind.
        argv = ["setpriv", "--pdeathsig", "KILL", "--", "sh", "-c", f"exec {command}"]
        return self.net.start(node, name, argv, env=self.app_env(), cwd=ROOT)

    def web_up(self, node: str) -> bool:
        return servers.proxy_stats(self.net).get(node, {}).get("status", "").startswith("UP")

    def start_workers(self, node: str) -> list[Process]:
        return [self.start_line(node, name) for name in WORKER_LINES]

    @staticmethod
    def ready(process: Process) -> bool:
        if process.popen.poll() is not None:
            raise RuntimeError(f"{process.node} {process.name} exited:\n{process.output()[-3000:]}")
        return " ready." in process.output()

    def release_step(self, name: str, argv: list[str], node: str = "web1", **env: str) -> None:
        """A one-off command on a node (migrate, collectstatic), as each release runs them once."""
        process = self.net.start(node, name, argv, env={**self.app_env(), **env}, cwd=ROOT)
        try:
            code = process.popen.wait(timeout=START_LIMIT)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{name} took over {START_LIMIT:.0f} s") from None
        if code != 0:
            raise RuntimeError(f"{name} failed:\n{process.output()[-3000:]}")

    def elapsed(self) -> str:
        return f"[{time.monotonic() - self.t0:5.1f} s]"

    def build(self) -> None:
        from aiosmtpd.controller import Controller

        servers.make_certificate(self.net)
        servers.start_postgres(self.net, password=self.pg_password)
        servers.start_redis(self.net)
        self.sink = Controller(
            servers.Sink(self.deliveries, self.sink_lock),
            hostname=self.net.address("driver"),
            port=SMTP_PORT,
            ready_timeout=30,
        )
        self.sink.start()
        wait_for(lambda: self._db_ready(), what="PostgreSQL", limit=START_LIMIT)
        wait_for(
            lambda: _listening(self.net.address("redis"), 6379), what="Redis", limit=START_LIMIT
        )
        with servers.connect_db(self.net, password=self.pg_password, dbname="postgres") as admin:
            admin.execute("CREATE DATABASE recall")
        say(
            f"{self.elapsed()} PostgreSQL and Redis up; deploy check, migrate, collectstatic on web1"
        )
        python = str(VENV_BIN / "python")
        self.release_step(
            "check", [python, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
        )
        self.release_step("migrate", [python, "manage.py", "migrate", "--no-input", "-v", "0"])
        self.release_step(
            "collectstatic", [python, "manage.py", "collectstatic", "--no-input", "-v", "0"]
        )
        self.release_step(
            "seed",
            [python, "-m", "ops.cluster.app", "seed", "--learners", str(self.args.learners),
             "--digests", str(self.args.digests), "--submissions", str(self.args.submissions),
             "--out", str(self.dir / "seed.json")],
            node="driver",
            CLUSTER_PASSWORD=self.password,
        )  # fmt: skip
        self.seed = json.loads((self.dir / "seed.json").read_text())
        self.db = servers.connect_db(self.net, password=self.pg_password)
        say(f"{self.elapsed()} seeded; starting the proxy, web, worker and beat nodes")
        servers.start_proxy(self.net)
        workers = []
        for node in WEB_NODES:
            self.start_line(node, "web")
        for node in WORKER_NODES:
            workers += self.start_workers(node)
        beat = self.start_line("beat", "beat")
        for process in workers:
            wait_for(
                lambda p=process: self.ready(p),  # type: ignore[misc]
                what=f"{process.node} {process.name}",
                limit=START_LIMIT,
            )
        for node in WEB_NODES:
            wait_for(lambda n=node: self.web_up(n), what=f"{node} up", limit=START_LIMIT)  # type: ignore[misc]
        wait_for(lambda: "Starting" in beat.output(), what="beat", limit=START_LIMIT)
        say(f"{self.elapsed()} all nodes up (the proxy sees both web nodes healthy)")

    def _db_ready(self) -> bool:
        try:
            servers.connect_db(self.net, password=self.pg_password, dbname="postgres").close()
            return True
        except Exception:
            return False
