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
from typing import Any, Literal

from aiosmtpd.controller import Controller
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")
# Generous because a loaded machine (two cores shared by several test runs) can take tens of
# seconds to start a worker or to run a retry's backoff; every wait still ends.
WAIT_LIMIT = 90.0
# Worker pool processes (`-c`): how many sends can be in flight at once.
CONCURRENCY = 2


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
    message, in turn (e.g. 421, 451, 554); `refuse_recipients`, replies to give the next
    recipients instead (e.g. 550), each once.

    `hold` makes a gate for the fault test: every send after the first `pass_first` is held at
    the server until `release()`, either before the server has the message (`before_accept`: in
    RCPT) or after it has the whole message but before it answers 250 (`after_accept`). While
    sends are held, nothing the worker does can move on, so a test can SIGKILL it at a known point
    however slow the machine is; `held` counts the sends waiting at the gate."""

    hold: Literal["", "before_accept", "after_accept"] = ""
    pass_first: int = 1
    refuse: list[str] = field(default_factory=list)
    refuse_recipients: list[str] = field(default_factory=list)
    # Until this moment (time.monotonic()), every message is answered `outage_reply`.
    outage_until: float = 0.0
    outage_reply: str = "451 4.3.0 Try again later"
    # The first `stall` messages are taken whole, then answered only after `stall_seconds`
    # (past the client's timeout: it cannot know whether the server has them).
    stall: int = 0
    stall_seconds: float = 0.0
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    held: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    _arrived: int = 0
    _released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        """Open the gate: held sends go on and later sends are not held."""
        self._released.set()

    async def _gate(self, point: str) -> None:
        if self.hold != point or self._released.is_set():
            return
        with self.lock:
            self._arrived += 1
            if self._arrived <= self.pass_first:
                return
            self.held += 1
        try:
            # Never blocks the server's event loop: other sessions go on while this one waits.
            while not self._released.is_set():
                await asyncio.sleep(0.02)
        finally:
            with self.lock:
                self.held -= 1

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any
    ) -> str:
        await self._gate("before_accept")
        if self.refuse_recipients:
            return self.refuse_recipients.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if time.monotonic() < self.outage_until:
            with self.lock:
                self.refused.append(self.outage_reply)
            return self.outage_reply
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
            stalled = len(self.received) <= self.stall
        if stalled:
            await asyncio.sleep(self.stall_seconds)
        await self._gate("after_accept")
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
        self.recorder.release()  # no session stays parked at the gate
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

    def __init__(self, env: dict[str, str], *, queues: str = "reminders,default", name: str = "w1"):
        self.nodename = f"reminders-test-{name}-{os.getpid()}@{socket.gethostname()}"
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
                str(CONCURRENCY),
                "-P",
                "prefork",
                "-n",
                self.nodename,
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

    def wait_ready(self, *, ping: bool = True) -> None:
        """Wait for the worker's " ready." line (its pool is up and it consumes its queues), then,
        on a Redis broker, for its answer to a control ping by node name: only then does a test
        start the clock on anything the worker does."""

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.output()[-4000:]}")
            return " ready." in self.output()

        try:
            wait_for(ready, what="the Celery worker to start")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; its log:\n{self.output()[-2000:]}") from None
        if ping:
            from config.celery import app

            def answers() -> bool:
                if self.process.poll() is not None:
                    raise AssertionError(f"worker exited early:\n{self.output()[-4000:]}")
                return bool(app.control.ping(destination=[self.nodename], timeout=1.0))

            wait_for(answers, what=f"{self.nodename} to answer a ping")

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


class Beat:
    """`celery -A config beat`: the periodic scan and the outbox sweeps, as production runs them
    (OUTBOX_SWEEP_SECONDS in `env` makes the sweeps as frequent as a test needs)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="outage-beat-"))
        self.log = self.dir / "beat.log"
        full_env = {k: v for k, v in os.environ.items() if k != "CELERY_TASK_ALWAYS_EAGER"}
        full_env.update(env)
        full_env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        self._logfile = self.log.open("wb")
        self.process = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "config",
                "beat",
                "--schedule",
                str(self.dir / "schedule"),
                "--loglevel",
                "INFO",
            ],
            cwd=ROOT,
            env=full_env,
            stdout=self._logfile,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._logfile.close()
