"""The instructor's pages in words (issue 44): exercises by name, errors as percentages, and
calculated items listed by a question with numbers instead of "[model]" placeholders."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.urls import reverse

from courses.models import Enrollment
from home.services.content_import import course_import
from quizzes.models import QuizItem
from quizzes.services.review import schedule_start
from quizzes.templatetags.calculated_items import as_percent, exercise_name, item_outline
from tests.factories import EnrollmentFactory, UserFactory

pytestmark = pytest.mark.django_db

COURSE = Path(__file__).resolve().parent / "calculated_course"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_exercise_names_and_percentages_read_as_words() -> None:
    assert exercise_name("training_memory_gb") == "Training memory (GB)"
    assert exercise_name("kv_bytes_per_token") == "KV cache bytes per token"
    # An exercise the list does not know yet still reads as words.
    assert exercise_name("moe_active_bytes_gb") == "MoE active bytes (GB)"
    assert exercise_name("spot_training_cost_usd") == "Spot training cost ($)"
    assert as_percent(3.299) == "330 %"
    assert as_percent(0.042) == "4.2 %"
    assert as_percent(None) == "—"


def test_a_calculated_item_is_listed_by_a_question_with_numbers() -> None:
    course_import(folder=COURSE)
    item = QuizItem.objects.get(key="kv-bytes")
    outline = item_outline(item)
    assert "{" not in outline and "[" not in outline
    assert re.search(r"\d+ layers", outline)
    assert item_outline(item) == outline  # the same draw every time


def test_the_calculated_page_names_exercises_and_shows_percentages(client, instructor) -> None:
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    item = QuizItem.objects.get(key="kv-bytes")
    learner = UserFactory()
    EnrollmentFactory(course=course, user=learner)
    schedule_start(
        learner=learner, item=item, card_token=uuid.uuid4(), rating=1,
        now=T0 + timedelta(minutes=1), answer_value=65_536, expected_value=131_072,
    )  # fmt: skip
    client.force_login(instructor)
    page = client.get(reverse("quizzes:course_calculated", args=[course.slug])).content.decode()
    assert "KV cache bytes per token" in page and "kv_bytes_per_token" not in page
    assert (
        'data-testid="median-error">50.0 %<' in page or 'data-testid="median-error">50 %<' in page
    )
    assert "[layers]" not in page and "{layers}" not in page
    stats = client.get(reverse("quizzes:course_stats", args=[course.slug])).content.decode()
    assert "[layers]" not in stats and "{layers}" not in stats
    # Each table region on the page has a name of its own (axe landmark-unique).
    names = re.findall(r'role="region" aria-label="([^"]+)"', stats)
    assert len(names) == len(set(names)) >= 2
