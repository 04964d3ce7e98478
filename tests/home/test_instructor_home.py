"""An instructor's home: plans waiting to be graded (with age and the learner's email), the claims
they hold, the items where learners struggle, and today's digests; learners keep their dashboard."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from courses.models import Enrollment
from planner.models import GradingClaim
from quizzes.models import QuizItem
from quizzes.services.review import review_grade
from reminders.models import ReminderDigest
from tests.factories import (
    EnrollmentFactory,
    LessonFactory,
    QuizItemFactory,
    RecallScheduleFactory,
    UserFactory,
)
from tests.planner.factories import course_taught_by, submission_for

pytestmark = pytest.mark.django_db


def _reviews(*, learner, item: QuizItem, ratings: list[int]) -> None:  # type: ignore[no-untyped-def]
    schedule = RecallScheduleFactory(learner=learner, item=item)
    now = timezone.now() - timedelta(days=30)
    for rating in ratings:
        schedule.refresh_from_db()
        now += timedelta(days=2)
        review_grade(
            learner=learner,
            schedule_id=schedule.pk,
            card_token=schedule.card_token,
            rating=rating,
            now=now,
        )


def test_instructor_home_lists_waiting_plans_claims_struggles_and_digests(
    client: Client, instructor, django_assert_max_num_queries
) -> None:
    now = timezone.now()
    course = course_taught_by(instructor)
    first, twin, third = (
        UserFactory(display_name="Sam Same", email="sam@example.com"),
        UserFactory(display_name="Sam Same", email="twin@example.com"),
        UserFactory(display_name="Cleo Claimed"),
    )
    submission_for(first, course, now=now - timedelta(days=3))
    submission_for(twin, course, now=now - timedelta(hours=2))
    claimed = submission_for(third, course, now=now - timedelta(days=1))
    GradingClaim.objects.create(
        submission=claimed,
        grader=instructor,
        claimed_at=now,
        expires_at=now + timedelta(minutes=30),
    )
    hard = QuizItemFactory(
        lesson=LessonFactory(module__course=course), prompt="What bounds decode?"
    )
    easy = QuizItemFactory(lesson=hard.lesson, prompt="What is a GPU?")
    _reviews(learner=twin, item=hard, ratings=[1, 1, 3, 1, 3])
    _reviews(learner=twin, item=easy, ratings=[3, 3, 3, 3, 1])
    ReminderDigest.objects.create(learner=twin, local_date=now.date(), status="sent")
    client.force_login(instructor)

    with django_assert_max_num_queries(16):
        page = client.get(reverse("dashboard")).content.decode()

    start, end = page.index('data-testid="waiting-plans"'), page.index('data-testid="held-claims"')
    waiting = page[start:end]
    assert waiting.index("sam@example.com") < waiting.index("twin@example.com")  # oldest first
    assert "waiting 3\xa0days" in waiting
    assert "Cleo Claimed" not in waiting  # claimed: it has a grader
    claims = page[end : page.index('data-testid="struggling-items"')]
    assert "Cleo Claimed" in claims and "your claim ends in" in claims
    struggling = page[page.index('data-testid="struggling-items"') :]
    assert struggling.index("What bounds decode?") < struggling.index("What is a GPU?")
    assert "3 of 5 reviews forgotten" in struggling
    assert "1 sent, 0 failed" in page
    assert "Nothing is due" not in page and "Your capstone plans" not in page


def test_a_learner_keeps_their_dashboard(client: Client, learner) -> None:
    """With a link per course to choose their own retention from its workload curve."""
    enrollment = EnrollmentFactory(user=learner)
    client.force_login(learner)
    page = client.get(reverse("dashboard")).content.decode()
    assert "Nothing is due" in page and "Your capstone plans" in page
    assert "Plans waiting to be graded" not in page
    retention = reverse("quizzes:retention", kwargs={"course_slug": enrollment.course.slug})
    assert f'href="{retention}"' in page
    assert client.get(retention).status_code == 200


def test_an_instructor_with_nothing_to_do_is_told_what_each_panel_will_show(
    client: Client, instructor
) -> None:
    EnrollmentFactory(user=instructor, role=Enrollment.Role.INSTRUCTOR)
    client.force_login(instructor)
    page = client.get(reverse("dashboard")).content.decode()
    assert "No plan is waiting" in page
    assert "You hold no claim" in page
    assert "Not enough reviews yet" in page


def test_struggling_items_read_the_review_rollup_and_the_reviews_since(
    client: Client, instructor
) -> None:
    """After the periodic rollup the panel reads its aggregates, and a review graded since is
    counted at once from the logs after its watermark."""
    from quizzes.services.rollup import review_rollups_refresh

    course = course_taught_by(instructor)
    learner = UserFactory()
    hard = QuizItemFactory(
        lesson=LessonFactory(module__course=course), prompt="What bounds decode?"
    )
    _reviews(learner=learner, item=hard, ratings=[1, 1, 3, 1, 3])
    review_rollups_refresh(now=timezone.now())
    client.force_login(instructor)
    assert "3 of 5 reviews forgotten" in client.get(reverse("dashboard")).content.decode()

    schedule = hard.recall_schedules.get(learner=learner)
    review_grade(
        learner=learner, schedule_id=schedule.pk, card_token=schedule.card_token, rating=1,
        now=timezone.now(),
    )  # fmt: skip
    assert "4 of 6 reviews forgotten" in client.get(reverse("dashboard")).content.decode()
