"""The layer contract that `make lint` checks: it holds for the project, and it fails, naming the
import, when a lower app imports from a higher one (so nobody can break it unnoticed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ["config", "core", "accounts", "courses", "quizzes", "planner", "reminders", "home"]
# The order of the apps, lowest first; a template folder may use templates of its own layer or
# a lower one (the planner and quizzes share a layer and may not use each other's).
TEMPLATE_LAYERS = {
    "account": 0,
    "allauth": 0,
    "accounts": 0,
    "courses": 1,
    "quizzes": 2,
    "planner": 2,
    "reminders": 3,
    "home": 4,
}


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_project_keeps_its_layers() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "upward_import", "message"),
    [
        ("courses/upward.py", "import quizzes.models", "courses is not allowed to import quizzes"),
        (
            "quizzes/upward.py",
            "import reminders.models",
            "quizzes is not allowed to import reminders",
        ),
        ("planner/upward.py", "import quizzes.models", "planner is not allowed to import quizzes"),
        ("accounts/upward.py", "import home.views", "accounts is not allowed to import home"),
        (
            "planner/capacity/upward.py",
            "import django.db",
            "planner.capacity is not allowed to import django",
        ),
        (
            "planner/capacity/upward2.py",
            "import core.bounds",
            "planner.capacity is not allowed to import core",
        ),
        (
            "planner/cards/upward.py",
            "import planner.capstone.models",
            "planner.cards is not allowed to import planner.capstone",
        ),
    ],
)
def test_an_upward_import_fails_the_lint(
    tmp_path: Path, module: str, upward_import: str, message: str
) -> None:
    """A copy of the project with one upward import added fails `lint-imports`, which names it."""
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package,
            tmp_path / package,
            ignore=shutil.ignore_patterns("__pycache__", "migrations", "data"),
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / module).write_text(f'"""A deliberate upward import."""\n\n{upward_import}\n')

    result = _lint_imports(tmp_path)

    print(result.stdout[-1500:])  # shows the failing example in CI's log
    assert result.returncode == 1
    assert message in result.stdout


def _tag_libraries() -> dict[str, str]:
    """Template tag library name -> the app that defines it."""
    return {
        module.stem: module.parents[1].name
        for package in PACKAGES
        for module in (ROOT / package).glob("templatetags/*.py")
        if module.stem != "__init__"
    }


def test_templates_only_use_templates_of_their_own_layer_or_below() -> None:
    tag = re.compile(r"""{%\s*(?:include|extends)\s+["']([\w-]+)/""")
    load = re.compile(r"{%\s*load\s+([\w\s]+?)\s*%}")
    libraries = _tag_libraries()
    upward = []
    for template in (ROOT / "templates").rglob("*.html"):
        folder = template.relative_to(ROOT / "templates").parts[0]
        if folder not in TEMPLATE_LAYERS:
            continue
        text = template.read_text()
        loaded = [
            libraries[lib]
            for found in load.findall(text)
            for lib in found.split()
            if lib in libraries
        ]
        for used in tag.findall(text) + loaded:
            if used in TEMPLATE_LAYERS and (
                TEMPLATE_LAYERS[used] > TEMPLATE_LAYERS[folder]
                or (
                    TEMPLATE_LAYERS[used] == TEMPLATE_LAYERS[folder]
                    and used != folder
                    and used in {"quizzes", "planner"}
                    and folder in {"quizzes", "planner"}
                )
            ):
                upward.append(f"{template.relative_to(ROOT)} uses {used}/")
    assert upward == []
