"""Retention chosen from its workload curve: the instructor for the course, a learner for
themselves within the course's bounds; and the instructor's page of learnt parameters."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from quizzes.models import RetentionPreference
from quizzes.selectors.retention import retention_curve_for
from quizzes.services.parameters import parameters_train
from tests.factories import CourseFactory, EnrollmentFactory, UserFactory
from tests.quizzes.factories import course_with_items
from tests.quizzes.parameters_data import FORGETFUL, course_with_reviews

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def intervals_on(html: str) -> str:
    match = re.search(r'data-testid="next-intervals">([^<]*)<', html)
    assert match, html
    return match.group(1)


def test_more_retention_costs_more_reviews_on_the_curve() -> None:
    course = course_with_items().course
    curve = retention_curve_for(course=course, learner_id=None).curve
    reviews = [p.reviews_per_day for p in curve.points]
    retentions = [p.retention for p in curve.points]
    assert (retentions[0], retentions[-1]) == (0.80, 0.97)
    assert reviews[-1] > 1.5 * reviews[0]
    assert curve.points[-1].minutes_per_day > curve.points[0].minutes_per_day
    assert 0.7 <= curve.minimum_recommended <= 0.97


def test_instructor_chooses_the_course_retention_from_the_curve(client, instructor) -> None:  # type: ignore[no-untyped-def]
    course = course_with_items().course
    EnrollmentFactory(course=course, user=instructor, role="instructor")
    client.force_login(instructor)
    url = reverse("quizzes:course_settings", args=[course.slug])
    html = client.get(url).content.decode()
    assert 'data-testid="curve-table"' in html and "<svg" in html
    assert "minimum recommended retention" in html
    # Each point of the curve is a choice, labelled with its workload.
    assert html.count('type="radio" name="desired_retention"') == 10
    assert "reviews, " in html and "minutes a day" in html
    response = client.post(
        url,
        {
            "desired_retention": "0.84",
            "learning_steps_minutes": "1, 10",
            "relearning_steps_minutes": "10",
            "maximum_interval_days": "365",
            "daily_new_limit": "20",
            "daily_review_limit": "200",
        },
    )
    assert response.status_code == 302
    course.refresh_from_db()
    assert course.desired_retention == 0.84


def test_learner_raises_and_lowers_their_own_retention(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = course_with_items(learner=learner, learning_steps_minutes=[]).course
    other = UserFactory()
    EnrollmentFactory(course=course, user=other)
    client.force_login(learner)
    url = reverse("quizzes:retention", args=[course.slug])
    at_course = intervals_on(client.get(url).content.decode())
    assert client.post(url, {"desired_retention": "0.80"}).status_code == 302
    lower = intervals_on(client.get(url).content.decode())
    assert client.post(url, {"desired_retention": "0.97"}).status_code == 302
    higher = intervals_on(client.get(url).content.decode())
    assert len({at_course, lower, higher}) == 3
    assert RetentionPreference.objects.get(learner=learner).desired_retention == 0.97
    assert not RetentionPreference.objects.filter(learner=other).exists()
    client.post(url, {"reset": "1"})
    assert intervals_on(client.get(url).content.decode()) == at_course


@pytest.mark.parametrize("value", ["0.79", "0.98", "nan", "1e400", "abc"])
def test_a_retention_outside_the_course_s_bounds_is_refused_on_its_field(
    client, learner, value
) -> None:  # type: ignore[no-untyped-def]
    course = course_with_items(learner=learner).course
    client.force_login(learner)
    response = client.post(
        reverse("quizzes:retention", args=[course.slug]), {"desired_retention": value}
    )
    assert response.status_code == 200
    assert 'id="id_desired_retention_error"' in response.content.decode()
    assert not RetentionPreference.objects.exists()


def test_the_retention_page_of_a_course_not_taken_is_a_404(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    client.force_login(learner)
    assert client.get(reverse("quizzes:retention", args=[course.slug])).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_instructor_sees_defaults_pooled_and_personal_scores(client, instructor) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    course_with_reviews(course=course, learners=5, items=20, days=120, end=NOW)
    EnrollmentFactory(course=course, user=instructor, role="instructor")
    pooled = parameters_train(course=course, learner_id=None, now=NOW, weights=FORGETFUL)
    client.force_login(instructor)
    html = client.get(reverse("quizzes:course_parameters", args=[course.slug])).content.decode()
    assert "Version 1 is in force, trained 2 Mar 2026 09:00" in html
    assert f"{pooled.defaults_log_loss:.4f}" in html and f"{pooled.candidate_log_loss:.4f}" in html
    assert "0 learners have personal parameters" in html
