"""`make run` serves the URL it prints: the Makefile's own `run-processes` target (the Procfile
under honcho, as `make run` starts it) on a free port answers at the printed URL, and the digest
its worker mails links to that same host and port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import urllib.error
import urllib.request
from datetime import timedelta
from email import message_from_string
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from tests.reminders.factories import learner_due
from tests.reminders.worker import ROOT, free_port, wait_for, worker_database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# Variables of the test's own environment that would choose other services or another port.
_NOT_PASSED = {
    "CELERY_TASK_ALWAYS_EAGER", "REDIS_URL", "EMAIL_URL", "SITE_URL", "PORT", "DJANGO_ENV",
    "MAKEFLAGS", "MAKELEVEL", "MFLAGS",
}  # fmt: skip


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _mailed_text(mail_dir: Path) -> list[str]:
    """The text parts of every message the file backend wrote (one file per connection, its
    messages separated by a line of dashes)."""
    texts = []
    for path in sorted(mail_dir.glob("*.log")):
        for raw in re.split(r"\n-{79}\n", path.read_text()):
            if not raw.strip():
                continue
            for part in message_from_string(raw).walk():
                if part.get_content_type() == "text/plain":
                    texts.append(part.get_payload(decode=True).decode())
    return texts


def test_plain_make_run_prints_the_port_it_hands_the_web_process() -> None:
    """No PORT: the printed URL, SITE_URL and honcho's port are the same 8000."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_PASSED}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "run-processes"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert 'echo "Site: http://127.0.0.1:8000/ ' in dry
    assert "SITE_URL=http://127.0.0.1:8000 " in dry and "honcho start -f Procfile -p 8000" in dry


def test_make_run_answers_at_the_printed_url_and_mails_links_there(tmp_path: Path) -> None:
    learner_due(
        due=timezone.now() - timedelta(hours=1),
        email="newcomer@example.com",
        reminder_hour=0,
        day_start_hour=0,
    )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in _NOT_PASSED}
    env.update(
        PORT=str(port),
        VAR_DIR=str(tmp_path),  # the embedded broker, mail folder and beat schedule
        DATABASE_URL=worker_database_url(),
        REMINDER_SCAN_SECONDS="2",
    )
    log = tmp_path / "make-run.log"
    with log.open("wb") as out:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "run-processes"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:

        def printed() -> str | None:
            if make.poll() is not None:
                raise AssertionError(f"make exited {make.returncode}:\n{log.read_text()[-3000:]}")
            found = re.search(r"^Site: (\S+)", log.read_text(errors="replace"), re.MULTILINE)
            return found.group(1) if found else None

        site = wait_for(printed, what="make run's Site: line")
        assert site == f"http://127.0.0.1:{port}/"
        wait_for(lambda: _status(site) == 200, what=f"{site} to answer; log:\n{log.read_text()}")

        def digest() -> list[str]:
            return [t for t in _mailed_text(tmp_path / "mail") if "/reminders/" in t]

        wait_for(digest, what=f"the digest in {tmp_path / 'mail'}; log:\n{log.read_text()[-4000:]}")
        links = re.findall(r"https?://[^\s>\"]+", "\n".join(digest()))
        assert links, digest()
        assert {urlsplit(link).netloc for link in links} == {f"127.0.0.1:{port}"}
        review = next(link for link in links if "/reminders/" in link)
        assert _status(review) in (200, 302)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGTERM)
            try:
                make.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(make.pid, signal.SIGKILL)
                make.wait(timeout=10)
