"""Calculated items: the draw a learner is shown is the one the server grades, a reload keeps
it, the next review draws fresh numbers, and the answer and the draw's answer are logged."""

from __future__ import annotations

import html
import re
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.urls import reverse

from accounts.models import User
from courses.models import Course
from home.services.content_import import course_import
from quizzes.calculated import problem_for
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from tests.factories import EnrollmentFactory, UserFactory

pytestmark = pytest.mark.django_db

COURSE = Path(__file__).resolve().parent / "calculated_course"
HTMX = {"HTTP_HX_REQUEST": "true"}


def enrolled(learner: User) -> Course:
    course = course_import(folder=COURSE).course
    EnrollmentFactory(course=course, user=learner)
    return course


def item_prompt(page: str, item: QuizItem) -> str:
    block = page.split(f'id="item-{item.pk}"', 1)[1]
    match = re.search(r'data-testid="cy-prompt"><strong>(.*?)</strong>', block, re.S)
    assert match, block[:500]
    return html.unescape(match.group(1)).replace("<br>", "\n")


def numbers_in(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def hidden(page: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert match, f"no {name} in the page"
    return html.unescape(match.group(1))


def test_the_verdict_echoes_the_number_as_the_learner_wrote_it(client, learner):
    """A typed 79.80 is answered back as "79.8", never padded to three places ("79.800")."""
    enrolled(learner)
    item = QuizItem.objects.get(key="free-memory")
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:answer", args=[item.pk]),
        {"value": "79.80", "token": str(uuid.uuid4()), "shown_at": "1"},
        **HTMX,
    )
    page = response.content.decode()
    assert "You answered 79.8." in page and "79.800" not in page


def test_a_reload_shows_the_same_problem_and_the_server_grades_that_draw(client, learner):
    """The lesson shows numbers drawn for this learner; reloading keeps them; the answer worked
    by hand from the shown numbers (GPU − weights − overhead) is graded right, and the log keeps
    the typed number and the draw's answer."""
    enrolled(learner)
    item = QuizItem.objects.get(key="free-memory")
    client.force_login(learner)
    url = item.lesson.get_absolute_url()
    shown = item_prompt(client.get(url).content.decode(), item)
    assert shown == item_prompt(client.get(url).content.decode(), item)
    assert "{" not in shown
    memory, weights, overhead = numbers_in(shown)
    by_hand = memory - weights - overhead

    response = client.post(
        reverse("quizzes:answer", args=[item.pk]),
        {"value": f"{by_hand}", "token": str(uuid.uuid4()), "shown_at": "1"},
        **HTMX,
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Within tolerance." in page and 'data-testid="worked-solution"' in page
    assert f"{memory:g}.0 GB − {weights:g}.0 GB − {overhead:g}.0 GB" in page
    assert "The input that mattered most" in page
    log = ReviewLog.objects.get()
    assert log.rating == ReviewLog.Rating.GOOD
    assert log.answer_value == pytest.approx(by_hand)
    assert log.expected_value == pytest.approx(by_hand)


def test_a_wrong_number_is_again_and_another_learner_draws_their_own(client, learner):
    """A number off by the KV factor 2 is outside the tolerance: Again, with the worked solution.
    Learners get problems of their own (most of 10 learners see other numbers)."""
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    problem = problem_for(item, learner_id=learner.pk, review=0)
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:answer", args=[item.pk]),
        {"value": f"{problem.solution.answer / 2}", "token": str(uuid.uuid4())},
        **HTMX,
    )
    assert "Outside the tolerance." in response.content.decode()
    assert ReviewLog.objects.get().rating == ReviewLog.Rating.AGAIN
    others = {problem_for(item, learner_id=learner.pk + n, review=0).prompt for n in range(1, 11)}
    assert len(others - {problem.prompt}) >= 5


def test_a_bad_number_is_refused_naming_the_answer(client, learner):
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    client.force_login(learner)
    for bad in ("lots", "1e400", "9" * 50, ""):
        response = client.post(reverse("quizzes:answer", args=[item.pk]), {"value": bad}, **HTMX)
        assert response.status_code == 200
        assert "Enter a number" in response.content.decode()
    assert not ReviewLog.objects.exists()


def test_the_next_review_draws_fresh_numbers_and_its_grade_logs_that_draw(client, learner):
    """After the first answer (reps 1) the review session shows the draw for review 1, not the
    lesson's; checking a number reveals the worked solution; the grade logs the number beside
    the answer of the draw it showed. Draws differ from review to review."""
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    first = problem_for(item, learner_id=learner.pk, review=0)
    client.force_login(learner)
    client.post(
        reverse("quizzes:answer", args=[item.pk]),
        {"value": f"{first.solution.answer}", "token": str(uuid.uuid4())},
    )
    schedule = RecallSchedule.objects.get(item=item)
    assert schedule.reps == 1
    prompts = {problem_for(item, learner_id=learner.pk, review=r).prompt for r in range(6)}
    assert len(prompts) > 1
    second = problem_for(item, learner_id=learner.pk, review=1)
    # Skip the other (new) item: answer it in the lesson first.
    other = QuizItem.objects.get(key="free-memory")
    client.post(
        reverse("quizzes:answer", args=[other.pk]), {"value": "1", "token": str(uuid.uuid4())}
    )

    with time_machine.travel(schedule.due + timedelta(seconds=1), tick=False):
        panel = client.get(reverse("quizzes:session")).content.decode()
        while html.escape(second.prompt).replace("\n", "<br>") not in panel:
            assert 'data-testid="review-card"' in panel, "the calculated card never came"
            token = hidden(panel, "token")
            schedule_id = hidden(panel, "schedule")
            revealed = client.get(
                reverse("quizzes:session"),
                {"reveal": "1", "schedule": schedule_id, "token": token},
                **HTMX,
            ).content.decode()
            client.post(
                reverse("quizzes:grade"),
                {
                    "rating": "3",
                    "card_token": token,
                    "schedule_id": schedule_id,
                },
            )
            panel = client.get(reverse("quizzes:session")).content.decode()
        assert 'data-testid="calculated-value"' in panel
        token = hidden(panel, "token")
        typed = second.solution.answer * 1.005
        revealed = client.get(
            reverse("quizzes:session"),
            {"reveal": "1", "schedule": schedule.pk, "token": token, "value": f"{typed}"},
            **HTMX,
        ).content.decode()
        assert "Within tolerance." in revealed and 'data-testid="worked-solution"' in revealed
        assert second.solution.answer_text in revealed
        response = client.post(
            reverse("quizzes:grade"),
            {
                "rating": "3",
                "card_token": token,
                "schedule_id": schedule.pk,
                "answer": hidden(revealed, "answer"),
            },
            **HTMX,
        )
    assert response.status_code == 200
    log = ReviewLog.objects.filter(item=item).order_by("-id").first()
    assert log is not None and log.source == ReviewLog.Source.REVIEW
    assert log.answer_value == pytest.approx(typed)
    assert log.expected_value == pytest.approx(second.solution.answer)
    assert second.prompt != first.prompt or second.values != first.values


def test_a_grade_with_a_hostile_answer_is_refused_naming_it(client, learner):
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:grade"),
        {"rating": "3", "card_token": str(uuid.uuid4()), "item_id": item.pk, "answer": "nan"},
    )
    assert response.status_code == 400
    assert response.content.decode().startswith("answer:")
    assert not ReviewLog.objects.exists()


def test_a_stranger_cannot_grade_another_learners_schedule_with_an_answer(client, learner):
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    client.force_login(learner)
    client.post(reverse("quizzes:answer", args=[item.pk]), {"value": "1"})
    schedule = RecallSchedule.objects.get()
    stranger = UserFactory()
    client.force_login(stranger)
    response = client.post(
        reverse("quizzes:grade"),
        {"rating": "3", "card_token": str(schedule.card_token), "schedule_id": schedule.pk,
         "answer": "12"},
    )  # fmt: skip
    assert response.status_code == 404
    assert ReviewLog.objects.count() == 1


def test_without_javascript_the_item_page_shows_the_worked_solution(client, learner):
    """A form posted without htmx comes back on the item's own page, with the same draw."""
    enrolled(learner)
    item = QuizItem.objects.get(key="kv-bytes")
    problem = problem_for(item, learner_id=learner.pk, review=0)
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:answer", args=[item.pk]), {"value": f"{problem.solution.answer}"}
    )
    page = response.content.decode()
    assert '<h1 id="check-yourself-heading">' in page
    assert html.escape(problem.prompt) in page
    assert "Within tolerance." in page and "KV bytes per token" in page
