"""What a chunk's digests show, read in one go at send time: each learner's count of items due
and the earliest-due one (ties by id), leaving out suspended and never-reviewed cards."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from quizzes.models import RecallSchedule
from reminders.scan import digests_scan
from reminders.selectors import digests_content_for
from tests.factories import ChoiceFactory, RecallScheduleFactory, UserFactory
from tests.quizzes.factories import course_with_items
from tests.reminders.factories import learner_due

pytestmark = pytest.mark.django_db


def expected(learner_id: int) -> tuple[int, int | None]:
    now = timezone.now()
    due = [
        s
        for s in RecallSchedule.objects.filter(learner_id=learner_id).order_by("due", "id")
        if s.due <= now and not s.suspended and s.reps > 0
    ]
    return len(due), due[0].pk if due else None


def test_counts_and_first_schedules_for_a_chunk(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    """Learners with several due items, a tie on `due`, a suspended earliest card, a new card,
    and nothing due: the count and first schedule of each, with items and choices read in two
    queries on PostgreSQL (a third for the counts per course of learners due in several) and
    three elsewhere, however many learners."""
    now = timezone.now()
    several = learner_due(due=now - timedelta(hours=3), items=3)
    tie = learner_due(due=now - timedelta(hours=1), items=2)
    suspended = learner_due(due=now - timedelta(hours=1), items=1)
    RecallScheduleFactory(learner=suspended, due=now - timedelta(days=2), suspended=True, reps=2)
    new_card = learner_due(due=now - timedelta(hours=1), items=1)
    RecallScheduleFactory(learner=new_card, due=now - timedelta(days=2), reps=0)
    nothing = learner_due(due=now + timedelta(days=1), items=2)
    ChoiceFactory(item=several.recall_schedules.order_by("due", "id").first().item)
    learners = [several, tie, suspended, new_card, nothing]

    # A third query on PostgreSQL: `several` has items due in three courses (one per factory item).
    with django_assert_num_queries(3):
        contents = digests_content_for(learner_ids=[u.pk for u in learners], now=timezone.now())
        for content in contents.values():
            if content.first_schedule is not None:
                list(content.first_schedule.item.choices.all())

    for learner in learners:
        count, first = expected(learner.pk)
        content = contents[learner.pk]
        assert content.due_count == count
        assert (content.first_schedule.pk if content.first_schedule else None) == first
    assert contents[nothing.pk].due_count == 0
    assert contents[several.pk].due_count == 3
    assert contents[several.pk].courses == tuple(
        sorted((s.course.title, 1) for s in several.recall_schedules.all())
    )
    assert (
        contents[suspended.pk].courses == ()
    )  # one course has items due, the other's is suspended


def test_a_digest_names_each_course_with_items_due(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    """A learner enrolled in two courses gets one digest a day, which counts what is due in each
    course by its title (text and HTML)."""
    now = timezone.now()
    learner = UserFactory(email="two@example.com", reminder_hour=0, day_start_hour=0)
    hardware = course_with_items(learner=learner, title="GPUs, TPUs, and AI Hardware")
    budget = course_with_items(learner=learner, title="Serving on a Budget")
    for item in (hardware.mc, hardware.recall, budget.recall):
        RecallScheduleFactory(
            learner=learner, item=item, due=now - timedelta(hours=1), reps=3, state=2,
            stability=3.0, difficulty=5.0, last_review=now - timedelta(days=3),
        )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        assert digests_scan(now=now).created == 1
    (message,) = mail.outbox
    assert "You have 3 items due for recall today." in message.body
    assert "  - GPUs, TPUs, and AI Hardware: 2 items\n  - Serving on a Budget: 1 item\n" in (
        message.body
    )
    html = message.alternatives[0].content
    assert (
        "<li>GPUs, TPUs, and AI Hardware: 2 items</li><li>Serving on a Budget: 1 item</li>" in html
    )
