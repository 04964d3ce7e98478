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
from quizzes.selectors.course_stats import course_stats
from quizzes.selectors.stats import learner_stats, streak_for
from quizzes.services import fsrs_adapter
from quizzes.services.course_settings import course_scheduling_update
from quizzes.services.review import review_grade, schedule_start
from tests.factories import (
    CourseFactory,
    EnrollmentFactory,
    QuizItemFactory,
    RecallScheduleFactory,
    UserFactory,
)
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
    RecallSchedule.objects.create(
        learner=learner,
        item=c.mc,
        course_id=c.mc.lesson.module.course_id,
        due=NOW - timedelta(days=3),
    )
    # 02:00 New York on 12 June is before the 04:00 start: it counts on 11 June.
    RecallSchedule.objects.create(
        learner=learner,
        item=c.numeric,
        course_id=c.numeric.lesson.module.course_id,
        due=datetime(2026, 6, 12, 6, tzinfo=UTC),
    )
    RecallSchedule.objects.create(
        learner=learner,
        item=c.recall,
        course_id=c.recall.lesson.module.course_id,
        due=NOW + timedelta(days=40),
    )
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
    RecallSchedule.objects.filter(item=c.mc, learner=learners[0]).update(lapses=8)
    stats = course_stats(course=c.course, now=NOW)
    by_item = {s.item: s for s in stats.items}
    assert by_item[c.mc].again_rate == 1.0 and by_item[c.mc].mean_ms == 4000
    assert by_item[c.numeric].again_rate == 0.0 and by_item[c.numeric].mean_seconds == 2.0
    assert by_item[c.recall].reviews == 0 and by_item[c.recall].again_rate is None
    assert [s.item for s in stats.leeches] == [c.mc]
    assert stats.leeches[0].leech_learners == 1 and stats.leeches[0].learners == 2


def _strength_before_sql(*, learner, now):  # type: ignore[no-untyped-def]
    """Module strength as computed before it moved into SQL: every schedule loaded as a model
    instance and run through fsrs in Python. The reference the SQL must match."""
    from collections import defaultdict

    from courses.models import Enrollment, Module

    course_ids = Enrollment.objects.filter(user=learner).values("course_id")
    modules = list(Module.objects.filter(course_id__in=course_ids).select_related("course"))
    by_module = defaultdict(list)
    for schedule in RecallSchedule.objects.filter(
        learner=learner, item__lesson__module__in=modules
    ).select_related("item__lesson__module__course"):
        module = schedule.item.lesson.module
        by_module[module.pk].append(
            fsrs_adapter.retrievability(
                scheduler=fsrs_adapter.scheduler_for(module.course),
                card=fsrs_adapter.card_from_schedule(schedule),
                now=now,
            )
        )
    return {pk: (len(values), sum(values) / len(values)) for pk, values in by_module.items()}


def _varied_schedules(rng, learner, items):  # type: ignore[no-untyped-def]
    """Schedules of every shape: never reviewed, reviewed minutes to a year ago, reviewed
    "after" now (a clock moved back), tiny and huge stabilities, due past and future."""
    for item in items:
        if rng.random() < 0.25:
            continue
        reviewed = rng.random() < 0.85
        RecallSchedule.objects.create(
            learner=learner,
            item=item,
            course_id=item.lesson.module.course_id,
            state=rng.choice([1, 2, 3]),
            stability=rng.choice([0.01, 0.4, 2.5, 17.0, 300.0, rng.uniform(0.1, 90)])
            if reviewed
            else None,
            difficulty=rng.uniform(1, 10) if reviewed else None,
            last_review=NOW - timedelta(seconds=rng.randint(-90_000, 365 * 86_400))
            if reviewed
            else None,
            due=NOW + timedelta(hours=rng.randint(-500, 900)),
        )


@pytest.mark.parametrize("seed", range(4))
def test_module_strength_in_sql_matches_fsrs_on_every_card(seed, django_assert_num_queries):
    """The mean recall per module computed in the database equals fsrs's retrievability of each
    card averaged in Python (as the page computed it before), over varied cards and modules."""
    import random

    from quizzes.selectors.strength import module_strength_for
    from tests.factories import LessonFactory, ModuleFactory

    rng = random.Random(seed)
    learner = UserFactory()
    items = []
    for _ in range(2):
        c = course_with_items(learner=learner)
        for _ in range(3):
            lesson = LessonFactory(module=ModuleFactory(course=c.course))
            items += [QuizItemFactory(lesson=lesson) for _ in range(rng.randint(0, 6))]
        items += [c.mc, c.numeric, c.recall]
    _varied_schedules(rng, learner, items)
    other = UserFactory()
    _varied_schedules(rng, other, items)  # never counted for `learner`
    for now in (NOW, NOW + timedelta(days=rng.randint(1, 400)), NOW - timedelta(days=1)):
        expected = _strength_before_sql(learner=learner, now=now)
        with django_assert_num_queries(1):
            modules = module_strength_for(learner=learner, now=now)
        assert len(modules) == 8
        got = {m.module.pk: (m.scheduled, m.mean_recall) for m in modules if m.scheduled}
        assert got.keys() == expected.keys()
        for pk, (n, mean) in expected.items():
            assert got[pk][0] == n
            assert got[pk][1] == pytest.approx(mean, rel=1e-12, abs=1e-15)
        assert all(m.mean_recall is None for m in modules if not m.scheduled)


def test_recall_sql_uses_each_courses_own_curve():
    """Courses whose FSRS parameters differ get each its own decay and factor in the query."""

    from quizzes.selectors.strength import _recall_now

    learner = UserFactory()
    a, b = course_with_items(learner=learner), course_with_items(learner=learner)
    for item in (a.recall, b.recall):
        RecallSchedule.objects.create(
            learner=learner,
            item=item,
            course_id=item.lesson.module.course_id,
            state=2,
            stability=6.0,
            difficulty=5.0,
            last_review=NOW - timedelta(days=9, hours=5),
            due=NOW,
        )
    steep = list(fsrs.Scheduler().parameters)
    steep[20] = 0.6
    schedulers = {a.course.pk: fsrs.Scheduler(), b.course.pk: fsrs.Scheduler(parameters=steep)}
    rows = RecallSchedule.objects.annotate(recall=_recall_now(now=NOW, schedulers=schedulers))
    got = {row.course_id: row.recall for row in rows}
    for course_id, scheduler in schedulers.items():
        schedule = RecallSchedule.objects.get(item__lesson__module__course_id=course_id)
        card = fsrs_adapter.card_from_schedule(schedule)
        assert got[course_id] == pytest.approx(
            scheduler.get_card_retrievability(card, current_datetime=NOW), rel=1e-12
        )
    assert got[a.course.pk] != pytest.approx(got[b.course.pk])


@pytest.mark.parametrize("seed", range(3))
def test_forecast_in_one_query_matches_the_former_two(seed, django_assert_num_queries):
    """Overdue cards folded into today in SQL give the same 30 days as counting them apart."""
    import random

    from django.db.models import Count

    from quizzes.selectors.queue import local_day_bounds
    from quizzes.selectors.stats import _local_date, forecast_for

    rng = random.Random(seed)
    learner = UserFactory(
        time_zone=rng.choice(["UTC", "Pacific/Auckland", "America/Los_Angeles"]),
        day_start_hour=rng.choice([0, 4, 23]),
    )
    c = course_with_items(learner=learner)
    items = [QuizItemFactory(lesson=c.lesson) for _ in range(40)]
    _varied_schedules(rng, learner, items)
    start, _ = local_day_bounds(learner=learner, now=NOW)
    schedules = RecallSchedule.objects.filter(learner=learner)
    overdue = schedules.filter(due__lt=start).count()
    rows = (
        schedules.filter(due__gte=start, due__lt=start + timedelta(days=30))
        .annotate(day=_local_date("due", learner))
        .values("day")
        .annotate(n=Count("id"))
    )
    counts = {row["day"]: row["n"] for row in rows}
    today = start.date()
    expected = [
        counts.get(today + timedelta(days=i), 0) + (overdue if i == 0 else 0) for i in range(30)
    ]
    with django_assert_num_queries(1):
        forecast = forecast_for(learner=learner, now=NOW)
    assert [d.count for d in forecast] == expected and sum(expected) > 0
    assert [d.day for d in forecast] == [today + timedelta(days=i) for i in range(30)]


def test_stats_page_runs_a_constant_number_of_queries(client, learner):
    """The learner's statistics page costs the same few queries with 2 or 62 cards."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    c = course_with_items(learner=learner)
    client.force_login(learner)

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("quizzes:stats")).status_code == 200
        return len(ctx)

    for item in (c.mc, c.numeric):
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=3, now=NOW)
    queries()  # the session's first page also asks the role and keeps it in the session
    small = queries()
    for _ in range(60):
        item = QuizItemFactory(lesson=c.lesson)
        schedule_start(learner=learner, item=item, card_token=uuid.uuid4(), rating=1, now=NOW)
    assert queries() == small
    # Session, user, the due days (forecast and due counts), the review days (streak, mature
    # reviews, history), modules with their strength, courses taught, recently reviewed items
    # (13 before the per-day reads were merged; the role is kept in the session).
    assert small <= 7


def test_retention_history_weeks_are_the_learners_local_weeks():
    """A review at 20:00 UTC on Sunday is 05:00 on Monday in Tokyo (day start 04:00): it counts in
    the learner's new week, not the UTC week before; at 03:00 Tokyo it is still Sunday's."""
    from quizzes.models import ReviewLog
    from quizzes.selectors.stats import retention_history_for

    learner = UserFactory(time_zone="Asia/Tokyo", day_start_hour=4)
    c = course_with_items(learner=learner)
    schedule = RecallScheduleFactory(learner=learner, item=c.recall, due=NOW)
    sunday_evening_utc = datetime(2026, 6, 7, 20, 0, tzinfo=UTC)  # Monday 05:00 in Tokyo
    sunday_night_utc = datetime(2026, 6, 7, 18, 0, tzinfo=UTC)  # Monday 03:00: still Sunday's
    for at, rating in ((sunday_evening_utc, 3), (sunday_night_utc, 1)):
        ReviewLog.objects.create(
            schedule=schedule, learner=learner, item=c.recall, rating=rating, reviewed_at=at,
            idempotency_key=uuid.uuid4(), state_before={"state": 2, "reps": 3},
            state_after={"state": 2, "reps": 4},
        )  # fmt: skip
    weeks = {
        w.week_start: (w.reviews, w.passed) for w in retention_history_for(learner=learner, now=NOW)
    }
    assert weeks[datetime(2026, 6, 8).date()] == (1, 1)
    assert weeks[datetime(2026, 6, 1).date()] == (1, 0)


def test_stats_page_lists_only_the_courses_the_user_teaches(client, instructor, learner):
    """The "Courses you teach" links: an instructor's own courses by title, not another's, once
    each however many learners and lessons they hold; staff see every course; a learner none."""
    mine_b, mine_a, other = (CourseFactory(title=t) for t in ("Beta", "Alpha", "Gamma"))
    for course in (mine_a, mine_b):
        EnrollmentFactory(course=course, user=instructor, role="instructor")
        for _ in range(2):
            EnrollmentFactory(course=course)
    EnrollmentFactory(course=other, user=UserFactory(), role="instructor")
    EnrollmentFactory(course=other, user=learner)

    def taught_links(user):  # type: ignore[no-untyped-def]
        client.force_login(user)
        html = client.get(reverse("quizzes:stats")).content.decode()
        return [c.title for c in Course.objects.order_by("title") if f"Recall in {c.title}" in html]

    assert taught_links(instructor) == ["Alpha", "Beta"]
    html = client.get(reverse("quizzes:stats")).content.decode()
    assert html.index("Recall in Alpha") < html.index("Recall in Beta")
    assert html.count("Recall in Alpha") == 1
    assert taught_links(learner) == []
    assert taught_links(UserFactory(is_staff=True)) == ["Alpha", "Beta", "Gamma"]
