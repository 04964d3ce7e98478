"""Harness for the reminder flow tests that cross the queue: a real SMTP server (aiosmtpd) in the
test process, and a real Celery worker process pointed at the test's database and broker."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email import message_from_bytes
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")
WAIT_LIMIT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], Any], *, what: str, timeout: float = WAIT_LIMIT) -> Any:
    """Poll until `predicate()` is truthy; fail after `timeout` seconds (never wait unbounded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


@dataclass
class Received:
    to: list[str]
    message_id: str
    subject: str
    received_at: float  # the whole message is in the server's hands (DATA complete)
    raw: bytes = b""
    acked_at: float | None = None  # the server has answered 250


@dataclass
class SMTPRecorder:
    """The handler of a local SMTP server. `refuse` holds replies to give instead of 250, one per
    message, in turn (e.g. 421, 451, 554); `delay` holds each message after receiving it and before
    answering 250, `rcpt_delay` holds each send before the message is sent, so a test can kill a
    worker while sends are in flight on either side of the server accepting the message."""

    delay: float = 0.0
    rcpt_delay: float = 0.0
    refuse: list[str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any
    ) -> str:
        # A delay here holds the send before the server has the message at all.
        if self.rcpt_delay:
            await asyncio.sleep(self.rcpt_delay)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            reply = self.refuse[len(self.refused) % len(self.refuse)]
            with self.lock:
                self.refused.append(reply)
            return reply
        parsed = message_from_bytes(envelope.content)
        record = Received(
            to=list(envelope.rcpt_tos),
            message_id=str(parsed["Message-ID"]),
            subject=str(parsed["Subject"]),
            received_at=time.monotonic(),
            raw=envelope.original_content or envelope.content,
        )
        with self.lock:
            self.received.append(record)
        if self.delay:
            await asyncio.sleep(self.delay)
        record.acked_at = time.monotonic()
        return "250 2.0.0 Message accepted for delivery"

    def per_recipient(self) -> Counter[str]:
        with self.lock:
            return Counter(to for r in self.received for to in r.to)


class SMTPServer:
    def __init__(self, recorder: SMTPRecorder) -> None:
        self.recorder = recorder
        self.port = free_port()
        self.controller = Controller(recorder, hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> SMTPServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"


def worker_database_url() -> str:
    """The URL of the database this test commits to, for the worker process."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    """`celery -A config worker` as a separate process group (so SIGKILL takes its pool too)."""

    def __init__(self, env: dict[str, str], *, queues: str = "email,default", name: str = "w1"):
        self.log = Path(tempfile.mkstemp(prefix=f"reminders-worker-{name}-", suffix=".log")[1])
        full_env = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
        full_env.update(env)
        full_env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        self._logfile = self.log.open("wb")
        self.process = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "config",
                "worker",
                "-Q",
                queues,
                "-c",
                "2",
                "-P",
                "prefork",
                "-n",
                f"reminders-test-{name}-{os.getpid()}@%h",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=full_env,
            stdout=self._logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.output()[-4000:]}")
            return " ready." in self.output()

        wait_for(ready, what="the Celery worker to start")

    def succeeded(self) -> int:
        return self.output().count("succeeded in")

    def kill(self) -> None:
        """SIGKILL the whole worker: main process and pool children, mid-whatever."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._logfile.close()
