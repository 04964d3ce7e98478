"""`make cluster`: the production topology of docs/operations.md on this host, nodes killed.

    sudo .venv/bin/python -m ops.cluster [--seconds 60] [--learners 10] [--digests 300]
                                          [--submissions 40] [--keep]

Builds one network namespace per node on a bridge made for the run (10.231.39.0/24, inside the
run's namespaces only): a proxy (HAProxy, TLS, probing /healthz), two web nodes (gunicorn), two
worker nodes (one Celery worker per queue each), one beat node, a PostgreSQL node and a Redis
node (throwaway servers started for the run), and the driver, which holds a mail sink and drives
learners and instructors through the proxy. Every node runs its line of Procfile.production with
the same environment. Mid-run it makes 300 learners' cards fall due (beat's scan mails them),
SIGKILLs a worker node while the digests go out and a web node while it holds requests, and
restarts both. Its last line is the verdict (ops/cluster/verdict.py); the exit status is 0 only
when it passes. Everything it made is removed on exit, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email import message_from_bytes
from glob import glob
from pathlib import Path
from typing import Any

from ops.cluster import load
from ops.cluster.net import Network, Process, remove_leftovers
from ops.cluster.verdict import (
    AppliedGrade,
    Delivery,
    Kill,
    Promise,
    Record,
    ReleaseRow,
    proxy_log_parse,
    verdict,
)

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
SUBNET = "10.231.39"
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
WEB_NODES = ("web1", "web2")
WORKER_NODES = ("worker1", "worker2")
WORKER_LINES = ("reminders", "email", "default", "heavy")
SMTP_PORT = 2525
# Each RCPT is answered after this long, as a real server takes a moment: the digests then go
# out over a few seconds, and the worker node's kill lands while they do.
SMTP_RCPT_DELAY = 0.04
# Every wait of the run is bounded; the run as a whole stays under five minutes.
START_LIMIT = 120.0
DRAIN_LIMIT = 90.0
# The outbox's stale limits are 10 minutes; the recovery looks that far (and a minute) ahead.
RECOVER_AHEAD = 660
# Killed nodes come back after this long (a process manager's restart, or a machine's reboot).
DOWN_FOR = 5.0


class Interrupted(Exception):
    """SIGTERM or SIGHUP: clean up as for Ctrl-C."""


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


@dataclass
class Sink:
    """The mail server: records each message's Message-ID, recipients and arrival."""

    deliveries: list[Delivery]
    lock: threading.Lock

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any
    ) -> str:
        import asyncio

        await asyncio.sleep(SMTP_RCPT_DELAY)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = message_from_bytes(envelope.content)
        delivery = Delivery(str(parsed["Message-ID"]), tuple(envelope.rcpt_tos), time.monotonic())
        with self.lock:
            self.deliveries.append(delivery)
        return "250 2.0.0 Message accepted for delivery"


class Cluster:
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

    # -- the nodes -----------------------------------------------------------------------------

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

    def start_postgres(self) -> None:
        pg_bin = Path(sorted(glob("/usr/lib/postgresql/*/bin/postgres"))[-1]).parent
        pg_dir = self.dir / "postgres"
        pg_dir.mkdir()
        (pg_dir / "password").write_text(self.pg_password)
        shutil.chown(pg_dir, "postgres", "postgres")
        shutil.chown(pg_dir / "password", "postgres", "postgres")
        as_postgres = ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups"]
        subprocess.run(
            [*as_postgres, str(pg_bin / "initdb"), "-D", str(pg_dir / "data"), "-U", "postgres",
             "--auth-local=trust", "--auth-host=scram-sha-256",
             f"--pwfile={pg_dir / 'password'}", "--no-sync", "-E", "UTF8"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        with (pg_dir / "data" / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 scram-sha-256\n")
        self.net.start(
            "postgres",
            "postgres",
            [*as_postgres, "--pdeathsig", "KILL", "--", str(pg_bin / "postgres"),
             "-D", str(pg_dir / "data"),
             "-c", f"listen_addresses={self.net.address('postgres')}",
             # Its own socket folder: the machine's shared server keeps /var/run/postgresql.
             "-c", f"unix_socket_directories={pg_dir}",
             # A throwaway database: no crash safety needed (nothing here kills PostgreSQL).
             "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=150"],
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd=pg_dir,
        )  # fmt: skip

    def connect_db(self, dbname: str = "recall") -> Any:
        import psycopg

        return psycopg.connect(
            host=self.net.address("postgres"),
            user="postgres",
            password=self.pg_password,
            dbname=dbname,
            autocommit=True,
            connect_timeout=2,
        )

    def start_redis(self) -> None:
        (self.dir / "redis").mkdir()
        self.net.start(
            "redis",
            "redis",
            ["setpriv", "--pdeathsig", "KILL", "--", "redis-server",
             "--bind", self.net.address("redis"), "--port", "6379", "--protected-mode", "no",
             "--save", "", "--appendonly", "no", "--dir", str(self.dir / "redis")],
            env={"PATH": "/usr/bin:/bin"},
            cwd=self.dir,
        )  # fmt: skip

    def proxy_config(self) -> str:
        servers = "\n".join(
            f"  server {node} {self.net.address(node)}:8000 check" for node in WEB_NODES
        )
        return f"""global
  maxconn 2000
  log stdout format raw local0
  stats socket {self.dir / "haproxy.sock"} mode 600 level admin
defaults
  mode http
  log global
  log-format "rid=%[capture.req.hdr(0)] srv=%s st=%ST ts=%tsc tt=%Ta"
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 30s
  # A connection the node refuses is tried again on the other node.
  retries 3
  option redispatch 1
frontend site
  bind {self.proxy_ip}:443 ssl crt {self.dir / "proxy.pem"}
  http-request capture req.hdr(X-Request-ID) len 64
  http-request set-header X-Forwarded-Proto https
  default_backend web
backend web
  balance roundrobin
  option httpchk
  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host {self.proxy_ip}
  http-check expect status 200
  default-server inter 1s fall 2 rise 2
{servers}
"""

    def make_certificate(self) -> None:
        key, cert = self.dir / "proxy.key", self.dir / "proxy.crt"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
             "-subj", f"/CN={self.proxy_ip}", "-addext", f"subjectAltName=IP:{self.proxy_ip}",
             "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        (self.dir / "proxy.pem").write_bytes(cert.read_bytes() + key.read_bytes())

    def proxy_stats(self) -> dict[str, dict[str, str]]:
        """HAProxy's `show stat` for the web backend's servers, by server name."""
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(2)
                sock.connect(str(self.dir / "haproxy.sock"))
                sock.sendall(b"show stat\n")
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
        except OSError:
            return {}
        lines = data.decode().splitlines()
        if not lines:
            return {}
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {r["svname"]: r for r in rows if r.get("pxname") == "web" and r["svname"] in NODES}

    def web_up(self, node: str) -> bool:
        return self.proxy_stats().get(node, {}).get("status", "").startswith("UP")

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

    # -- the run -------------------------------------------------------------------------------

    def build(self) -> None:
        from aiosmtpd.controller import Controller

        self.make_certificate()
        self.start_postgres()
        self.start_redis()
        self.sink = Controller(
            Sink(self.deliveries, self.sink_lock),
            hostname=self.net.address("driver"),
            port=SMTP_PORT,
            ready_timeout=30,
        )
        self.sink.start()
        wait_for(lambda: self._db_ready(), what="PostgreSQL", limit=START_LIMIT)
        wait_for(
            lambda: _listening(self.net.address("redis"), 6379), what="Redis", limit=START_LIMIT
        )
        with self.connect_db("postgres") as admin:
            admin.execute("CREATE DATABASE recall")
        say(f"{self.elapsed()} PostgreSQL and Redis up; migrate and collectstatic on web1")
        python = str(VENV_BIN / "python")
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
        self.db = self.connect_db()
        say(f"{self.elapsed()} seeded; starting the proxy, web, worker and beat nodes")
        (self.dir / "haproxy.cfg").write_text(self.proxy_config())
        self.net.start(
            "proxy",
            "haproxy",
            ["setpriv", "--pdeathsig", "KILL", "--", "haproxy", "-db", "-f",
             str(self.dir / "haproxy.cfg")],
            env={"PATH": "/usr/sbin:/usr/bin:/bin"},
            cwd=self.dir,
        )  # fmt: skip
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
            self.connect_db("postgres").close()
            return True
        except Exception:
            return False

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return list(self.db.execute(sql, params).fetchall())

    def digest_progress(self) -> tuple[int, int]:
        """Digests of the learners whose cards the run made due: (written, sent)."""
        t = self.seed["tables"]
        sent = self.seed["values"]["sent"]
        row = self.query(
            f"SELECT COUNT(*), COUNT(*) FILTER (WHERE status = %s) FROM {t['digest']} "  # noqa: S608
            "WHERE learner_id = ANY(%s)",
            sent,
            self.seed["digest_learner_ids"],
        )[0]
        return int(row[0]), int(row[1])

    def sending_keys(self) -> set[str]:
        t, sending = self.seed["tables"], self.seed["values"]["sending"]
        digests = self.query(f"SELECT id FROM {t['digest']} WHERE status = %s", sending)  # noqa: S608
        emails = self.query(f"SELECT id FROM {t['email']} WHERE status = %s", sending)  # noqa: S608
        return {f"digest{r[0]}" for r in digests} | {f"capstone{r[0]}" for r in emails}

    @contextmanager
    def users(self, recorder: load.Recorder, deadline: float) -> Iterator[threading.Event]:
        """The learners' and instructors' threads, for as long as the block runs."""
        stop = threading.Event()
        tls = load.tls_context(str(self.dir / "proxy.crt"))
        pace = load.Pace(deadline=deadline, think=(0.3, 1.2))
        threads = []
        password = self.password
        for n, person in enumerate(self.seed["learners"]):
            client = load.Client(
                host=self.proxy_ip, tls=tls, recorder=recorder, run="l", actor=person["email"]
            )
            client.cookies[self.seed["session_cookie"]] = person["session"]
            threads.append(
                threading.Thread(
                    target=load.learner,
                    daemon=True,
                    args=(client,),
                    kwargs={"pace": pace, "max_grades": 200, "rng": random.Random(n), "stop": stop},
                )
            )
        submissions = self.seed["submissions"]
        count = len(self.seed["instructors"])
        for n, email in enumerate(self.seed["instructors"]):
            client = load.Client(
                host=self.proxy_ip, tls=tls, recorder=recorder, run="i", actor=email
            )

            def grade(
                c: load.Client = client, mine: list[int] = submissions[n::count], seed: int = n
            ) -> None:
                if load.log_in(c, email=c.actor, password=password):
                    load.instructor(
                        c, submissions=mine, pace=pace, rng=random.Random(100 + seed), stop=stop
                    )

            threads.append(threading.Thread(target=grade, daemon=True))
        for thread in threads:
            thread.start()
        try:
            yield stop
        finally:
            stop.set()
            joined_by = time.monotonic() + load.TIMEOUT * 2
            for thread in threads:
                thread.join(timeout=max(joined_by - time.monotonic(), 0.1))

    def drive(self, recorder: load.Recorder) -> dict[str, Any]:
        """The load, with the digests falling due, a worker node and a web node killed and
        restarted. Returns the timeline."""
        seconds = self.args.seconds
        start = time.monotonic()
        timeline: dict[str, Any] = {}
        t = self.seed["tables"]
        with self.users(recorder, deadline=start + seconds):
            say(f"{self.elapsed()} load started: {len(self.seed['learners'])} learners, "
                f"{len(self.seed['instructors'])} instructors, for {seconds} s")  # fmt: skip
            time.sleep(min(8.0, seconds / 8))
            self.query(
                f"UPDATE {t['schedule']} SET due = now() - interval '1 hour' "  # noqa: S608
                "WHERE learner_id = ANY(%s) RETURNING id",
                self.seed["digest_learner_ids"],
            )
            say(f"{self.elapsed()} {len(self.seed['digest_learner_ids'])} learners' cards due; "
                "beat's next scan owes them a digest")  # fmt: skip

            owed = len(self.seed["digest_learner_ids"])

            def mid_batch() -> bool:
                return self.digest_progress()[1] >= max(owed // 10, 1)

            try:
                wait_for(mid_batch, what="the digests going out", limit=seconds * 0.4)
            except RuntimeError:
                say(f"{self.elapsed()} the digests had not started; killing worker1 anyway")
            pids = self.net.pids("worker1")
            total, sent = self.digest_progress()
            # The moment of the kill is when the first signal goes.
            timeline["worker_kill"] = Kill("worker1", time.monotonic())
            self.net.kill("worker1", known=pids)
            timeline["sending_at_kill"] = self.sending_keys()
            say(f"{self.elapsed()} SIGKILL worker1 (all its processes) with {sent} of {total} "
                f"digests sent, {len(timeline['sending_at_kill'])} emails mid-send")  # fmt: skip
            time.sleep(DOWN_FOR)
            timeline["worker_restart"] = time.monotonic()
            timeline["restarted_workers"] = self.start_workers("worker1")
            say(f"{self.elapsed()} worker1 restarted")
            # The web node dies while the proxy has requests on it (waiting at most 5 s for one).
            time.sleep(max(0.0, start + seconds * 0.45 - time.monotonic()))
            pids = self.net.pids("web1")
            busy = wait_for_or_none(
                lambda: int(self.proxy_stats().get("web1", {}).get("scur", "0") or 0) > 0,
                limit=5.0,
                every=0.005,
            )
            timeline["web_kill"] = Kill("web1", time.monotonic())
            self.net.kill("web1", known=pids)
            say(f"{self.elapsed()} SIGKILL web1 with a request on it"
                f"{'' if busy else ' (none seen within 5 s)'}")  # fmt: skip
            down = wait_for_or_none(lambda: not self.web_up("web1"), limit=10.0)
            timeline["web_marked_down_s"] = (
                time.monotonic() - timeline["web_kill"].at if down else None
            )
            time.sleep(max(0.0, timeline["web_kill"].at + DOWN_FOR - time.monotonic()))
            self.start_line("web1", "web")
            timeline["web_restart"] = time.monotonic()
            up = wait_for_or_none(lambda: self.web_up("web1"), limit=START_LIMIT)
            timeline["web_back_s"] = time.monotonic() - timeline["web_restart"] if up else None
            say(f"{self.elapsed()} web1 restarted; the proxy marked it down after "
                f"{_seconds(timeline['web_marked_down_s'])} and up "
                f"{_seconds(timeline['web_back_s'])} after its restart")  # fmt: skip
            time.sleep(max(0.0, start + seconds - time.monotonic()))
            say(f"{self.elapsed()} load over; waiting for the users' last requests")
        timeline["load_seconds"] = time.monotonic() - start
        return timeline

    def outbox_rows(self) -> list[tuple[str, str, float]]:
        """(key, status, seconds since the row last changed) of every outbox row."""
        t = self.seed["tables"]
        return [
            (f"digest{r[0]}", r[1], float(r[2]))
            for r in self.query(
                f"SELECT id, status, EXTRACT(EPOCH FROM now() - updated_at) FROM {t['digest']}"  # noqa: S608
            )
        ] + [
            (f"capstone{r[0]}", r[1], float(r[2]))
            for r in self.query(
                f"SELECT id, status, EXTRACT(EPOCH FROM now() - updated_at) FROM {t['email']}"  # noqa: S608
            )
        ]

    def drain(self, timeline: dict[str, Any]) -> frozenset[str]:
        """Wait for every promised email; rows the killed worker node left behind (claimed and
        `sending`, or in a chunk it had taken) wait for the outbox's 10-minute stale limit, so
        once nothing else moves the sweeps run as of 11 minutes ahead. Returns the keys of the
        rows that were mid-send at the kill and still stuck then."""
        sent = self.seed["values"]["sent"]
        deadline = time.monotonic() + DRAIN_LIMIT
        while True:
            rows = self.outbox_rows()
            waiting = [r for r in rows if r[1] != sent]
            since_restart = time.monotonic() - timeline["worker_restart"]
            # Left behind: untouched since before the restart, while nothing moved for 8 s.
            if not waiting or (
                all(age > since_restart for _, _, age in waiting)
                and all(age > 8 for _, _, age in rows)
            ):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(waiting)} promised email(s) still unsent: {waiting[:5]}")
            time.sleep(0.5)
        stuck = waiting
        interrupted = frozenset(key for key, _, _ in stuck if key in timeline["sending_at_kill"])
        if stuck:
            self.release_step(
                "recover",
                [str(VENV_BIN / "python"), "-m", "ops.cluster.app", "recover", "--ahead",
                 str(RECOVER_AHEAD)],
                node="driver",
            )  # fmt: skip
            say(f"{self.elapsed()} {len(stuck)} email(s) left by the killed worker node "
                f"({len(interrupted)} mid-send): the sweep run as of "
                f"{RECOVER_AHEAD // 60} minutes later re-enqueued them")  # fmt: skip
        wait_for(
            lambda: all(r[1] == sent for r in self.outbox_rows()),
            what="every promised email sent",
            limit=DRAIN_LIMIT,
        )
        time.sleep(6)  # a sweep or two more: a second copy would arrive now
        return interrupted

    def collect(
        self, recorder: load.Recorder, timeline: dict[str, Any], interrupted: frozenset[str]
    ) -> Record:
        t, v = self.seed["tables"], self.seed["values"]
        applied = [
            AppliedGrade(r[0], str(r[1]), int(r[2]))
            for r in self.query(
                f"SELECT u.email, l.idempotency_key, l.rating FROM {t['log']} l "  # noqa: S608
                f"JOIN {t['user']} u ON u.id = l.learner_id "
                "WHERE u.email LIKE %s",
                "cluster-learner%",
            )
        ]
        release_rows = [
            ReleaseRow(int(r[0]), int(r[1]), int(r[2]))
            for r in self.query(
                f"SELECT s.id, (SELECT COUNT(*) FROM {t['grade']} g WHERE g.submission_id = s.id "  # noqa: S608
                f"AND g.status = %s), (SELECT COUNT(*) FROM {t['email']} e "
                "WHERE e.submission_id = s.id AND e.kind = %s) "
                f"FROM {t['submission']} s",
                v["released"],
                v["grade_released"],
            )
        ]
        promises = [
            Promise(f"digest{r[0]}", r[1], r[2])
            for r in self.query(
                f"SELECT d.id, d.status, u.email FROM {t['digest']} d "  # noqa: S608
                f"JOIN {t['user']} u ON u.id = d.learner_id"
            )
        ] + [
            Promise(f"capstone{r[0]}", r[1], r[2])
            for r in self.query(
                f"SELECT e.id, e.status, u.email FROM {t['email']} e "  # noqa: S608
                f"JOIN {t['submission']} s ON s.id = e.submission_id "
                f"JOIN {t['user']} u ON u.id = s.learner_id"
            )
        ]
        proxy_log = next(p for p in self.net.processes if p.name == "haproxy").output()
        proxy = proxy_log_parse(proxy_log.splitlines())
        served_after = sum(
            1
            for a in recorder.attempts
            if a.started > timeline["web_restart"]
            and (e := proxy.get(a.request_id)) is not None
            and e.server == "web1"
            and e.status < 500
        )
        tasks_after = sum(p.output().count(" succeeded in ") for p in timeline["restarted_workers"])
        with self.sink_lock:
            deliveries = list(self.deliveries)
        return Record(
            attempts=list(recorder.attempts),
            proxy=proxy,
            web_kill=timeline["web_kill"],
            worker_kill=timeline["worker_kill"],
            posted=list(recorder.grades),
            applied=applied,
            releases=list(recorder.releases),
            release_rows=release_rows,
            promises=promises,
            deliveries=deliveries,
            interrupted=interrupted,
            owed_digests=frozenset(self.seed["digest_learners"]),
            restarted_web_served=served_after,
            restarted_worker_tasks=tasks_after,
        )

    def report(self, record: Record, timeline: dict[str, Any]) -> None:
        by_action: dict[str, list[float]] = {}
        for a in record.attempts:
            by_action.setdefault(a.action, []).append((a.ended - a.started) * 1000)
        say("figures:")
        for action, times in sorted(by_action.items()):
            times.sort()
            say(f"  {action:34} {len(times):5} requests, p50 {times[len(times) // 2]:6.0f} ms")
        per_server: dict[str, int] = {}
        for entry in record.proxy.values():
            per_server[entry.server] = per_server.get(entry.server, 0) + 1
        say(f"  requests per web node: {dict(sorted(per_server.items()))}")
        say(f"  restarted web1 served {record.restarted_web_served} requests; restarted "
            f"worker1 ran {record.restarted_worker_tasks} tasks")  # fmt: skip
        say(f"  mail sink: {len(record.deliveries)} messages; load {timeline['load_seconds']:.0f} "
            f"s, whole run {time.monotonic() - self.t0:.0f} s")  # fmt: skip

    def go(self) -> int:
        self.build()
        recorder = load.Recorder()
        timeline = self.drive(recorder)
        interrupted = self.drain(timeline)
        record = self.collect(recorder, timeline, interrupted)
        result = verdict(record)
        self.report(record, timeline)
        if not result.passed:
            self.dump_logs()
        say(result.line())
        return 0 if result.passed else 1

    def dump_logs(self) -> None:
        for process in self.net.processes:
            text = process.output()
            if "Traceback" in text or "ERROR" in text:
                say(f"--- {process.log.name} (last lines) ---")
                say(text[-1500:])


def wait_for_or_none(predicate: Callable[[], Any], *, limit: float, every: float = 0.1) -> Any:
    try:
        return wait_for(predicate, what="", limit=limit, every=every)
    except RuntimeError:
        return None


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f} s"


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if len(text) > 6 or not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"a whole number from {low} to {high}")
        return int(text)

    return parse


def _missing_tools() -> list[str]:
    tools = ["ip", "unshare", "setpriv", "openssl", "haproxy", "redis-server"]
    missing = [t for t in tools if shutil.which(t) is None]
    if not glob("/usr/lib/postgresql/*/bin/postgres"):
        missing.append("postgresql (Debian's /usr/lib/postgresql/*/bin)")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.cluster", description=__doc__)
    parser.add_argument("--seconds", type=_bounded(30, 150), default=60)
    parser.add_argument("--learners", type=_bounded(1, 40), default=10)
    parser.add_argument("--digests", type=_bounded(20, 2000), default=300)
    parser.add_argument("--submissions", type=_bounded(2, 200), default=40)
    parser.add_argument("--keep", action="store_true", help="keep the run's folder (logs)")
    args = parser.parse_args(argv)
    if args.submissions > args.digests:
        parser.error("--submissions: at most one per digest learner")
    if os.geteuid() != 0:
        print("make cluster needs root: it makes network namespaces", file=sys.stderr)
        return 2
    if missing := _missing_tools():
        print(f"make cluster needs {', '.join(missing)}", file=sys.stderr)
        return 2
    for name in remove_leftovers():
        say(f"removed {name}, left by an earlier run")
    run_dir = Path(tempfile.mkdtemp(prefix="recall-cluster-"))
    run_dir.chmod(0o755)

    def interrupted(signum: int, frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    network = Network(subnet=SUBNET, nodes=NODES, run_dir=run_dir)
    cluster: Cluster | None = None
    try:
        network.create()
        network.enter("driver")
        cluster = Cluster(network, args)
        return cluster.go()
    except (KeyboardInterrupt, Interrupted) as exc:
        say(f"FAIL: interrupted ({type(exc).__name__} {exc}); everything removed")
        return 130
    except Exception as exc:
        if cluster is not None:
            cluster.dump_logs()
        say(f"FAIL: the run broke off: {type(exc).__name__}: {str(exc)[-2000:]}")
        return 1
    finally:
        if cluster is not None:
            if cluster.db is not None:
                cluster.db.close()
            sink = getattr(cluster, "sink", None)
            if sink is not None:
                sink.stop()
        network.leave()
        network.destroy()
        if args.keep:
            say(f"(logs kept in {run_dir})")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
