"""Learner forms refuse out-of-range numbers with a message at the field: no 500, nothing saved."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from planner.models import CapstoneWorksheet, WorkloadCard
from tests.factories import CourseFactory, EnrollmentFactory
from tests.planner.factories import GOOD_PLAN, worksheet_for

pytestmark = pytest.mark.django_db

BASELINE_QUERY = (
    "estimate=serving&gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6&users=20"
)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # Issue 12: 500 (the card's integer column overflowed).
        ({"latency_target_ms": "99999999999"}, "must be a whole number from 1 to 86,400,000"),
        ({"latency_target_ms": "1e400"}, "must be a whole number from 1 to 86,400,000"),
        ({"latency_target_ms": "-5"}, "must be greater than zero"),
        # Issue 12: a saved query with a huge users figure.
        (
            {"query": BASELINE_QUERY.replace("users=20", "users=99999999999")},
            "the calculation has errors",
        ),
        ({"query": BASELINE_QUERY + "&context_tokens=1e-10000000"}, "the calculation has errors"),
    ],
)
def test_a_workload_card_with_a_hostile_number_is_a_400_with_a_message(
    client: Client, learner: User, data: dict[str, str], message: str
) -> None:
    client.force_login(learner)
    response = client.post(
        reverse("planner:card_create"), {"name": "Chat", "query": BASELINE_QUERY, **data}
    )

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not WorkloadCard.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "label"),
    [
        # Issue 12: both were a 500.
        ("context_tokens", "2000000000", "context length (tokens)"),
        ("kv_per_token_mb", "1e308", "KV cache per token (MB)"),
        ("gpu_memory_gb", "1e-10000000", "GPU memory (GB)"),
        ("gpu_memory_gb", "inf", "GPU memory (GB)"),
        ("concurrency", "99999999999", "concurrent users (peak)"),
        ("model_gb", "9" * 5000, "model weights (GB)"),
        ("claimed_max_users", "1e400", "users your memory estimate says fit"),
    ],
)
def test_a_worksheet_with_a_hostile_number_is_a_400_naming_the_field(
    client: Client, learner: User, field: str, value: str, label: str
) -> None:
    course = CourseFactory()
    before = worksheet_for(learner, course)
    client.force_login(learner)
    data = {k: ("" if v is None else v) for k, v in GOOD_PLAN.items()}

    response = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]), {**data, field: value}
    )

    assert response.status_code == 400
    assert label.lower() in response.content.decode().lower()
    after = CapstoneWorksheet.objects.get(pk=before.pk)
    assert getattr(after, field) == getattr(before, field)
    assert after.updated_at == before.updated_at


def test_the_worksheet_still_saves_honest_numbers(client: Client, learner: User) -> None:
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    data = {k: ("" if v is None else v) for k, v in GOOD_PLAN.items()}

    response = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]),
        {**data, "kv_per_user_gb": "", "context_tokens": "8192", "kv_per_token_mb": "0.125"},
    )

    assert response.status_code == 302
    saved = CapstoneWorksheet.objects.get(learner=learner, course=course)
    assert saved.context_tokens == 8192
    assert saved.kv_per_token_mb == 0.125
    assert saved.calculator_result["max_active_users"] == 6
