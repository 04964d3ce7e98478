"""Two courses at once, as `make run` ships them: the demo learner is enrolled in both with
recall due in each, every page answers for the learner and the instructor, the statistics are
per course, the review rollup runs, and the day's one digest names both courses."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from courses.models import Course, Enrollment
from home.management.commands.seed_demo import (
    DEMO_ANSWERED_ITEMS,
    DEMO_INSTRUCTOR,
    DEMO_LEARNER,
    DEMO_PASSWORD,
)
from quizzes.models import LearnerDayRollup, RecallSchedule, ReviewLog
from quizzes.selectors.course_stats import course_stats
from quizzes.services.rollup import review_rollups_refresh
from reminders.scan import digests_scan

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(both_courses: list[Course]) -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def _client(email: str) -> Client:
    client = Client()
    assert client.login(email=email, password=DEMO_PASSWORD)
    return client


def test_the_demo_learner_has_recall_due_in_both_courses(
    both_courses: list[Course], demo: str
) -> None:
    learner = User.objects.get(email=DEMO_LEARNER)
    assert "enrolled in 2 courses" in demo
    assert set(Enrollment.objects.filter(user=learner).values_list("course", flat=True)) == {
        c.pk for c in both_courses
    }
    now = timezone.now()
    for course in both_courses:
        due = RecallSchedule.objects.filter(learner=learner, course=course, due__lte=now)
        assert due.count() == DEMO_ANSWERED_ITEMS, course.slug
    call_command("seed_demo", stdout=StringIO())  # a second run adds nothing
    assert RecallSchedule.objects.filter(learner=learner).count() == 2 * DEMO_ANSWERED_ITEMS
    page = _client(DEMO_LEARNER).get(reverse("dashboard")).content.decode()
    assert f"{2 * DEMO_ANSWERED_ITEMS}</strong> items due" in page
    for course in both_courses:
        assert course.title in page


def test_every_page_answers_for_a_learner_and_an_instructor_of_two_courses(
    both_courses: list[Course], demo: str
) -> None:
    learner, instructor = _client(DEMO_LEARNER), _client(DEMO_INSTRUCTOR)
    learner_pages = [reverse("dashboard"), reverse("courses:catalogue"), reverse("quizzes:session"),
                     reverse("quizzes:stats"), reverse("capstone:list"), reverse("preferences")]  # fmt: skip
    instructor_pages = [reverse("dashboard"), reverse("courses:teaching"),
                        reverse("capstone:grading_queue"), reverse("reminders:status")]  # fmt: skip
    for course in both_courses:
        lesson = course.modules.order_by("position").first().lessons.order_by("position").first()
        learner_pages += [
            reverse("courses:outline", args=[course.slug]),
            reverse("courses:lesson", args=[course.slug, lesson.slug]),
            reverse("quizzes:retention", args=[course.slug]),
        ]
        instructor_pages += [
            reverse(name, args=[course.slug])
            for name in ("courses:teaching_course", "quizzes:course_stats",
                         "quizzes:course_settings", "quizzes:course_calculated",
                         "quizzes:course_parameters")
        ]  # fmt: skip
    for client, pages in ((learner, learner_pages), (instructor, instructor_pages)):
        for url in pages:
            response = client.get(url)
            assert response.status_code == 200, url
    stats = learner.get(reverse("quizzes:stats")).content.decode()
    for course in both_courses:  # strength by module, for the modules of both courses
        assert course.modules.order_by("position").first().title in stats


def test_the_jobs_meet_both_courses_the_rollup_and_the_digest(
    both_courses: list[Course], demo: str, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """The review rollup runs with a learner reviewing in two courses (issue 39: it raised a
    duplicate key once items spanned two batches) and each course counts its own reviews; the
    day's one digest names both courses."""
    now = timezone.now()
    run = review_rollups_refresh(now=now)
    assert run.upto == now
    learner = User.objects.get(email=DEMO_LEARNER)
    [day] = LearnerDayRollup.objects.filter(learner=learner)
    assert day.reviews == 2 * DEMO_ANSWERED_ITEMS
    for course in both_courses:
        stats = course_stats(course=course, now=now)
        # The demo learner's answers and the simulated cohort's reviews, each in its course.
        own = ReviewLog.objects.filter(item__lesson__module__course=course).count()
        assert own > DEMO_ANSWERED_ITEMS
        assert sum(item.reviews for item in stats.items) == own, course.slug

    with django_capture_on_commit_callbacks(execute=True):
        digests_scan(now=timezone.now())
    (digest,) = [m for m in mail.outbox if m.to == [DEMO_LEARNER]]
    for course in both_courses:
        assert f"  - {course.title}: {DEMO_ANSWERED_ITEMS} items\n" in digest.body
