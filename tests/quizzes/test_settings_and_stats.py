"""Course scheduling settings (retention bounds) and the statistics selectors."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from courses.models import Course
from quizzes.models import RecallSchedule
from quizzes.selectors.stats import course_stats, learner_stats, streak_for
from quizzes.services import fsrs_adapter
from quizzes.services.course_settings import course_scheduling_update
from quizzes.services.review import review_grade, schedule_start
from tests.factories import CourseFactory, EnrollmentFactory, QuizItemFactory, UserFactory
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


def settings_args(**over):  # type: ignore[no-untyped-def]
    args = {
        "desired_retention": 0.9,
        "learning_steps_minutes": [1, 10],
        "relearning_steps_minutes": [10],
        "maximum_interval_days": 365,
    }
    args.update(over)
    return args


@pytest.mark.parametrize("value", [0.69, 0.98, 1.0, 0.0])
def test_retention_outside_bounds_names_the_field(value):
    """Desired retention outside 0.70–0.97 is refused with an error on that field."""
    course = CourseFactory()
    with pytest.raises(ValidationError) as exc:
        course_scheduling_update(course=course, **settings_args(desired_retention=value))
    assert list(exc.value.message_dict) == ["desired_retention"]
    assert "between 0.70 and 0.97" in exc.value.message_dict["desired_retention"][0]
    course.refresh_from_db()
    assert course.desired_retention == 0.9


@pytest.mark.parametrize("value", [0.7, 0.97, 0.85])
def test_retention_inside_bounds_is_saved_and_used_by_the_scheduler(value):
    """A valid setting is saved and the course's scheduler uses it, without fuzzing."""
    course = CourseFactory()
    course_scheduling_update(course=course, **settings_args(desired_retention=value))
    course.refresh_from_db()
    scheduler = fsrs_adapter.scheduler_for(course)
    assert scheduler.desired_retention == value
    assert scheduler.learning_steps == (timedelta(minutes=1), timedelta(minutes=10))
    assert scheduler.maximum_interval == 365 and scheduler.enable_fuzzing is False


def test_bad_steps_name_their_field():
    """Non-positive steps are refused on their field."""
    with pytest.raises(ValidationError) as exc:
        course_scheduling_update(
            course=CourseFactory(), **settings_args(learning_steps_minutes=[0])
        )
    assert "learning_steps_minutes" in exc.value.message_dict


def test_database_refuses_retention_out_of_range():
    """The check constraint holds even if a service is bypassed."""
    course = CourseFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Course.objects.filter(pk=course.pk).update(desired_retention=0.5)


def test_settings_page_shows_the_error_on_the_field(client, instructor):
    """The instructor's settings form says which field is wrong and keeps the old value."""
    course = CourseFactory()
    EnrollmentFactory(course=course, user=instructor, role="instructor")
    client.force_login(instructor)
    url = reverse("quizzes:course_settings", args=[course.slug])
    response = client.post(
        url,
        {
            "desired_retention": "0.99",
            "learning_steps_minutes": "1, 10",
            "relearning_steps_minutes": "10",
            "maximum_interval_days": "365",
            "daily_new_limit": "20",
            "daily_review_limit": "200",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Desired retention: Desired retention must be between 0.70 and 0.97" in html
    ok = client.post(
        url,
        {
            "desired_retention": "0.85",
            "learning_steps_minutes": "1, 10",
            "relearning_steps_minutes": "",
            "maximum_interval_days": "365",
            "daily_new_limit": "5",
            "daily_review_limit": "100",
        },
    )
    assert ok.status_code == 302
    course.refresh_from_db()
    assert (
        course.desired_retention,
        course.learning_steps_minutes,
        course.relearning_steps_minutes,
    ) == (0.85, [1, 10], [])
    assert course.daily_new_limit == 5


def _review_at_due(learner, schedule, rating):  # type: ignore[no-untyped-def]
    schedule.refresh_from_db()
    return review_grade(
        learner=learner,
        schedule_id=schedule.pk,
        card_token=schedule.card_token,
        rating=rating,
        now=schedule.due,
    )


def test_true_retention_counts_first_reviews_of_mature_items_only():
    """True retention is the pass rate of reviews whose interval was at least 21 days."""
    learner = UserFactory()
    c = course_with_items(learner=learner, maximum_interval_days=36500)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=4, now=NOW)
    schedule = RecallSchedule.objects.get()
    mature = young = 0
    for rating in [3, 3, 3, 3, 1, 3, 3]:
        schedule.refresh_from_db()
        interval = (schedule.due - schedule.last_review).days if schedule.state == 2 else 0  # type: ignore[operator]
        log = _review_at_due(learner, schedule, rating)
        assert log.scheduled_days == interval
        if interval >= 21 and schedule.state == 2:
            mature += 1
        else:
            young += 1
    stats = learner_stats(learner=learner, now=schedule.due)
    logs = list(learner.review_logs.filter(state_before__state=2, scheduled_days__gte=21))
    assert stats.mature_reviews == len(logs) > 0
    assert stats.mature_passed == sum(1 for log in logs if log.rating > 1)


def test_streak_counts_consecutive_local_days():
    """A streak counts learner-days with reviews, ending today or yesterday."""
    learner = UserFactory(time_zone="UTC", day_start_hour=4)
    c = course_with_items(learner=learner, learning_steps_minutes=[], relearning_steps_minutes=[])
    items = [QuizItemFactory(lesson=c.lesson) for _ in range(4)]
    # Reviews on 7, 8, 9 June; and at 02:00 on 10 June, which with a 04:00 start is still 9 June.
    for day, item in zip([7, 8, 9], items, strict=False):
        schedule_start(
            learner=learner,
            item=item,
            card_token=uuid.uuid4(),
            rating=3,
            now=datetime(2026, 6, day, 10, tzinfo=UTC),
        )
    schedule_start(
        learner=learner,
        item=items[3],
        card_token=uuid.uuid4(),
        rating=3,
        now=datetime(2026, 6, 10, 2, tzinfo=UTC),
    )
    assert streak_for(learner=learner, now=datetime(2026, 6, 10, 12, tzinfo=UTC)) == (3, False)
    assert streak_for(learner=learner, now=datetime(2026, 6, 10, 3, tzinfo=UTC)) == (3, True)
    assert streak_for(learner=learner, now=datetime(2026, 6, 12, 12, tzinfo=UTC)) == (0, False)


def test_forecast_puts_overdue_today_and_buckets_by_local_day():
    """The 30-day forecast counts overdue cards today and each other card on its local day."""
    learner = UserFactory(time_zone="America/New_York", day_start_hour=4)
    c = course_with_items(learner=learner)
    RecallSchedule.objects.create(learner=learner, item=c.mc, due=NOW - timedelta(days=3))
    # 02:00 New York on 12 June is before the 04:00 start: it counts on 11 June.
    RecallSchedule.objects.create(
        learner=learner, item=c.numeric, due=datetime(2026, 6, 12, 6, tzinfo=UTC)
    )
    RecallSchedule.objects.create(learner=learner, item=c.recall, due=NOW + timedelta(days=40))
    stats = learner_stats(learner=learner, now=NOW)
    assert len(stats.forecast) == 30
    assert stats.forecast[0].count == 1 and stats.forecast[0].day.isoformat() == "2026-06-10"
    assert stats.forecast[1].count == 1 and stats.forecast[1].day.isoformat() == "2026-06-11"
    assert sum(d.count for d in stats.forecast) == 2
    assert stats.due_today == 1


def test_module_strength_is_fsrs_retrievability():
    """Per-module strength is the mean probability of recall fsrs gives for the learner's cards."""
    learner = UserFactory()
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=NOW)
    schedule = RecallSchedule.objects.get()
    later = NOW + timedelta(days=10)
    stats = learner_stats(learner=learner, now=later)
    card = fsrs_adapter.card_from_schedule(schedule)
    expected = fsrs.Scheduler().get_card_retrievability(card, current_datetime=later)
    [module] = stats.modules
    assert module.items == 3 and module.scheduled == 1
    assert module.mean_recall == pytest.approx(expected)


def test_course_stats_again_rate_mean_time_and_leeches():
    """Instructor statistics: again rate and mean time per item, leeches by lapses."""
    c = course_with_items()
    learners = [UserFactory() for _ in range(2)]
    for learner in learners:
        EnrollmentFactory(course=c.course, user=learner)
        schedule_start(
            learner=learner, item=c.mc, card_token=uuid.uuid4(), rating=1, now=NOW, duration_ms=4000
        )
        schedule_start(
            learner=learner,
            item=c.numeric,
            card_token=uuid.uuid4(),
            rating=3,
            now=NOW,
            duration_ms=2000,
        )
    RecallSchedule.objects.filter(item=c.mc, learner=learners[0]).update(lapses=5)
    stats = course_stats(course=c.course, now=NOW)
    by_item = {s.item: s for s in stats.items}
    assert by_item[c.mc].again_rate == 1.0 and by_item[c.mc].mean_ms == 4000
    assert by_item[c.numeric].again_rate == 0.0 and by_item[c.numeric].mean_seconds == 2.0
    assert by_item[c.recall].reviews == 0 and by_item[c.recall].again_rate is None
    assert [s.item for s in stats.leeches] == [c.mc]
    assert stats.leeches[0].leech_learners == 1 and stats.leeches[0].learners == 2
