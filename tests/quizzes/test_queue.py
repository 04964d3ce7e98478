"""The due queue: order, daily limits, and the learner's local day (with its start hour)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from quizzes.models import QuizItem, RecallSchedule
from quizzes.selectors.queue import due_count_for, due_queue_for, local_day_bounds
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


def review_card(**fields: object) -> RecallSchedule:
    """A schedule in review (it has been learnt), due when `due` says."""
    fields.setdefault("state", RecallSchedule.State.REVIEW)
    fields.setdefault("reps", 2)
    fields.setdefault("stability", 3.0)
    fields.setdefault("difficulty", 5.0)
    fields.setdefault("last_review", NOW - timedelta(days=4))
    return RecallScheduleFactory(**fields)


def test_due_cards_oldest_first_then_new_items():
    """Due schedules come oldest due first; items never answered come after, in course order."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    c = course_with_items(learner=learner, daily_new_limit=10)
    late = review_card(learner=learner, item=c.recall, due=NOW - timedelta(hours=1))
    early = review_card(learner=learner, item=c.numeric, due=NOW - timedelta(days=2))
    review_card(learner=learner, item=QuizItemFactory(lesson=c.lesson), due=NOW + timedelta(days=1))
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.card is not None and queue.card.schedule == early
    assert (queue.due_count, queue.new_count) == (2, 1)
    early.due = NOW + timedelta(days=3)
    early.save()
    assert due_queue_for(learner=learner, now=NOW).card.schedule == late  # type: ignore[union-attr]
    late.due = NOW + timedelta(days=3)
    late.save()
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.card is not None and queue.card.is_new and queue.card.item == c.mc
    assert due_count_for(learner=learner, now=NOW) == 0


def test_review_card_is_due_from_the_start_of_its_local_due_day():
    """A review card due at 23:00 (or at 02:00 before a 04:00 day start) is due all that
    learning day, from its start; one due in the next learning day is not."""
    learner = UserFactory(time_zone="Europe/Berlin", day_start_hour=4)
    c = course_with_items(learner=learner, daily_new_limit=0)
    # NOW is 14:00 in Berlin (CEST); the learning day runs to 04:00 tomorrow, 02:00 UTC.
    evening = review_card(learner=learner, item=c.mc, due=datetime(2026, 6, 10, 21, 0, tzinfo=UTC))
    night = review_card(
        learner=learner, item=c.numeric, due=datetime(2026, 6, 11, 1, 0, tzinfo=UTC)
    )
    review_card(learner=learner, item=c.recall, due=datetime(2026, 6, 11, 2, 30, tzinfo=UTC))
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.due_count == 2
    assert queue.card is not None and queue.card.schedule == evening
    assert night.due > NOW


def test_learning_steps_use_a_learn_ahead_window():
    """A learning card due within 20 minutes is due now; one due in 21 minutes is not yet."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    c = course_with_items(learner=learner, daily_new_limit=0)
    soon = RecallScheduleFactory(
        learner=learner, item=c.mc, state=RecallSchedule.State.LEARNING, reps=1,
        due=NOW + timedelta(minutes=5),
    )  # fmt: skip
    RecallScheduleFactory(
        learner=learner, item=c.numeric, state=RecallSchedule.State.RELEARNING, reps=3,
        due=NOW + timedelta(minutes=21),
    )  # fmt: skip
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.due_count == 1 and queue.card is not None and queue.card.schedule == soon
    assert due_queue_for(learner=learner, now=NOW + timedelta(minutes=1)).due_count == 2


def test_daily_limits_are_per_course():
    """Each course's review and new limits hold for that course alone, not the largest of them
    for all: a course at its limit shows no more reviews while another course's still come."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    strict = course_with_items(learner=learner, daily_review_limit=1, daily_new_limit=1)
    loose = course_with_items(learner=learner, daily_review_limit=5, daily_new_limit=0)
    for item in (strict.mc, strict.numeric, strict.recall):
        review_card(learner=learner, item=item, due=NOW - timedelta(days=3))
    other = review_card(learner=learner, item=loose.mc, due=NOW - timedelta(days=1))
    QuizItemFactory(lesson=strict.lesson)
    QuizItemFactory(lesson=strict.lesson)
    queue = due_queue_for(learner=learner, now=NOW)
    # 1 of strict's 3 due reviews, loose's 1; none of strict's 2 new items (3 reviews due over
    # its limit of 1 is a backlog: new items wait), none of loose's.
    assert (queue.due_count, queue.new_count) == (2, 0)
    first = queue.card
    assert first is not None and first.schedule is not None and first.item.lesson == strict.lesson
    review_grade(
        learner=learner, schedule_id=first.schedule.pk, card_token=first.schedule.card_token,
        rating=3, now=NOW,
    )  # fmt: skip
    queue = due_queue_for(learner=learner, now=NOW)
    # strict's older reviews wait for tomorrow; loose's comes next.
    assert queue.due_count == 1 and queue.card is not None and queue.card.schedule == other


def test_learning_steps_do_not_count_against_the_review_limit():
    """With the day's review limit used up, due learning steps still come, and grading them
    does not count as a review."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    c = course_with_items(
        learner=learner, daily_review_limit=1, daily_new_limit=0, learning_steps_minutes=[1, 10],
        relearning_steps_minutes=[10],
    )  # fmt: skip
    reviewed = review_card(learner=learner, item=c.mc, due=NOW - timedelta(days=1))
    review_card(learner=learner, item=c.numeric, due=NOW - timedelta(days=1))
    learning = RecallScheduleFactory(
        learner=learner, item=c.recall, state=RecallSchedule.State.LEARNING, step=0, reps=1,
        due=NOW - timedelta(minutes=1),
    )  # fmt: skip
    # A lapse: the review card goes to relearning, due again in 10 minutes.
    review_grade(
        learner=learner, schedule_id=reviewed.pk, card_token=reviewed.card_token, rating=1, now=NOW
    )
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.reviews_today == 1
    # The other review waits for tomorrow; the learning card and the relearning step still come.
    assert queue.due_count == 2 and queue.card is not None and queue.card.schedule == learning
    review_grade(
        learner=learner, schedule_id=learning.pk, card_token=learning.card_token, rating=3, now=NOW
    )
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.reviews_today == 1 and queue.graded_today == 2


def test_other_learners_and_unenrolled_courses_stay_out():
    """Only the learner's own schedules, and new items only from courses they are enrolled in."""
    learner, other = UserFactory(), UserFactory()
    mine = course_with_items(learner=learner, daily_new_limit=10)
    course_with_items(learner=other, daily_new_limit=10)
    RecallScheduleFactory(learner=other, item=mine.mc, due=NOW - timedelta(days=1))
    queue = due_queue_for(learner=learner, now=NOW)
    assert (queue.due_count, queue.new_count) == (0, 3)


def test_a_course_without_items_adds_nothing_to_the_queue():
    """Enrolled in a course with no quiz items yet, the learner's queue still shows the other
    course's cards and counts."""
    learner = UserFactory()
    course_with_items(learner=learner, daily_new_limit=10)
    EnrollmentFactory(user=learner, course=CourseFactory())
    queue = due_queue_for(learner=learner, now=NOW)
    assert (queue.due_count, queue.new_count, queue.card is not None) == (0, 3, True)


def test_daily_new_limit_counts_new_items_introduced_today():
    """New items stop at the course's daily new limit, counting those introduced today."""
    learner = UserFactory()
    c = course_with_items(learner=learner, daily_new_limit=2)
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.new_count == 2
    schedule_start(
        learner=learner,
        item=queue.card.item,
        card_token=uuid.uuid4(),
        rating=3,
        now=NOW,  # type: ignore[union-attr]
        source="review",
    )
    queue = due_queue_for(learner=learner, now=NOW + timedelta(minutes=1))
    assert queue.new_today == 1 and queue.new_count == 1
    # Answering in the lesson is learning, not the session's new quota.
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=NOW)
    assert due_queue_for(learner=learner, now=NOW).new_count == 1


def test_daily_review_cap():
    """After the daily review limit, due cards wait for tomorrow."""
    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    c = course_with_items(learner=learner, daily_review_limit=2, daily_new_limit=0)
    for _ in range(4):
        review_card(
            learner=learner, item=QuizItemFactory(lesson=c.lesson), due=NOW - timedelta(days=1)
        )
    assert due_queue_for(learner=learner, now=NOW).due_count == 2
    for _ in range(2):
        card = due_queue_for(learner=learner, now=NOW).card
        assert card is not None and card.schedule is not None
        # Give each a prior review so it counts as a review, not a new item.
        s = card.schedule
        s.reps, s.state, s.stability, s.difficulty, s.last_review = (
            1,
            RecallSchedule.State.REVIEW,
            3.0,
            5.0,
            NOW - timedelta(days=4),
        )
        s.save()
        review_grade(learner=learner, schedule_id=s.pk, card_token=s.card_token, rating=3, now=NOW)
    queue = due_queue_for(learner=learner, now=NOW)
    assert queue.reviews_today == 2 and queue.due_count == 0 and queue.card is None
    # Tomorrow the cap resets.
    tomorrow = due_queue_for(learner=learner, now=NOW + timedelta(days=1))
    assert tomorrow.reviews_today == 0 and tomorrow.due_count == 2


@pytest.mark.parametrize(
    ("zone", "hour", "now", "start"),
    [
        # 03:00 in Berlin (CEST, UTC+2) is before a 04:00 day start: still yesterday's day.
        (
            "Europe/Berlin",
            4,
            datetime(2026, 6, 10, 1, 0, tzinfo=UTC),
            datetime(2026, 6, 9, 2, 0, tzinfo=UTC),
        ),
        # 05:00 in Berlin: today's day, which began at 04:00 local.
        (
            "Europe/Berlin",
            4,
            datetime(2026, 6, 10, 3, 0, tzinfo=UTC),
            datetime(2026, 6, 10, 2, 0, tzinfo=UTC),
        ),
        # Midnight start in New York (EDT, UTC-4).
        (
            "America/New_York",
            0,
            datetime(2026, 6, 10, 3, 0, tzinfo=UTC),
            datetime(2026, 6, 9, 4, 0, tzinfo=UTC),
        ),
        # A DST change day in Berlin (clocks go forward at 02:00 on 29 March 2026).
        (
            "Europe/Berlin",
            4,
            datetime(2026, 3, 29, 12, 0, tzinfo=UTC),
            datetime(2026, 3, 29, 2, 0, tzinfo=UTC),
        ),
    ],
)
def test_local_day_bounds(zone, hour, now, start):
    """ "Today" is the learner's local day starting at day_start_hour, whatever the UTC date."""
    learner = UserFactory(time_zone=zone, day_start_hour=hour)
    got_start, got_end = local_day_bounds(learner=learner, now=now)
    assert got_start == start
    assert got_start <= now < got_end
    assert timedelta(hours=23) <= got_end - got_start <= timedelta(hours=25)


def test_new_limit_resets_at_day_start_hour_not_midnight():
    """With a 04:00 start, a new item taken at 01:00 local still counts on the previous day."""
    learner = UserFactory(time_zone="Europe/Berlin", day_start_hour=4)
    c = course_with_items(learner=learner, daily_new_limit=1)
    late_evening = datetime(2026, 6, 9, 21, 0, tzinfo=UTC)  # 23:00 Berlin
    schedule_start(
        learner=learner,
        item=c.mc,
        card_token=uuid.uuid4(),
        rating=3,
        now=late_evening,
        source="review",
    )
    after_midnight = datetime(2026, 6, 9, 23, 0, tzinfo=UTC)  # 01:00 Berlin, same learner-day
    assert due_queue_for(learner=learner, now=after_midnight).new_count == 0
    after_start = datetime(2026, 6, 10, 2, 30, tzinfo=UTC)  # 04:30 Berlin, a new day
    assert due_queue_for(learner=learner, now=after_start).new_count == 1


@pytest.mark.postgres
def test_due_queue_uses_the_learner_due_index(django_assert_max_num_queries):
    """On PostgreSQL the due count is an index scan on (learner, due)."""
    from django.db import connection

    learner = UserFactory()
    qs = RecallSchedule.objects.filter(learner=learner, due__lte=NOW).order_by("due")
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        plan = qs.explain()
        cursor.execute("SET enable_seqscan = on")
    assert "schedule_learner_due" in plan


def _counts_reference(*, learner, now):  # type: ignore[no-untyped-def]
    """The queue's counts from plain queries and Python, course by course: the reference the
    one statement must match."""
    from courses.models import Enrollment
    from quizzes.models import QuizItem, ReviewLog
    from quizzes.selectors.queue import LEARN_AHEAD

    day_start, day_end = local_day_bounds(learner=learner, now=now)
    # A schedule without reps (its first grade undone) is a new item again.
    scheduled = set(
        RecallSchedule.objects.filter(learner=learner, reps__gt=0).values_list("item_id", flat=True)
    )
    due = new = reviews_today = new_today = 0
    for course_id, review_limit, new_limit in Enrollment.objects.filter(
        user=learner, role=Enrollment.Role.LEARNER
    ).values_list("course_id", "course__daily_review_limit", "course__daily_new_limit"):
        logs = [
            log
            for log in ReviewLog.objects.filter(
                learner=learner, item__lesson__module__course_id=course_id
            ).select_related("undo")
            if log.reviewed_at >= day_start
            and log.source != ReviewLog.Source.LESSON
            and not hasattr(log, "undo")
        ]
        course_new = sum(1 for log in logs if log.state_before["reps"] == 0)
        course_reviews = sum(
            1 for log in logs if log.state_before["reps"] != 0 and log.state_before["state"] == 2
        )
        schedules = RecallSchedule.objects.filter(
            learner=learner, item__lesson__module__course_id=course_id, reps__gt=0
        )
        # A suspended leech is due never, and new never again.
        active = [s for s in schedules if not s.suspended]
        review_due = sum(1 for s in active if s.state == 2 and s.due < day_end)
        learning_due = sum(1 for s in active if s.state != 2 and s.due <= now + LEARN_AHEAD)
        available = (
            QuizItem.objects.filter(lesson__module__course_id=course_id)
            .exclude(pk__in=scheduled)
            .count()
        )
        due += learning_due + min(review_due, max(review_limit - course_reviews, 0))
        new += min(available, max(new_limit - course_new, 0))
        reviews_today += course_reviews
        new_today += course_new
    return (due, new, reviews_today, new_today)


@pytest.mark.parametrize("seed", range(6))
def test_one_statement_counts_match_a_plain_reference(seed, django_assert_num_queries):
    """On varied learners (several courses and limits, none, instructor enrolments, backlogs past
    the cap, cards in every state, today's grades from every source and state, undone grades,
    other zones, suspended leeches), the one statement gives exactly the counts of a
    course-by-course reference."""
    import random

    from courses.models import Enrollment
    from quizzes.models import ReviewLog, ReviewUndo
    from quizzes.selectors.queue import queue_counts_for
    from tests.factories import CourseFactory, EnrollmentFactory, LessonFactory, ModuleFactory

    rng = random.Random(seed)
    courses = []
    for _ in range(3):
        course = CourseFactory(
            daily_new_limit=rng.choice([0, 1, 3, 20]), daily_review_limit=rng.choice([0, 2, 5, 200])
        )
        lesson = LessonFactory(module=ModuleFactory(course=course))
        items = [QuizItemFactory(lesson=lesson, position=i) for i in range(rng.randint(0, 8))]
        courses.append((course, items))
    learners = []
    for n in range(6):
        learner = UserFactory(
            time_zone=rng.choice(["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"]),
            day_start_hour=rng.choice([0, 4, 23]),
        )
        learners.append(learner)
        for course, items in courses:
            enrolled = rng.random() < 0.6
            if enrolled and n != 0:  # learner 0 is enrolled nowhere
                role = rng.choice([Enrollment.Role.LEARNER] * 3 + [Enrollment.Role.INSTRUCTOR])
                EnrollmentFactory(course=course, user=learner, role=role)
            for item in items:
                if rng.random() < 0.5:
                    continue
                schedule = RecallScheduleFactory(
                    learner=learner,
                    item=item,
                    state=rng.choice(list(RecallSchedule.State)),
                    reps=rng.choice([0, 1, 1, 3]),
                    due=NOW + timedelta(minutes=rng.randint(-72 * 60, 48 * 60)),
                    suspended=rng.random() < 0.15,
                )
                for _ in range(rng.randint(0, 3)):
                    reps = rng.choice([0, 0, 1, 4])
                    log = ReviewLog.objects.create(
                        schedule=schedule,
                        learner=learner,
                        item=item,
                        rating=rng.randint(1, 4),
                        source=rng.choice(list(ReviewLog.Source)),
                        reviewed_at=NOW - timedelta(hours=rng.randint(0, 40)),
                        idempotency_key=uuid.uuid4(),
                        state_before={"state": rng.choice([1, 2, 3]), "reps": reps},
                        state_after={"state": 2, "reps": reps + 1},
                    )
                    if rng.random() < 0.2:
                        ReviewUndo.objects.create(log=log, learner=learner, undone_at=NOW)
    compared = 0
    for learner in learners:
        for now in (NOW, NOW + timedelta(hours=9), NOW - timedelta(days=2)):
            expected = _counts_reference(learner=learner, now=now)
            with django_assert_num_queries(1):
                got = queue_counts_for(learner=learner, now=now)
            assert (got.due_count, got.new_count, got.reviews_today, got.new_today) == expected, (
                got.courses
            )
            compared += any(expected)
    assert compared  # the data gave the counts something to count


def test_card_rows_become_the_same_model_instances_as_the_orm_gives():
    """The card is read as one row of values (a prepared statement on PostgreSQL) and turned into
    the schedule, item, lesson, module and course: every field as the ORM reads it (JSON steps,
    the UUID token, aware datetimes), and the choices of a multiple-choice item in order."""
    from quizzes.selectors.queue import card_for

    learner = UserFactory(time_zone="UTC", day_start_hour=0)
    c = course_with_items(learner=learner, learning_steps_minutes=[1, 10], daily_new_limit=5)
    schedule = review_card(learner=learner, item=c.mc, due=NOW - timedelta(hours=2))
    for card in (
        due_queue_for(learner=learner, now=NOW).card,
        card_for(learner=learner, schedule_id=schedule.pk, item_id=None),
    ):
        assert card is not None and card.schedule is not None
        expected = RecallSchedule.objects.select_related("item__lesson__module__course").get()
        for field in RecallSchedule._meta.concrete_fields:
            got = getattr(card.schedule, field.attname)
            assert got == getattr(expected, field.attname), field.name
        assert card.item == expected.item and card.item.prompt == c.mc.prompt
        course = card.item.lesson.module.course
        assert course.learning_steps_minutes == [1, 10] and course.title == c.course.title
        assert card.item.lesson.title == c.lesson.title
        assert [choice.key for choice in card.choices] == ["hbm", "gddr", "tflops"]
    new = card_for(learner=learner, schedule_id=None, item_id=c.numeric.pk)
    assert new.schedule is None and new.item == c.numeric and new.choices == []
    assert new.item.expected_value == 11 and new.item.lesson.module.course == c.course
    with pytest.raises(QuizItem.DoesNotExist):
        card_for(learner=learner, schedule_id=None, item_id=c.mc.pk)  # already scheduled
    with pytest.raises(RecallSchedule.DoesNotExist):
        card_for(learner=UserFactory(), schedule_id=schedule.pk, item_id=None)
