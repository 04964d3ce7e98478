"""Fixtures for the courses tests: the shipped course, imported, and a private copy of its folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from courses.models import Course
from home.services.content_import import course_import

SHIPPED = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"


@pytest.fixture
def course_folder(tmp_path: Path) -> Path:
    """A copy of the shipped course folder that a test may edit or break."""
    folder = tmp_path / "gpus-tpus-ai-hardware"
    shutil.copytree(SHIPPED, folder)
    return folder


@pytest.fixture
def course(db: None) -> Course:
    """The shipped course, imported."""
    return course_import(folder=SHIPPED).course
