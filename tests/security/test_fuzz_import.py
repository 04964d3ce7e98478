"""Numeric fuzzing of course content: every number of the manifest and of a quiz file, as TOML
literals (nan, inf, huge integers, wrong types), is read in range or refused naming the file and
line, within a bound. The loader touches no database, so each example is cheap; the import
command's exit 2 and unchanged database are in test_import_numbers.py."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from courses.services.content import course_content_load
from courses.services.content_specs import ContentError
from tests.security.fuzz import ANSWER_BOUND_S

QUIZ = "lessons/l.quiz.toml"
# A one-lesson course in the shipped course's layout: each load takes milliseconds.
MANIFEST = """
[course]
slug = "tiny"
title = "Tiny"
summary = "A course."
is_published = true

[scheduling]
desired_retention = 0.9
learning_steps_minutes = [1, 10]
relearning_steps_minutes = [10]
maximum_interval_days = 365
daily_new_limit = 20
daily_review_limit = 200

[[modules]]
slug = "m"
title = "M"

[[modules.lessons]]
slug = "l"
title = "L"
file = "lessons/l.md"
quiz = "lessons/l.quiz.toml"
objective = "Know why."
estimated_minutes = 12

[rubric]
title = "R"

[[rubric.criteria]]
key = "c"
title = "C"
description = "D"

[[rubric.criteria.levels]]
key = "missing"
title = "Missing"
points = 0
description = "None."

[[rubric.criteria.levels]]
key = "strong"
title = "Strong"
points = 4
description = "All of it."
"""
QUIZ_FILE = """
[[items]]
key = "n"
kind = "numeric"
prompt = "How many users fit?"
expected_value = 11
unit = "users"
tolerance = 0
explanation = "Because."
"""
# (file, key): every number a content author writes.
NUMBERS = [
    ("course.toml", "desired_retention"),
    ("course.toml", "learning_steps_minutes"),
    ("course.toml", "relearning_steps_minutes"),
    ("course.toml", "maximum_interval_days"),
    ("course.toml", "daily_new_limit"),
    ("course.toml", "daily_review_limit"),
    ("course.toml", "estimated_minutes"),
    ("course.toml", "points"),
    (QUIZ, "expected_value"),
    (QUIZ, "tolerance"),
]
# Generated integers stay under Python's 4,300-digit limit for int <-> text (str() itself refuses
# past it); the sampled "9" * 4301 goes past it, where tomllib raises a bare ValueError and the
# loader must still answer with a ContentError naming the file.
MAX_DIGITS = 4000

toml_number = st.one_of(
    st.integers(min_value=-(10**MAX_DIGITS), max_value=10**MAX_DIGITS).map(str),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(
        lambda f: {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(f), repr(f))
    ),
    st.sampled_from(
        [
            "nan",
            "+nan",
            "-inf",
            "1e400",
            "1e-400",
            "1e308",
            "99999999999",
            "9" * 4301,
            "9223372036854775808",
            "0",
            "-0.0",
            "-1",
            "1440",
            "0.05",
            "true",
            '"12"',
            "[]",
            "[1e12]",
            "[nan, 1]",
            "{ a = 1 }",
            "1979-05-27",
            "0x7fffffffffffffff",
            "1_000",
        ]
    ),
    st.lists(st.integers(min_value=-(10**30), max_value=10**30), max_size=12).map(str),
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("content") / "tiny"
    (root / "lessons").mkdir(parents=True)
    (root / "course.toml").write_text(MANIFEST)
    (root / "lessons" / "l.md").write_text("# L\n\nSome *text*.\n")
    (root / QUIZ).write_text(QUIZ_FILE)
    course_content_load(folder=root)  # the baseline loads
    return root


def _replace_first(text: str, key: str, literal: str) -> str:
    pattern = re.compile(rf"^(\s*{re.escape(key)}\s*=\s*).*$", re.MULTILINE)
    replaced, count = pattern.subn(lambda m: m.group(1) + literal, text, count=1)
    assert count == 1, key
    return replaced


def test_every_content_number_is_read_in_range_or_refused_naming_file_and_line(
    folder: Path,
) -> None:
    originals = {name: (folder / name).read_text() for name in {f for f, _ in NUMBERS}}
    seen: dict[str, int] = {key: 0 for _, key in NUMBERS}

    @settings(max_examples=2400, deadline=None, derandomize=True)
    @given(number=st.sampled_from(NUMBERS), literal=toml_number)
    def load(number: tuple[str, str], literal: str) -> None:
        name, key = number
        seen[key] += 1
        file = folder / name
        file.write_text(_replace_first(originals[name], key, literal))
        started = time.process_time()
        try:
            course_content_load(folder=folder)
        except ContentError as refused:
            message = str(refused)
            assert message.startswith(f"{file}:"), message
            assert "\n" not in message and len(message) < 400, message
        finally:
            file.write_text(originals[name])
        assert time.process_time() - started < ANSWER_BOUND_S

    load()
    assert min(seen.values()) >= 150, seen
