"""A calculated item's next review stays unseen until it is due: once the item is scheduled, its
lesson page practises on numbers of its own, and no number posted there reveals the answer the
review will ask for."""

from __future__ import annotations

import html
import re
import uuid

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Course
from home.services.content_import import course_import
from quizzes.calculated import problem_for
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.services.answers import ItemResponse, item_answer, lesson_problem
from tests.factories import EnrollmentFactory
from tests.quizzes.calculated_factories import CALCULATED_COURSE

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def enrolled(learner: User) -> Course:
    course = course_import(folder=CALCULATED_COURSE).course
    EnrollmentFactory(course=course, user=learner)
    return course


def shown_prompt(page: str, item: QuizItem) -> str:
    block = page.split(f'id="item-{item.pk}"', 1)[1]
    match = re.search(r'data-testid="cy-prompt"><strong>(.*?)</strong>', block, re.S)
    assert match, block[:500]
    return html.unescape(match.group(1)).replace("<br>", "\n")


def answer(client, item: QuizItem, value: float) -> str:  # type: ignore[no-untyped-def]
    response = client.post(
        reverse("quizzes:answer", args=[item.pk]),
        {"value": f"{value}", "token": str(uuid.uuid4()), "shown_at": "1"},
        **HTMX,
    )
    assert response.status_code == 200
    return response.content.decode()


def test_after_the_first_answer_the_lesson_never_shows_or_checks_the_next_reviews_draw(
    client, learner
):
    """The first answer is graded on the first review's draw. After it, the lesson page shows
    other numbers than the review's next draw, and posting that draw's answer (or any number)
    returns the practice problem's worked answer, never the review's."""
    enrolled(learner)
    client.force_login(learner)
    for key in ("kv-bytes", "free-memory"):
        item = QuizItem.objects.get(key=key)
        first = problem_for(item, learner_id=learner.pk, review=0)
        url = item.lesson.get_absolute_url()
        assert shown_prompt(client.get(url).content.decode(), item) == first.prompt
        answer(client, item, first.solution.answer)
        schedule = RecallSchedule.objects.get(item=item, learner=learner)
        assert schedule.reps == 1
        review = problem_for(item, learner_id=learner.pk, review=schedule.reps)

        page = client.get(url).content.decode()
        practice = shown_prompt(page, item)
        assert practice != review.prompt
        assert practice == shown_prompt(client.get(url).content.decode(), item), "not stable"
        assert "practice numbers" in page

        feedback = answer(client, item, review.solution.answer)
        shown = re.search(r'data-testid="calculated-answer">([^<]*)<', feedback)
        assert shown is not None
        practice_problem = lesson_problem(learner_id=learner.pk, item=item, reps=1)
        assert practice_problem is not None and practice_problem.prompt == practice
        assert shown.group(1).split()[0] == practice_problem.solution.answer_text
        assert practice_problem.values != review.values
        assert "Already in your reviews" in feedback
        # The schedule did not move, and the review still draws the numbers it drew before.
        schedule.refresh_from_db()
        assert schedule.reps == 1
        assert problem_for(item, learner_id=learner.pk, review=schedule.reps) == review


def test_practice_draws_differ_from_the_review_for_every_learner_and_review():
    """Over many learners and review numbers, the lesson's draw is never the review's."""
    course = course_import(folder=CALCULATED_COURSE).course
    for item in QuizItem.objects.filter(lesson__module__course=course):
        for learner_id in range(1, 30):
            for reps in range(0, 6):
                practice = lesson_problem(learner_id=learner_id, item=item, reps=reps)
                review = problem_for(item, learner_id=learner_id, review=reps)
                assert practice is not None and practice.values != review.values


def test_the_service_withholds_the_next_reviews_answer_from_a_stale_lesson_page(learner):
    """A lesson page drawn before the schedule moved can post the next review's numbers: the
    feedback-only path then checks nothing and shows no worked answer."""
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    now = timezone.now()
    first = problem_for(item, learner_id=learner.pk, review=0)
    item_answer(
        learner=learner,
        item=item,
        response=ItemResponse(value=first.solution.answer),
        now=now,
        problem=first,
    )
    review = problem_for(item, learner_id=learner.pk, review=1)
    result = item_answer(
        learner=learner,
        item=item,
        response=ItemResponse(value=review.solution.answer),
        now=now,
        problem=review,
    )
    assert result.withheld and result.problem is None and result.correct is None
    assert ReviewLog.objects.filter(learner=learner).count() == 1


def test_an_item_with_a_single_draw_is_left_to_the_review(client, learner):
    """When every draw is the review's (fixed numbers), the lesson shows no numbers once the item
    is scheduled, and a posted number is not checked."""
    enrolled(learner)
    item = QuizItem.objects.get(key="free-memory")
    item.calculation = {
        **item.calculation,
        "variables": {"gpu_memory_gb": [80], "model_gb": [16], "overhead_gb": [2]},
    }
    item.save()
    client.force_login(learner)
    answer(client, item, 62)
    assert RecallSchedule.objects.get(item=item).reps == 1
    page = client.get(item.lesson.get_absolute_url()).content.decode()
    block = page.split(f'id="item-{item.pk}"', 1)[1].split("</li>", 1)[0]
    assert 'data-testid="cy-review-only"' in block and "80 GB" not in block
    feedback = answer(client, item, 62)
    assert 'data-testid="worked-solution"' not in feedback
    assert "62" not in feedback.split('data-testid="cy-prompt"', 1)[1]
    assert ReviewLog.objects.filter(item=item).count() == 1
