"""The capstone's admin reads every number within the learner's and instructor's ranges and
writes through their services: an out-of-range figure is refused at its field, nothing saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from planner.capstone.forms import WORKSHEET_BOUNDS
from planner.models import (
    WORKSHEET_FIELDS,
    WORKSHEET_NUMBER_FIELDS,
    CapstoneWorksheet,
    Criterion,
    Level,
)
from tests.planner.factories import (
    GOOD_PLAN,
    WorkloadCardFactory,
    course_taught_by,
    submission_for,
    worksheet_for,
)

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = ["1e308", "-5", "NaN", "inf", "2147483648", "1" * 50]
# A level's points past RUBRIC_POINTS, a position past POSITION, each inside the column.
POINTS_OUT_OF_RANGE = [*OUT_OF_RANGE, "1001", "2.5"]
POSITION_OUT_OF_RANGE = [*OUT_OF_RANGE, "10001"]


@pytest.fixture
def staff_client(client: Client) -> Client:
    client.force_login(User.objects.create_superuser(email="admin@example.com", password="x"))
    return client


@pytest.fixture
def worksheet(learner: User) -> CapstoneWorksheet:
    return worksheet_for(learner, course_taught_by())


def _worksheet_post(client: Client, worksheet: CapstoneWorksheet, **fields: Any) -> Any:
    data: dict[str, Any] = {name: "" for name in WORKSHEET_FIELDS}
    data.update({name: str(value) for name, value in GOOD_PLAN.items()})
    data.update(learner=str(worksheet.learner_id), course=str(worksheet.course_id), **fields)
    url = reverse("admin:planner_capstoneworksheet_change", args=[worksheet.pk])
    return client.post(url, data)


def test_every_worksheet_number_has_a_bound() -> None:
    assert set(WORKSHEET_BOUNDS) == set(WORKSHEET_NUMBER_FIELDS)


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("field", WORKSHEET_NUMBER_FIELDS)
def test_worksheet_number_out_of_range_is_refused(
    staff_client: Client, worksheet: CapstoneWorksheet, field: str, value: str
) -> None:
    response = _worksheet_post(staff_client, worksheet, **{field: value}, feature="Changed")
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == [field]
    assert f'id="id_{field}_error"' in response.content.decode()
    worksheet.refresh_from_db()
    assert worksheet.feature == GOOD_PLAN["feature"]
    assert getattr(worksheet, field) == GOOD_PLAN.get(field)


def test_worksheet_saves_through_the_autosave(
    staff_client: Client, worksheet: CapstoneWorksheet
) -> None:
    """In range, the worksheet is saved and the calculator's result refreshed, as on autosave."""
    card = WorkloadCardFactory(owner=worksheet.learner)
    before = worksheet.calculator_result["max_active_users"]
    response = _worksheet_post(
        staff_client, worksheet, gpu_memory_gb="80", kv_per_user_gb="0.5", workload_cards=[card.pk]
    )
    assert response.status_code == 302
    worksheet.refresh_from_db()
    assert worksheet.gpu_memory_gb == 80
    assert worksheet.calculator_result["max_active_users"] > before
    assert list(worksheet.workload_cards.all()) == [card]


def test_worksheet_refuses_another_learners_card(
    staff_client: Client, worksheet: CapstoneWorksheet
) -> None:
    card = WorkloadCardFactory()
    response = _worksheet_post(staff_client, worksheet, workload_cards=[card.pk])
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == ["workload_cards"]
    assert not worksheet.workload_cards.exists()


@pytest.fixture
def criterion() -> Criterion:
    return course_taught_by().rubric.criteria.get(key="memory")


def _criterion_post(client: Client, criterion: Criterion, **fields: str) -> Any:
    levels = list(criterion.levels.order_by("position"))
    data = {
        "rubric": str(criterion.rubric_id),
        "position": "0",
        "key": criterion.key,
        "title": criterion.title,
        "description": "",
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": str(len(levels)),
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for i, level in enumerate(levels):
        data |= {
            f"levels-{i}-id": str(level.pk),
            f"levels-{i}-criterion": str(criterion.pk),
            f"levels-{i}-position": str(level.position),
            f"levels-{i}-key": level.key,
            f"levels-{i}-title": level.title,
            f"levels-{i}-points": str(level.points),
            f"levels-{i}-description": "",
        }
    data |= fields
    return client.post(reverse("admin:planner_criterion_change", args=[criterion.pk]), data)


def _levels(criterion: Criterion) -> list[tuple[str, int, int]]:
    return list(criterion.levels.order_by("pk").values_list("title", "points", "position"))


@pytest.mark.parametrize("value", POINTS_OUT_OF_RANGE)
def test_level_points_out_of_range_are_refused(
    staff_client: Client, criterion: Criterion, value: str
) -> None:
    before = _levels(criterion)
    response = _criterion_post(
        staff_client, criterion, **{"levels-2-points": value, "title": "Changed"}
    )
    assert response.status_code == 200
    formset = response.context["inline_admin_formsets"][0].formset
    assert [list(f.errors) for f in formset.forms] == [[], [], ["points"]]
    assert 'class="errorlist' in response.content.decode()
    assert _levels(criterion) == before
    criterion.refresh_from_db()
    assert criterion.title == "Memory and KV estimate"


@pytest.mark.parametrize("field", ["position", "levels-0-position"])
@pytest.mark.parametrize("value", POSITION_OUT_OF_RANGE)
def test_positions_out_of_range_are_refused(
    staff_client: Client, criterion: Criterion, field: str, value: str
) -> None:
    before = _levels(criterion)
    response = _criterion_post(staff_client, criterion, **{field: value, "title": "Changed"})
    assert response.status_code == 200
    form = response.context["adminform"].form
    formset = response.context["inline_admin_formsets"][0].formset
    assert list(form.errors) + [e for f in formset.forms for e in f.errors] == ["position"]
    assert _levels(criterion) == before
    criterion.refresh_from_db()
    assert (criterion.title, criterion.position) == ("Memory and KV estimate", 0)


def test_criterion_and_levels_save_in_range(staff_client: Client, criterion: Criterion) -> None:
    response = _criterion_post(
        staff_client, criterion, title="Memory", **{"levels-2-points": "1000", "position": "3"}
    )
    assert response.status_code == 302
    criterion.refresh_from_db()
    assert (criterion.title, criterion.position) == ("Memory", 3)
    assert Level.objects.get(criterion=criterion, key="strong").points == 1000


def test_rubric_criteria_inline_bounds_the_position(
    staff_client: Client, criterion: Criterion
) -> None:
    rubric = criterion.rubric
    criteria = list(rubric.criteria.order_by("position"))
    data = {
        "course": str(rubric.course_id),
        "title": rubric.title,
        "criteria-TOTAL_FORMS": str(len(criteria)),
        "criteria-INITIAL_FORMS": str(len(criteria)),
        "criteria-MIN_NUM_FORMS": "0",
        "criteria-MAX_NUM_FORMS": "1000",
    }
    for i, c in enumerate(criteria):
        data |= {
            f"criteria-{i}-id": str(c.pk),
            f"criteria-{i}-rubric": str(rubric.pk),
            f"criteria-{i}-position": "1e308" if i == 0 else str(c.position),
            f"criteria-{i}-key": c.key,
            f"criteria-{i}-title": c.title,
            f"criteria-{i}-description": "",
        }
    url = reverse("admin:planner_rubric_change", args=[rubric.pk])
    response = staff_client.post(url, data)
    assert response.status_code == 200
    formset = response.context["inline_admin_formsets"][0].formset
    assert [list(f.errors) for f in formset.forms] == [["position"], []]
    data["criteria-0-position"] = "5"
    assert staff_client.post(url, data).status_code == 302
    criterion.refresh_from_db()
    assert criterion.position == 5


@pytest.mark.parametrize("model", ["grade", "capstonesubmission"])
def test_grades_and_versions_cannot_be_added_in_the_admin(
    staff_client: Client, learner: User, model: str
) -> None:
    """A grade's points come from the grading page; an added row would skip its checks."""
    submission_for(learner, course_taught_by())
    assert staff_client.get(reverse(f"admin:planner_{model}_add")).status_code == 403


@pytest.mark.parametrize("model", ["rubric", "criterion", "capstoneworksheet", "workloadcard"])
def test_add_pages_render(staff_client: Client, model: str) -> None:
    assert staff_client.get(reverse(f"admin:planner_{model}_add")).status_code == 200


def test_levels_are_added_and_deleted_through_the_service(
    staff_client: Client, criterion: Criterion
) -> None:
    new = {
        "levels-TOTAL_FORMS": "4",
        "levels-3-id": "",
        "levels-3-criterion": str(criterion.pk),
        "levels-3-position": "3",
        "levels-3-key": "expert",
        "levels-3-title": "Expert",
        "levels-3-points": "6",
        "levels-3-description": "",
        "levels-0-DELETE": "on",
    }
    assert _criterion_post(staff_client, criterion, **new).status_code == 302
    assert _levels(criterion) == [("Partial", 2, 1), ("Strong", 4, 2), ("Expert", 6, 3)]
