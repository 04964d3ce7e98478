"""The courses tests' content fixtures serve the import tests here too."""

from tests.courses.conftest import course, course_folder

__all__ = ["course", "course_folder"]
