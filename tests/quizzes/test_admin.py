"""Staff can edit quiz items in the admin; recall data there is read-only."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from tests.factories import RecallScheduleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.mark.parametrize(
    "model",
    ["quizzes_quizitem", "quizzes_recallschedule", "quizzes_reviewlog", "reminders_reminderdigest"],
)
def test_admin_changelists_render(staff_client: Client, model: str) -> None:
    RecallScheduleFactory()
    assert staff_client.get(reverse(f"admin:{model}_changelist")).status_code == 200


def test_recall_schedules_cannot_be_added_or_edited_in_admin(staff_client: Client) -> None:
    schedule = RecallScheduleFactory()
    assert staff_client.get(reverse("admin:quizzes_recallschedule_add")).status_code == 403
    response = staff_client.post(
        reverse("admin:quizzes_recallschedule_change", args=[schedule.pk]), {"reps": 99}
    )
    schedule.refresh_from_db()
    assert schedule.reps == 0
    assert response.status_code in {200, 403}
    assert staff_client.get(reverse("admin:quizzes_quizitem_add")).status_code == 200
