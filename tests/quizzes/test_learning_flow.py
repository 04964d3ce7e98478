"""A learner answers a lesson's items, then reviews across days; every schedule equals fsrs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services import fsrs_adapter
from tests.quizzes.factories import course_with_items

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
START = datetime(2026, 4, 6, 8, 30, tzinfo=UTC)


def test_lesson_then_days_of_reviews_match_fsrs(client, learner):
    """Lesson answers (wrong MC = Again, right numeric = Good, self-graded recall), then ten days of
    session reviews through the views; each schedule equals fsrs.Scheduler.review_card on the
    same ratings at the same times (the learner has turned the load balancer off)."""
    learner.load_balancer_enabled = False
    learner.save(update_fields=["load_balancer_enabled"])
    c = course_with_items(
        learner=learner,
        desired_retention=0.9,
        learning_steps_minutes=[1, 10],
        relearning_steps_minutes=[10],
        daily_new_limit=0,
    )

    def scheduler(item_id: int, reps: int) -> fsrs.Scheduler:
        # fsrs itself, with the fuzz seeded per (learner, item, reps) as the service seeds it.
        return fsrs_adapter.SeededScheduler(
            desired_retention=0.9,
            learning_steps=(timedelta(minutes=1), timedelta(minutes=10)),
            relearning_steps=(timedelta(minutes=10),),
            enable_fuzzing=True,
            seed=fsrs_adapter.fuzz_seed(learner_id=learner.pk, item_id=item_id, reps=reps),
        )

    cards: dict[int, fsrs.Card] = {}
    client.force_login(learner)
    with time_machine.travel(START, tick=False) as traveller:
        lesson_answers = [
            (c.mc, {"choice": ["hbm"]}, fsrs.Rating.Again),
            (c.numeric, {"value": "11"}, fsrs.Rating.Good),
            (c.recall, {"rating": "2"}, fsrs.Rating.Hard),
        ]
        for item, data, rating in lesson_answers:
            client.post(reverse("quizzes:answer", args=[item.pk]), data, **HTMX)
            now = timezone.now()
            cards[item.pk], _ = scheduler(item.pk, 0).review_card(
                fsrs.Card(card_id=1, due=now), rating, review_datetime=now
            )
            traveller.shift(timedelta(seconds=20))
        assert RecallSchedule.objects.filter(learner=learner).count() == 3

        # Each rating pattern cycles per card; the learner reviews twice a day for ten days.
        pattern = [3, 3, 1, 3, 4, 2, 3]
        graded = 0
        for day in range(10):
            for hour in (9, 19):
                traveller.move_to(START.replace(hour=hour) + timedelta(days=day))
                while True:
                    html = client.get(reverse("quizzes:session")).content.decode()
                    match = re.search(r'name="schedule" value="(\d+)"', html)
                    if not match:
                        assert "Nothing is due right now" in html
                        break
                    schedule = RecallSchedule.objects.get(pk=int(match.group(1)))
                    rating = pattern[graded % len(pattern)]
                    client.post(
                        reverse("quizzes:grade"),
                        {
                            "schedule_id": schedule.pk,
                            "card_token": str(schedule.card_token),
                            "rating": rating,
                        },
                        **HTMX,
                    )
                    now = timezone.now()
                    cards[schedule.item_id], _ = scheduler(
                        schedule.item_id, schedule.reps
                    ).review_card(cards[schedule.item_id], fsrs.Rating(rating), review_datetime=now)
                    graded += 1
                    traveller.shift(timedelta(seconds=15))
                    assert graded < 200
        assert graded >= 9
        for schedule in RecallSchedule.objects.filter(learner=learner):
            card = cards[schedule.item_id]
            assert schedule.state == card.state.value
            assert schedule.step == card.step
            assert schedule.stability == pytest.approx(card.stability, rel=1e-12)
            assert schedule.difficulty == pytest.approx(card.difficulty, rel=1e-12)
            assert schedule.due == card.due
            assert schedule.last_review == card.last_review
    assert ReviewLog.objects.filter(learner=learner, source="lesson").count() == 3
    assert ReviewLog.objects.filter(learner=learner, source="review").count() == graded
