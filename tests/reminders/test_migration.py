"""Moving the digest outbox from quizzes to reminders keeps every row: a database populated before
the move is migrated forward and read through today's models."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from reminders.models import ReminderDigest

LAST_BEFORE_THE_MOVE = ("quizzes", "0003_drop_redundant_schedule_learner_index")


def _before_the_move() -> list[tuple[str, str]]:
    """Every other app at its latest migration; quizzes just before the move."""
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    return [n for n in leaves if n[0] not in {"quizzes", "reminders"}] + [LAST_BEFORE_THE_MOVE]


@pytest.mark.django_db(transaction=True)
def test_digests_written_before_the_move_are_read_after_it() -> None:
    before = _before_the_move()
    executor = MigrationExecutor(connection)
    executor.migrate([*before, ("reminders", None)])
    old = MigrationExecutor(connection).loader.project_state(before).apps
    user = old.get_model("accounts", "User").objects.create(
        email="before@example.com", password="!", time_zone="Europe/Berlin"
    )
    course = old.get_model("courses", "Course").objects.create(slug="c", title="C")
    module = old.get_model("courses", "Module").objects.create(course=course, slug="m", title="M")
    lesson = old.get_model("courses", "Lesson").objects.create(
        module=module, slug="l", title="L", objective="o", body_markdown="b"
    )
    item = old.get_model("quizzes", "QuizItem").objects.create(
        lesson=lesson, key="k", kind="free_recall", prompt="p"
    )
    OldDigest = old.get_model("quizzes", "ReminderDigest")
    sent = OldDigest.objects.create(
        learner=user,
        local_date=date(2026, 3, 8),
        status="sent",
        due_count=3,
        first_item=item,
        attempts=1,
        message_id="<digest1@example.com>",
        history=[{"status": "sent", "note": "3 due"}],
        sent_at=datetime(2026, 3, 8, 7, tzinfo=UTC),
    )
    pending = OldDigest.objects.create(learner=user, local_date=date(2026, 3, 9))

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert ReminderDigest._meta.db_table == "quizzes_reminderdigest"
    rows = {d.pk: d for d in ReminderDigest.objects.all()}
    assert set(rows) == {sent.pk, pending.pk}
    moved = rows[sent.pk]
    assert (moved.learner.email, moved.local_date, moved.status, moved.due_count) == (
        "before@example.com",
        date(2026, 3, 8),
        "sent",
        3,
    )
    assert moved.first_item_id == item.pk
    assert moved.message_id == "<digest1@example.com>"
    assert moved.history == [{"status": "sent", "note": "3 due"}]
    assert rows[pending.pk].status == ReminderDigest.Status.PENDING
    # The admin's permissions follow the model to its new app.
    assert ContentType.objects.get_for_model(ReminderDigest).app_label == "reminders"
    assert not ContentType.objects.filter(app_label="quizzes", model="reminderdigest").exists()
    # The unique (learner, local date) key came along with the table.
    with pytest.raises(IntegrityError):
        ReminderDigest.objects.create(learner_id=user.pk, local_date=date(2026, 3, 8))
