"""The simulation contract: `manage.py capstone peer_simulate ... --json` prints the figures,
leaves nothing behind, and bad flags exit 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.core.management import call_command

from accounts.models import User
from courses.models import Course
from planner.capstone.peer_models import PeerPlan

pytestmark = pytest.mark.django_db

KEYS = {
    "plans",
    "graded_by_peers",
    "flagged_for_staff",
    "within_one_level_share",
    "mae_levels_model",
    "mae_levels_median",
    "assignment_ms_p95",
}


def test_the_simulation_prints_its_figures_and_removes_its_cohort(capsys) -> None:  # type: ignore[no-untyped-def]
    before = (User.objects.count(), Course.objects.count(), PeerPlan.objects.count())
    call_command(
        "capstone",
        "peer_simulate",
        "--plans",
        "60",
        "--assessors-per-plan",
        "3",
        "--biased",
        "0.2",
        "--random",
        "0.1",
        "--seed",
        "7",
        "--json",
    )
    figures = json.loads(capsys.readouterr().out)
    assert KEYS <= set(figures)
    assert figures["plans"] == 60
    assert figures["graded_by_peers"] + figures["flagged_for_staff"] == 60
    assert figures["within_one_level_share"] >= 0.9
    assert figures["mae_levels_model"] <= figures["mae_levels_median"]
    assert (User.objects.count(), Course.objects.count(), PeerPlan.objects.count()) == before


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--plans", "0"], "--plans"),
        (["--plans", "abc"], "--plans"),
        (["--plans", "9" * 400], "--plans"),
        (["--plans", "3", "--assessors-per-plan", "3"], "--plans"),
        (["--assessors-per-plan", "11"], "--assessors-per-plan"),
        (["--biased", "1.5"], "--biased"),
        (["--random", "-0.1"], "--random"),
        (["--biased", "0.6", "--random", "0.6"], "--random"),
        (["--seed", "nan"], "--seed"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_flags_exit_2_with_one_line(flags: list[str], named: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "capstone", "peer_simulate", *flags, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0]


def test_a_seed_gives_the_same_figures_twice(capsys) -> None:  # type: ignore[no-untyped-def]
    runs = []
    for _run in range(2):
        call_command("capstone", "peer_simulate", "--plans", "30", "--seed", "3", "--json")
        figures = json.loads(capsys.readouterr().out)
        figures.pop("assignment_ms_p95")
        runs.append(figures)
    assert runs[0] == runs[1]


def test_the_done_when_holds_at_300_plans(capsys) -> None:  # type: ignore[no-untyped-def]
    """300 plans, 3 assessors each, 20 % biased by a level, 10 % at random: every plan graded
    or flagged, the model's error below the plain median's, 90 % within a level."""
    call_command(
        "capstone",
        "peer_simulate",
        "--plans",
        "300",
        "--assessors-per-plan",
        "3",
        "--biased",
        "0.2",
        "--random",
        "0.1",
        "--seed",
        "1",
        "--json",
    )
    figures = json.loads(capsys.readouterr().out)
    assert figures["graded_by_peers"] + figures["flagged_for_staff"] == figures["plans"] == 300
    assert figures["mae_levels_model"] < figures["mae_levels_median"]
    assert figures["within_one_level_share"] >= 0.9
