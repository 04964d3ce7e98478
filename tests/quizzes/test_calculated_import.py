"""The importer draws every calculated template and refuses a broken one with file:line: reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from courses.services.content import course_content_load
from courses.services.content_specs import ContentError
from home.services.content_import import course_import
from quizzes.models import QuizItem

COURSE = Path(__file__).resolve().parent / "calculated_course"

GOOD_ITEM = """[[items]]
key = "free-memory"
kind = "calculated"
exercise = "memory_fit"
prompt = "A {gpu_memory_gb} GB GPU holds {model_gb} GB of weights and {overhead_gb} GB of overhead."
unit = "GB"
relative_tolerance = 0.02
answer_range = [1, 200]
[items.variables]
gpu_memory_gb = [24, 40, 48, 80]
model_gb = { min = 2, max = 16, step = 2 }
overhead_gb = { min = 1, max = 4 }
"""


def folder_with(tmp_path: Path, quiz: str) -> Path:
    folder = tmp_path / "course"
    shutil.copytree(COURSE, folder)
    (folder / "lessons" / "memory.quiz.toml").write_text(quiz, encoding="utf-8")
    return folder


def refusal(tmp_path: Path, quiz: str) -> str:
    with pytest.raises(ContentError) as caught:
        course_content_load(folder=folder_with(tmp_path, quiz))
    return str(caught.value)


def test_a_sound_template_loads_with_its_variables(tmp_path: Path) -> None:
    spec = course_content_load(folder=folder_with(tmp_path, GOOD_ITEM))
    (item,) = spec.modules[0].lessons[0].items
    assert item.calculated is not None
    assert item.calculated.exercise == "memory_fit"
    assert item.calculated.variables["model_gb"] == {"min": 2, "max": 16, "step": 2}
    assert item.calculated.answer_range == (1.0, 200.0)


@pytest.mark.django_db
def test_an_import_stores_the_template_on_the_item() -> None:
    course_import(folder=COURSE)
    item = QuizItem.objects.get(key="kv-bytes")
    assert item.kind == QuizItem.Kind.CALCULATED
    assert item.calculation["exercise"] == "kv_bytes_per_token"
    assert item.calculation["variables"]["kv_heads"] == [4, 8, 16]
    assert item.calculation["relative_tolerance"] == 0.01
    assert item.calculation["answer_range"] == [1000, 10_000_000]


@pytest.mark.parametrize(
    ("old", "new", "where", "reason"),
    [
        # The prompt names a placeholder that is neither a variable nor a fact of the exercise.
        (
            "{overhead_gb} GB of overhead.",
            "{overhead_gb} GB ({overhead} GB) of overhead.",
            ":5:",
            "the prompt names {overhead}, which is neither a variable nor a fact",
        ),
        # A variable the prompt never uses.
        (
            "overhead_gb = { min = 1, max = 4 }",
            "overhead_gb = { min = 1, max = 4 }\nusers = [1, 2]",
            ":13:",
            "variable 'users' is defined but the prompt never uses {users}",
        ),
        # A malformed range.
        (
            "model_gb = { min = 2, max = 16, step = 2 }",
            "model_gb = { min = 16, max = 2 }",
            ":11:",
            "has min above max",
        ),
        (
            "model_gb = { min = 2, max = 16, step = 2 }",
            'model_gb = "big"',
            ":11:",
            "must be a list of values or a range",
        ),
        # A draw that is not a valid engine input (the weights' range goes negative).
        (
            "model_gb = { min = 2, max = 16, step = 2 }",
            "model_gb = { min = -4, max = 16, step = 2 }",
            ":11:",
            "is not a valid input: model_gb: must be between",
        ),
        # Answers outside the template's own bounds (80 − 2 − 1 = 77 GB > 50).
        (
            "answer_range = [1, 200]",
            "answer_range = [1, 50]",
            ":8:",
            "outside answer_range [1, 50]",
        ),
        # An exercise the engine does not have.
        ('exercise = "memory_fit"', 'exercise = "memory_fitness"', ":4:", "unknown exercise"),
        # A numeric item's key on a calculated one.
        (
            'unit = "GB"',
            'unit = "GB"\nexpected_value = 7',
            ":7:",
            "a calculated item's answer is worked by its exercise",
        ),
    ],
)
def test_a_broken_template_is_refused_with_file_line_and_reason(
    tmp_path: Path, old: str, new: str, where: str, reason: str
) -> None:
    assert old in GOOD_ITEM
    message = refusal(tmp_path, GOOD_ITEM.replace(old, new))
    assert f"memory.quiz.toml{where}" in message, message
    assert reason in message, message


def test_a_numeric_item_cannot_carry_a_template(tmp_path: Path) -> None:
    quiz = """[[items]]
key = "plain"
kind = "numeric"
prompt = "24 - 14 - 3?"
expected_value = 7
exercise = "memory_fit"
"""
    message = refusal(tmp_path, quiz)
    assert "memory.quiz.toml:6:" in message and "only a calculated item takes" in message
