"""The quiz item admin reads its figures within the content importer's ranges: an out-of-range
figure is refused at its field and nothing is saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from quizzes.models import Choice, QuizItem
from tests.factories import ChoiceFactory, QuizItemFactory

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = ["1e308", "NaN", "inf", "-inf", "1e16", "1" * 50]
FIELDS = {
    # The expected answer may be negative; its size is bounded.
    "expected_value": [*OUT_OF_RANGE, "-1e16", "1e-12"],
    "tolerance": [*OUT_OF_RANGE, "-5"],
    "position": [*OUT_OF_RANGE, "-5", "2.5", "10001"],
    "choices-0-position": [*OUT_OF_RANGE, "-5", "10001"],
}


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.fixture
def item() -> QuizItem:
    item = QuizItemFactory(
        kind=QuizItem.Kind.NUMERIC, position=1, expected_value=24.0, unit="GB", tolerance=0.5
    )
    ChoiceFactory(item=item, position=0)
    return item


def _post(client: Client, item: QuizItem, **fields: str) -> Any:
    choice = item.choices.get()
    data = {
        "lesson": str(item.lesson_id),
        "key": item.key,
        "kind": item.kind,
        "position": "1",
        "prompt": item.prompt,
        "explanation": item.explanation,
        "expected_value": "24",
        "unit": "GB",
        "tolerance": "0.5",
        "model_answer": "",
        "choices-TOTAL_FORMS": "1",
        "choices-INITIAL_FORMS": "1",
        "choices-MIN_NUM_FORMS": "0",
        "choices-MAX_NUM_FORMS": "1000",
        "choices-0-id": str(choice.pk),
        "choices-0-item": str(item.pk),
        "choices-0-key": choice.key,
        "choices-0-position": "0",
        "choices-0-text": choice.text,
        "choices-0-reason": choice.reason,
        **fields,
    }
    return client.post(reverse("admin:quizzes_quizitem_change", args=[item.pk]), data)


def _state(item: QuizItem) -> tuple[Any, ...]:
    item.refresh_from_db()
    choice = item.choices.get()
    return (item.prompt, item.position, item.expected_value, item.tolerance, choice.position)


@pytest.mark.parametrize(
    ("field", "value"), [(field, value) for field, values in FIELDS.items() for value in values]
)
def test_out_of_range_figure_is_refused_at_its_field(
    staff_client: Client, item: QuizItem, field: str, value: str
) -> None:
    before = _state(item)
    response = _post(staff_client, item, **{field: value}, prompt="Changed?")
    assert response.status_code == 200
    form = response.context["adminform"].form
    formset = response.context["inline_admin_formsets"][0].formset
    errors = [*form.errors, *(f"choices-0-{name}" for name in formset.forms[0].errors)]
    assert errors == [field]
    assert 'class="errorlist' in response.content.decode()
    assert _state(item) == before


def test_in_range_figures_are_saved(staff_client: Client, item: QuizItem) -> None:
    response = _post(
        staff_client,
        item,
        position="10000",
        expected_value="-40",
        tolerance="0",
        **{"choices-0-position": "3"},
    )
    assert response.status_code == 302
    assert _state(item)[1:] == (10000, -40.0, 0.0, 3)
    assert Choice.objects.get(item=item).position == 3
