"""The admin's workload card reads its numbers within the calculator's ranges: an out-of-range
figure is refused at its field and nothing is saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from planner.models import WorkloadCard
from tests.planner.factories import WorkloadCardFactory

pytestmark = pytest.mark.django_db

NUMBERS = ["latency_target_ms", "concurrency", "batch_window_hours"]
# Past each range (1e8 users, a day in ms, 1e5 hours) but inside the column; past the column.
OUT_OF_RANGE = ["1e308", "-5", "NaN", "inf", "100000001", "2147483648", "1" * 50]


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.fixture
def card() -> WorkloadCard:
    return WorkloadCardFactory(latency_target_ms=2000, concurrency=20, batch_window_hours=None)


def _post(client: Client, card: WorkloadCard, **numbers: str) -> Any:
    data = {
        "owner": str(card.owner_id),
        "slug": "",
        "name": card.name,
        "kind": card.kind,
        "model_name": card.model_name,
        "latency_target_ms": "2000",
        "concurrency": "20",
        "batch_window_hours": "",
        "precision": card.precision,
        "notes": "",
        "inputs": "{}",
        "result": "{}",
        **numbers,
    }
    return client.post(reverse("admin:planner_workloadcard_change", args=[card.pk]), data)


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("field", NUMBERS)
def test_out_of_range_number_is_refused_at_its_field(
    staff_client: Client, card: WorkloadCard, field: str, value: str
) -> None:
    response = _post(staff_client, card, **{field: value}, notes="changed")
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == [field]
    assert f'id="id_{field}_error"' in response.content.decode()
    card.refresh_from_db()
    assert (card.latency_target_ms, card.concurrency, card.batch_window_hours) == (2000, 20, None)
    assert card.notes == ""


def test_in_range_numbers_are_saved(staff_client: Client, card: WorkloadCard) -> None:
    response = _post(
        staff_client, card, latency_target_ms="1500", concurrency="0", batch_window_hours="2.5"
    )
    assert response.status_code == 302
    card.refresh_from_db()
    assert (card.latency_target_ms, card.concurrency, card.batch_window_hours) == (1500, 0, 2.5)


def test_the_stored_result_cannot_be_typed_over(staff_client: Client, card: WorkloadCard) -> None:
    """The calculator's stored inputs and result are shown, not edited: a posted value is ignored."""
    stored = (card.inputs, card.result)
    response = _post(staff_client, card, inputs='{"users": 1}', result='{"max_active_users": 9999}')
    assert response.status_code == 302
    card.refresh_from_db()
    assert (card.inputs, card.result) == stored
