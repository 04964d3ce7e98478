"""The skills map: a learner's recall strength per skill (mean FSRS retrievability of their
cards now), reviews and last result; the weakest skill's practice session; the cohort's map."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import fsrs
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment
from home.services.content_import import course_import
from quizzes.models import QuizItem, RecallSchedule
from quizzes.selectors.skills import learner_skills_map
from quizzes.services import fsrs_adapter
from quizzes.services.answers import ItemResponse, item_answer
from quizzes.services.item_analysis import item_analysis_refresh

pytestmark = pytest.mark.django_db
COURSE = Path(__file__).resolve().parents[2] / "content" / "gpus-tpus-ai-hardware"


def _answer(learner, item: QuizItem, *, right: bool, days_ago: int) -> None:  # type: ignore[no-untyped-def]
    keys = frozenset(c.key for c in item.choices.all() if c.is_correct == right)
    item_answer(
        learner=learner,
        item=item,
        response=ItemResponse(choice_keys=keys),
        now=timezone.now() - timedelta(days=days_ago),
    )


@pytest.fixture
def course(learner) -> Course:  # type: ignore[no-untyped-def]
    course = course_import(folder=COURSE).course
    Enrollment.objects.create(course=course, user=learner, role=Enrollment.Role.LEARNER)
    return course


def _mc(key: str) -> QuizItem:
    return QuizItem.objects.prefetch_related("choices").get(key=key)


def test_the_weakest_skill_is_the_one_with_the_lowest_recall_now(  # type: ignore[no-untyped-def]
    course, learner, django_assert_num_queries
) -> None:
    # mig-what-it-gives is tagged MIG only; seventy-b-on-eighty-gb memory fit only.
    _answer(learner, _mc("mig-what-it-gives"), right=False, days_ago=3)
    _answer(learner, _mc("seventy-b-on-eighty-gb"), right=True, days_ago=3)
    now = timezone.now()
    with django_assert_num_queries(5):
        skills_map = learner_skills_map(learner=learner, course=course, now=now)
    rows = {row.skill.slug: row for row in skills_map.skills}
    scheduler = fsrs_adapter.scheduler_for(course)
    for slug, key in (("mig", "mig-what-it-gives"), ("memory-fit", "seventy-b-on-eighty-gb")):
        schedule = RecallSchedule.objects.get(learner=learner, item__key=key)
        expected = scheduler.get_card_retrievability(
            fsrs_adapter.card_from_schedule(schedule), current_datetime=now
        )
        assert rows[slug].strength == pytest.approx(expected)
        assert rows[slug].cards == 1 and rows[slug].reviews == 1
    assert rows["mig"].last_rating == fsrs.Rating.Again
    assert rows["memory-fit"].last_result == "Good"
    assert rows["decode-speed"].strength is None and rows["decode-speed"].reviews == 0
    assert skills_map.weakest is not None and skills_map.weakest.skill.slug == "mig"

    client = Client()
    client.force_login(learner)
    html = client.get(reverse("quizzes:skills", args=[course.slug])).content.decode()
    assert "Weakest: MIG" in html
    assert reverse("quizzes:skill_practice", args=[course.slug, "mig"]) in html


def test_the_practice_session_holds_every_item_of_the_skill(course, learner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(learner)
    html = client.get(reverse("quizzes:skill_practice", args=[course.slug, "mig"])).content.decode()
    mig = [i for i in QuizItem.objects.filter(lesson__module__course=course) if "mig" in i.skills]
    assert html.count('data-testid="cy-item"') == len(mig) > 3
    for item in mig:
        assert f'id="item-{item.pk}"' in html
    # A calculated item shows numbers to practise on, drawn for this learner.
    assert 'name="value"' in html


def test_skills_pages_are_scoped_to_the_learners_courses(course, learner) -> None:  # type: ignore[no-untyped-def]
    stranger = User.objects.create_user(email="stranger@example.com", password="x")
    client = Client()
    client.force_login(stranger)
    assert client.get(reverse("quizzes:skills", args=[course.slug])).status_code == 404
    url = reverse("quizzes:skill_practice", args=[course.slug, "mig"])
    assert client.get(url).status_code == 404
    client.force_login(learner)
    missing = reverse("quizzes:skill_practice", args=[course.slug, "no-such-skill"])
    assert client.get(missing).status_code == 404


def test_a_learner_who_has_answered_nothing_is_told_what_to_do(course, learner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(learner)
    html = client.get(reverse("quizzes:skills", args=[course.slug])).content.decode()
    assert 'data-testid="skills-empty"' in html and "Answer the check-yourself items" in html


def test_the_instructor_sees_the_cohorts_map_from_the_analysis(course, learner, instructor) -> None:  # type: ignore[no-untyped-def]
    Enrollment.objects.create(course=course, user=instructor, role=Enrollment.Role.INSTRUCTOR)
    _answer(learner, _mc("mig-what-it-gives"), right=False, days_ago=3)
    client = Client()
    client.force_login(instructor)
    url = reverse("quizzes:course_skills", args=[course.slug])
    assert 'data-testid="course-skills-empty"' in client.get(url).content.decode()
    item_analysis_refresh(course=course, now=timezone.now())
    html = client.get(url).content.decode()
    assert html.count('data-testid="cohort-skill-row"') == course.skills.count()
    client.force_login(learner)
    assert client.get(url).status_code in (302, 403, 404)
