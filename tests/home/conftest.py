"""The courses tests' content fixtures serve the import tests here too; `both_courses` imports
the two shipped courses, for the pages, jobs and emails that must work with more than one."""

from __future__ import annotations

from pathlib import Path

import pytest

from courses.models import Course
from home.services.content_import import course_import
from tests.courses.conftest import course, course_folder

__all__ = ["both_courses", "course", "course_folder"]

CONTENT = Path(__file__).resolve().parents[2] / "content"
SHIPPED_COURSES = ("gpus-tpus-ai-hardware", "serving-on-a-budget")


@pytest.fixture
def both_courses(db: None) -> list[Course]:
    """The two shipped courses, imported as `make run` imports them."""
    return [course_import(folder=CONTENT / name).course for name in SHIPPED_COURSES]
