"""The instructors' page of calculated items: again-rate, median relative error and the known
mistake that wrong numbers match."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.urls import reverse

from courses.models import Enrollment
from home.services.content_import import course_import
from quizzes.models import QuizItem
from quizzes.selectors.calculated_stats import (
    GIB_PER_GB,
    calculated_stats_for,
    known_mistake,
)
from quizzes.services.review import schedule_start
from tests.factories import EnrollmentFactory, UserFactory

pytestmark = pytest.mark.django_db

COURSE = Path(__file__).resolve().parent / "calculated_course"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("answer", "expected", "mistake"),
    [
        (7.0 * GIB_PER_GB, 7.0, "GB and GiB"),
        (7.0 / GIB_PER_GB, 7.0, "GB and GiB"),
        (65_536, 131_072, "factor 2 for K and V"),
        (262_144, 131_072, "factor 2 for K and V"),
        (8 * 131_072, 131_072, "bits and bytes"),
        (131_072 / 8, 131_072, "bits and bytes"),
        (100_000, 131_072, None),
    ],
)
def test_known_mistakes_are_recognised_either_way(answer, expected, mistake):
    found = known_mistake(answer=answer, expected=expected)
    assert (found is None) if mistake is None else (mistake in (found or ""))


def answered(item: QuizItem, rating: int, answer: float, expected: float) -> None:
    learner = UserFactory()
    EnrollmentFactory(course=item.lesson.module.course, user=learner)
    schedule_start(
        learner=learner, item=item, card_token=uuid.uuid4(), rating=rating,
        now=T0 + timedelta(minutes=1), answer_value=answer, expected_value=expected,
    )  # fmt: skip


def test_the_page_shows_again_rate_median_error_and_the_common_mistake(client, instructor):
    """Four learners: one right, two forgot the factor 2, one off by GiB. Again-rate 75 %,
    median relative error 0.5, the common mistake the factor 2 (2 of 3 wrong)."""
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    item = QuizItem.objects.get(key="kv-bytes")
    answered(item, 3, 131_072, 131_072)
    answered(item, 1, 65_536, 131_072)
    answered(item, 1, 262_144, 262_144 * 2)
    answered(item, 1, 131_072 * GIB_PER_GB, 131_072)

    stats = {s.item.key: s for s in calculated_stats_for(course=course)}
    kv = stats["kv-bytes"]
    assert kv.reviews == 4 and kv.again_rate == 0.75
    assert kv.median_relative_error == pytest.approx((0.5 + GIB_PER_GB - 1) / 2)
    assert kv.wrong == 3
    assert kv.mistake is not None and "factor 2" in kv.mistake and kv.mistake_count == 2
    assert stats["free-memory"].reviews == 0

    client.force_login(instructor)
    page = client.get(reverse("quizzes:course_calculated", args=[course.slug])).content.decode()
    assert "75 %" in page and "factor 2 for K and V forgotten or doubled" in page
    assert "2 of 3 wrong" in page


def test_a_learner_cannot_open_the_page(client, learner):
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=learner)
    client.force_login(learner)
    response = client.get(reverse("quizzes:course_calculated", args=[course.slug]))
    assert response.status_code in (403, 404)


def test_lists_name_a_templates_variables_instead_of_showing_braces() -> None:
    """Statistics and the dashboard list a calculated item by its template, variables named."""
    from quizzes.templatetags.calculated_items import prompt_outline

    assert (
        prompt_outline("A {model} on one {gpu} at {context_tokens} tokens: tokens/s?")
        == "A [model] on one [gpu] at [context tokens] tokens: tokens/s?"
    )
    assert prompt_outline("A 24 GB GPU holds 14 GB of weights.") == (
        "A 24 GB GPU holds 14 GB of weights."
    )


def test_lora_answers_priced_as_full_fine_tuning_or_without_the_cuda_context_are_named() -> None:
    """On the course's LoRA item, a learner who prices full fine-tuning (16 bytes per parameter)
    and one who leaves out the CUDA context are each counted under their mistake: the instructor
    reads what went wrong, not "none known"."""
    from quizzes.calculated import problem_for

    shipped = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"
    course = course_import(folder=shipped).course
    item = QuizItem.objects.get(key="qlora-training-memory")
    wrong = []
    for mistake in ("priced full fine-tuning for LoRA", "left out the CUDA context"):
        for _ in range(20):  # a draw whose mistaken number falls outside the tolerance
            learner = UserFactory()
            problem = problem_for(item, learner_id=learner.pk, review=0)
            value = problem.solution.mistakes[mistake]
            if not problem.is_correct(value):
                break
        EnrollmentFactory(course=course, user=learner)
        schedule_start(
            learner=learner, item=item, card_token=uuid.uuid4(), rating=1,
            now=T0 + timedelta(minutes=1), answer_value=value,
            expected_value=problem.solution.answer,
        )  # fmt: skip
        wrong.append(mistake)
    stats = {s.item.key: s for s in calculated_stats_for(course=course)}["qlora-training-memory"]
    assert stats.wrong == 2
    assert stats.mistake in wrong and stats.mistake_count == 1
