"""Skills in the content files: the course's list, each item's tags (in its quiz file or in
skills.toml), checked by the importer with file, line and reason; every shipped item tagged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from courses.services.content import course_content_load
from courses.services.content_specs import ContentError
from home.services.content_import import course_import
from quizzes.models import CourseSkill, QuizItem

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).resolve().parent / "calculated_course"
SKILLS = """[[skills]]
slug = "memory-fit"
title = "Memory fit"

[[skills]]
slug = "kv-cache"
title = "KV cache"

[items]
free-memory = ["memory-fit"]
kv-bytes = ["kv-cache"]
"""


def course_folder(tmp_path: Path, skills: str | None = SKILLS) -> Path:
    folder = tmp_path / "course"
    shutil.copytree(SMALL, folder)
    if skills is not None:
        (folder / "skills.toml").write_text(skills, encoding="utf-8")
    return folder


def refusal(folder: Path) -> ContentError:
    with pytest.raises(ContentError) as caught:
        course_content_load(folder=folder)
    return caught.value


@pytest.mark.parametrize("course", ["gpus-tpus-ai-hardware", "serving-on-a-budget"])
def test_every_shipped_item_carries_a_listed_skill(course: str) -> None:
    spec = course_content_load(folder=ROOT / "content" / course)
    listed = {s.slug for s in spec.skills}
    items = [i for m in spec.modules for lesson in m.lessons for i in lesson.items]
    assert items and listed
    for item in items:
        assert item.skills and set(item.skills) <= listed, item.key


def test_a_course_without_skills_loads_as_before(tmp_path: Path) -> None:
    spec = course_content_load(folder=course_folder(tmp_path, skills=None))
    assert spec.skills == ()


@pytest.mark.django_db
def test_an_import_stores_the_list_and_each_items_tags(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    course = course_import(folder=folder).course
    assert list(CourseSkill.objects.filter(course=course).values_list("slug", "title")) == [
        ("memory-fit", "Memory fit"),
        ("kv-cache", "KV cache"),
    ]
    assert QuizItem.objects.get(key="kv-bytes").skills == ["kv-cache"]
    assert not course_import(folder=folder).changed
    # Tags in the quiz file add to the mapped ones.
    quiz = folder / "lessons" / "memory.quiz.toml"
    quiz.write_text(
        quiz.read_text().replace(
            'key = "kv-bytes"\n', 'key = "kv-bytes"\nskills = ["memory-fit"]\n'
        ),
        encoding="utf-8",
    )
    course_import(folder=folder)
    assert QuizItem.objects.get(key="kv-bytes").skills == ["memory-fit", "kv-cache"]


def test_an_untagged_item_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    error = refusal(course_folder(tmp_path, SKILLS.replace('kv-bytes = ["kv-cache"]\n', "")))
    assert error.file.name == "memory.quiz.toml" and error.line == 16
    assert "quiz item 'kv-bytes' has no skill" in error.reason
    assert "skills.toml" in error.reason and "memory-fit, kv-cache" in error.reason


def test_a_mapping_for_a_removed_item_is_ignored_and_a_misspelt_one_fails(tmp_path: Path) -> None:
    spec = course_content_load(
        folder=course_folder(tmp_path, SKILLS + 'gone-item = ["kv-cache"]\n')
    )
    assert spec.skills
    error = refusal(course_folder(tmp_path / "typo", SKILLS.replace("kv-bytes =", "kv-byte =")))
    assert "quiz item 'kv-bytes' has no skill" in error.reason


def test_an_unknown_skill_in_skills_toml_is_refused_at_its_line(tmp_path: Path) -> None:
    error = refusal(course_folder(tmp_path, SKILLS.replace('["kv-cache"]', '["kv-cash"]')))
    assert error.file.name == "skills.toml" and error.line == 11
    assert "unknown skill 'kv-cash'" in error.reason


def test_an_unknown_skill_on_an_item_is_refused_at_the_item(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    quiz = folder / "lessons" / "memory.quiz.toml"
    quiz.write_text(
        quiz.read_text().replace('key = "kv-bytes"\n', 'key = "kv-bytes"\nskills = ["tpus"]\n'),
        encoding="utf-8",
    )
    error = refusal(folder)
    assert error.file.name == "memory.quiz.toml" and error.line == 16
    assert "unknown skill 'tpus'" in error.reason


@pytest.mark.parametrize(
    ("skills", "line", "reason"),
    [
        (SKILLS.replace('["kv-cache"]', '"kv-cache"'), 11, "must be a list of 1 to 8"),
        (SKILLS.replace('["kv-cache"]', '["KV Cache"]'), 11, "must be a list of 1 to 8"),
        (SKILLS.replace('["kv-cache"]', '["kv-cache", "kv-cache"]'), 11, "distinct"),
        (SKILLS.replace('slug = "kv-cache"', 'slug = "memory-fit"'), 6, "duplicate skill slug"),
        ("[items]\n" + SKILLS.split("[items]\n")[1], None, "the course lists none"),
    ],
)
def test_malformed_skills_files_are_refused(
    tmp_path: Path, skills: str, line: int | None, reason: str
) -> None:
    error = refusal(course_folder(tmp_path, skills))
    assert error.file.name == "skills.toml"
    assert error.line == line
    assert reason in error.reason
