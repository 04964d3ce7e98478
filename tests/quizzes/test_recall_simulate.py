"""`manage.py recall simulate`: its JSON contract, what the balancer and easy days do to the
simulated weeks of the shipped course, and one line with exit 2 for every bad flag."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from courses.models import Course
from home.services.content_import import course_import

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "content" / "gpus-tpus-ai-hardware"


@pytest.fixture
def course(db: None) -> Course:
    return course_import(folder=SHIPPED).course


def simulate(*flags: str) -> dict:  # type: ignore[type-arg]
    out = io.StringIO()
    call_command("recall", "simulate", *flags, "--json", stdout=out)
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_the_json_contract(course: Course) -> None:
    run = simulate("--learners", "10", "--days", "21", "--seed", "3")
    assert len(run["days"]) == 21
    assert run["days"][0] == {"date": "2026-01-05", "weekday": "Mon", "reviews": 0}
    assert {d["weekday"] for d in run["days"]} == {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
    assert sum(d["reviews"] for d in run["days"]) > 0
    assert 0.8 < run["retention"] < 1.0
    assert run["cv"] >= 0 and run["mean_reviews"] > 0
    assert simulate("--learners", "10", "--days", "21", "--seed", "3") == run
    assert simulate("--learners", "10", "--days", "21", "--seed", "4") != run


def test_the_balancer_evens_the_days_without_costing_retention(course: Course) -> None:
    """200 learners over 60 days (the issue's check): a lower cv, retention within a point."""
    balanced = simulate("--learners", "200", "--days", "60", "--seed", "7")
    plain = simulate("--learners", "200", "--days", "60", "--seed", "7", "--no-load-balance")
    assert balanced["cv"] < plain["cv"]
    assert abs(balanced["retention"] - plain["retention"]) < 0.01


def test_a_minimum_sunday_stays_light(course: Course) -> None:
    run = simulate("--learners", "60", "--days", "49", "--seed", "5", "--easy-days", "sun=minimum")
    sundays = [d["reviews"] for d in run["days"][7:] if d["weekday"] == "Sun"]
    saturdays = [d["reviews"] for d in run["days"][7:] if d["weekday"] == "Sat"]
    assert sum(sundays) / len(sundays) <= run["mean_reviews"] / 4
    assert sum(sundays) < sum(saturdays) / 4


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--learners", "0", "--days", "60", "--seed", "1"], "--learners"),
        (["--learners", "ten", "--days", "60", "--seed", "1"], "--learners"),
        (["--learners", "9" * 30, "--days", "60", "--seed", "1"], "--learners"),
        (["--learners", "5", "--days", "366", "--seed", "1"], "--days"),
        (["--learners", "5", "--days", "60", "--seed", "-1"], "--seed"),
        (["--learners", "5", "--days", "60"], "--seed"),
        (
            ["--learners", "5", "--days", "60", "--seed", "1", "--easy-days", "sun=off"],
            "--easy-days",
        ),
        (
            ["--learners", "5", "--days", "60", "--seed", "1", "--easy-days", "funday=minimum"],
            "--easy-days",
        ),
        (["--learners", "5", "--days", "60", "--seed", "1", "--wat"], "--wat"),
    ],
)
def test_bad_flags_exit_2_with_one_line(flags: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "recall", "simulate", *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert says in done.stderr
