"""Hostile numbers in course content: refused naming file, line and field; exit 2, one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connections

from courses.models import Course
from home.management.commands.import_course import Command
from tests.courses.conftest import course, course_folder  # noqa: F401  (fixtures)
from tests.home.test_content_import import database_snapshot


@pytest.mark.parametrize(
    ("old", "new", "line", "field"),
    [
        (
            "desired_retention = 0.9",
            "desired_retention = nan",
            16,
            "'scheduling.desired_retention'",
        ),
        (
            "desired_retention = 0.9",
            "desired_retention = inf",
            16,
            "'scheduling.desired_retention'",
        ),
        (
            "maximum_interval_days = 365",
            "maximum_interval_days = 99999999999999999999",
            19,
            "'scheduling.maximum_interval_days' must be between 1 and 36500",
        ),
        (
            "daily_new_limit = 20",
            "daily_new_limit = 9223372036854775807",
            20,
            "'scheduling.daily_new_limit' must be between 0 and 1000",
        ),
        (
            "learning_steps_minutes = [1, 10]",
            "learning_steps_minutes = [1, nan]",
            17,
            "'scheduling.learning_steps_minutes[1]' must be between 0.1 and 1439",
        ),
        (
            "learning_steps_minutes = [1, 10]",
            "learning_steps_minutes = [1, 1440]",
            17,
            "a step of a day or more is a review interval",
        ),
        (
            "relearning_steps_minutes = [10]",
            "relearning_steps_minutes = [1e12]",
            18,
            "'scheduling.relearning_steps_minutes[0]'",
        ),
    ],
)
def test_a_hostile_number_exits_2_with_one_line_and_writes_nothing(
    course: Course,  # noqa: F811
    course_folder: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    old: str,
    new: str,
    line: int,
    field: str,
) -> None:
    """nan, inf, huge integers and day-long steps are refused before they reach the database."""
    manifest = course_folder / "course.toml"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new, 1))
    before = database_snapshot()
    # run_from_argv closes connections when it ends; the test's transaction must outlive it.
    monkeypatch.setattr(connections, "close_all", lambda: None)

    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "import_course", str(course_folder)])

    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert f"{manifest}:{line}: " in err
    assert field in err
    assert database_snapshot() == before
