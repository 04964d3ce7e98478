"""Grading the same card concurrently advances it once (PostgreSQL row lock + card token)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from quizzes.models import RecallSchedule, ReviewLog
from quizzes.services.review import review_grade, schedule_start
from tests.quizzes.factories import course_with_items

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _race(n: int, call: Callable[[], int]) -> tuple[list[int], list[BaseException]]:
    """Run `call` in `n` threads released together by a barrier, each on its own connection;
    return what they returned and what they raised."""
    barrier = threading.Barrier(n)
    results: list[int] = []
    errors: list[BaseException] = []

    def fire() -> None:
        try:
            barrier.wait()
            results.append(call())
        except BaseException as exc:  # collected and asserted by the caller
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=fire) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_same_grade_writes_one_log(learner):
    """Eight threads fire the same grade with the same token: exactly one ReviewLog, one advance."""
    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    token, due = schedule.card_token, schedule.due
    results, errors = _race(
        8,
        lambda: (
            review_grade(
                learner=learner,
                schedule_id=schedule.pk,
                card_token=token,
                rating=3,
                now=due + timedelta(hours=1),
            ).pk
        ),
    )
    assert errors == []
    assert len(results) == 8 and len(set(results)) == 1
    assert ReviewLog.objects.filter(schedule=schedule).count() == 2
    schedule.refresh_from_db()
    assert schedule.reps == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_first_answer_creates_one_schedule(learner):
    """Two tabs answering an item for the first time with one token make one schedule, one log."""
    c = course_with_items(learner=learner)
    token = uuid.uuid4()
    results, errors = _race(
        4,
        lambda: (
            schedule_start(learner=learner, item=c.mc, card_token=token, rating=1, now=T0).log.pk
        ),
    )
    assert errors == []
    assert len(set(results)) == 1
    assert RecallSchedule.objects.count() == 1
    assert ReviewLog.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_undos_undo_one_grade_and_tell_the_other(learner):
    """Two undos at once (a double click, two tabs): one undoes the latest grade, the other is
    told it was already undone; the grade before it stays as it was."""
    from quizzes.models import ReviewUndo
    from quizzes.services.undo import UndoRaced, review_undo

    c = course_with_items(learner=learner)
    schedule_start(learner=learner, item=c.recall, card_token=uuid.uuid4(), rating=3, now=T0)
    schedule = RecallSchedule.objects.get()
    now = schedule.due + timedelta(hours=1)
    first = review_grade(
        learner=learner, schedule_id=schedule.pk, card_token=schedule.card_token, rating=3, now=now
    )
    schedule.refresh_from_db()
    second = review_grade(
        learner=learner, schedule_id=schedule.pk, card_token=schedule.card_token, rating=1,
        now=now + timedelta(minutes=1),
    )  # fmt: skip
    later = now + timedelta(minutes=2)
    results: list[int] = []
    errors: list[BaseException] = []

    def undo() -> None:
        try:
            results.append(review_undo(learner=learner, now=later).pk)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    # Hold the schedule's row lock until both undos have chosen the latest grade and wait for
    # the lock: they then race for the same grade, as a double click does.
    threads = [threading.Thread(target=undo) for _ in range(2)]
    with transaction.atomic():
        RecallSchedule.objects.select_for_update().get(pk=schedule.pk)
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database()"
                )
                if cursor.fetchone()[0] >= 2:
                    break
            time.sleep(0.05)
    for t in threads:
        t.join()
    assert results == [second.pk]
    assert len(errors) == 1 and isinstance(errors[0], UndoRaced)
    assert list(ReviewUndo.objects.values_list("log_id", flat=True)) == [second.pk]
    schedule.refresh_from_db()
    assert schedule.reps == 2 and schedule.due == datetime.fromisoformat(second.state_before["due"])
    assert not ReviewUndo.objects.filter(log=first).exists()
