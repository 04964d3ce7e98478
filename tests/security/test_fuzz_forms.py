"""Numeric fuzzing of the learner and instructor forms: a workload card, the worksheet, the rubric
editor, preferences, a numeric answer and a review grade. Each POST answers within a bound with
no 500; a refused one writes nothing (issue 12: these were 500s with nothing said)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings

from core.bounds import Bound
from planner.calculator.parsing import DEFAULT_INPUTS
from planner.capstone.forms import WORKSHEET_BOUNDS
from planner.cards.forms import LATENCY_TARGET_MS
from planner.models import CapstoneWorksheet, Criterion
from quizzes.models import QuizItem
from tests.factories import QuizItemFactory
from tests.planner.factories import GOOD_PLAN
from tests.security.conftest import World
from tests.security.fuzz import Tally, answered_in_bound_without_writes, field_values
from tests.security.test_fuzz_calculator import numeric_bounds

pytestmark = pytest.mark.django_db

EXAMPLES = 300
AT_LEAST = 150
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SAVED = {200, 204, 302}


def fuzz_post(
    client: Client,
    url: str,
    bounds: dict[str, Bound],
    data: Callable[[dict[str, str | None]], dict[str, str]],
    *,
    refused: set[int],
    examples: int = EXAMPLES,
) -> Tally:
    """POST generated values for each of `bounds`' fields; `refused` are the statuses of a
    refusal (nothing may be written), else the answer must be a success."""
    tally = Tally()

    @settings(FUZZ, max_examples=examples)
    @given(values=field_values(bounds))
    def post(values: dict[str, str | None]) -> None:
        tally.add(values)
        status = 0
        with answered_in_bound_without_writes(writes_allowed=lambda: status in SAVED):
            response = client.post(url, data(values))
            status = response.status_code
        assert status in refused | SAVED, (values, status, response.content[:800])

    post()
    return tally


def _given(values: dict[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in values.items() if v is not None}


def test_workload_card_numbers(world: World) -> None:
    """The card's latency target and every number of the calculation it saves."""
    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    bounds = {**numeric_bounds("serving"), "card_latency_target_ms": LATENCY_TARGET_MS}

    def data(values: dict[str, str | None]) -> dict[str, str]:
        latency = values.pop("card_latency_target_ms", None)
        query = {"estimate": "serving", **DEFAULT_INPUTS["serving"], **_given(values)}
        return {"name": "Fuzzed", "query": urlencode(query), "latency_target_ms": latency or ""}

    tally = fuzz_post(client, reverse("planner:card_create"), bounds, data, refused={400})
    tally.assert_each_field_met(sorted(bounds), AT_LEAST)


def test_worksheet_numbers(world: World) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    url = reverse("capstone:worksheet_save", args=[world.course.slug])
    plan = {k: ("" if v is None else str(v)) for k, v in GOOD_PLAN.items()}

    tally = fuzz_post(client, url, WORKSHEET_BOUNDS, lambda v: {**plan, **_given(v)}, refused={400})

    tally.assert_each_field_met(sorted(WORKSHEET_BOUNDS), AT_LEAST)
    saved = CapstoneWorksheet.objects.get(learner=world.learner, course=world.course)
    for name, bound in WORKSHEET_BOUNDS.items():
        value = getattr(saved, name)
        assert value is None or 0 <= value <= bound.maximum, (name, value)


def _criterion_post(criterion: Criterion, values: dict[str, str | None]) -> dict[str, str]:
    """The criterion page's form with its levels, the generated values in place of the numbers."""
    levels = list(criterion.levels.order_by("pk"))
    data = {
        "key": criterion.key,
        "title": criterion.title,
        "description": "",
        "position": values.get("position") or "0",
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": str(len(levels)),
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for i, level in enumerate(levels):
        data.update(
            {
                f"levels-{i}-id": str(level.pk),
                f"levels-{i}-criterion": str(criterion.pk),
                f"levels-{i}-key": level.key,
                f"levels-{i}-title": level.title,
                f"levels-{i}-points": values.get(f"points_{i}") or str(level.points),
                f"levels-{i}-description": "",
                f"levels-{i}-position": values.get(f"level_position_{i}") or str(i),
            }
        )
    return data


def test_rubric_numbers_then_grading_still_works(world: World) -> None:
    """Points and positions of a criterion and its levels; afterwards a grade still saves."""
    client = Client(raise_request_exception=False)
    client.force_login(world.instructor)
    criterion = world.criterion
    url = reverse("capstone:criterion", args=[world.course.slug, criterion.pk])
    count = criterion.levels.count()
    points = Bound(maximum=Decimal(1000), allow_zero=True, integer=True)
    bounds = {
        "position": points,
        **{f"points_{i}": points for i in range(count)},
        **{f"level_position_{i}": points for i in range(count)},
    }

    tally = fuzz_post(
        client, url, bounds, lambda v: _criterion_post(criterion, v), refused={400}, examples=200
    )

    tally.assert_each_field_met(sorted(bounds), 100)
    colleague = world.staff
    client.force_login(colleague)
    assert client.post(reverse("capstone:claim", args=[world.submission.pk])).status_code == 302
    grade = {"action": "draft", "overall_feedback": ""}
    for c in world.course.rubric.criteria.all():
        grade[f"level_{c.pk}"] = str(c.levels.order_by("-points").first().pk)
    assert (
        client.post(reverse("capstone:grade_save", args=[world.submission.pk]), grade).status_code
        == 302
    )


def test_preferences_numbers(world: World) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    base = {
        "display_name": "Lee",
        "time_zone": "Europe/London",
        "day_start_hour": "4",
        "reminders_enabled": "on",
        "reminder_hour": "8",
    }
    hours = Bound(maximum=Decimal(23), allow_zero=True, integer=True)
    bounds = {
        "pause_days": Bound(maximum=Decimal(365), allow_zero=True, integer=True),
        "day_start_hour": hours,
        "reminder_hour": hours,
    }

    # Fewer examples: the page lists every IANA zone (~600 options), ~0.3 s a render.
    tally = fuzz_post(
        client,
        reverse("preferences"),
        bounds,
        lambda v: {**base, **_given(v)},
        refused={200},
        examples=120,
    )

    tally.assert_each_field_met(sorted(bounds), 70)


def test_numeric_answer(world: World) -> None:
    item = QuizItemFactory(
        lesson=world.lesson, kind=QuizItem.Kind.NUMERIC, expected_value=11, tolerance=0.5
    )
    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    bounds = {"value": Bound(maximum=Decimal(10**6), allow_zero=True)}

    tally = fuzz_post(
        client,
        reverse("quizzes:answer", args=[item.pk]),
        bounds,
        _given,
        refused=set(),
        examples=200,
    )

    tally.assert_each_field_met(["value"], 100)


def test_review_grade_numbers(world: World) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    ids = Bound(maximum=Decimal(10**6), integer=True)
    bounds = {
        "schedule_id": ids,
        "item_id": ids,
        "shown_at": Bound(maximum=Decimal(2**53), allow_zero=True, integer=True),
        "rating": Bound(minimum=Decimal(1), maximum=Decimal(4), integer=True),
    }

    def data(values: dict[str, str | None]) -> dict[str, str]:
        return {"card_token": str(world.schedule.card_token), "rating": "3", **_given(values)}

    tally = fuzz_post(
        client, reverse("quizzes:grade"), bounds, data, refused={400, 404}, examples=200
    )

    tally.assert_each_field_met(sorted(bounds), 100)


def test_numbers_in_query_strings(world: World) -> None:
    """Ids and counts read from a GET: the review session's reveal, the card comparison, the
    teaching page's page number. Each is a page or a 404, never a 500, and writes nothing."""
    learner = Client(raise_request_exception=False)
    learner.force_login(world.learner)
    instructor = Client(raise_request_exception=False)
    instructor.force_login(world.instructor)
    ids = Bound(maximum=Decimal(10**6), integer=True)
    bounds = {
        "schedule": ids,
        "item": ids,
        "shown_at": Bound(maximum=Decimal(2**53), allow_zero=True, integer=True),
        "card": ids,
        "page": ids,
    }
    tally = Tally()

    @settings(FUZZ, max_examples=200)
    @given(values=field_values(bounds))
    def get(values: dict[str, str | None]) -> None:
        tally.add(values)
        given_values = _given(values)
        reveal = {"reveal": "1", "token": str(world.schedule.card_token)}
        requests = [
            (learner, reverse("quizzes:session"), {**reveal, **given_values}),
            (learner, reverse("planner:cards_compare"), given_values),
            (
                instructor,
                reverse("courses:teaching_course", args=[world.course.slug]),
                given_values,
            ),
        ]
        for client, url, params in requests:
            with answered_in_bound_without_writes():
                response = client.get(url, params)
            assert response.status_code in {200, 404}, (url, params, response.status_code)

    get()
    tally.assert_each_field_met(sorted(bounds), 120)


def test_learner_retention(world: World) -> None:
    """A learner's own desired retention for a course (picked from a curve, any number posted)."""
    from core.ranges import DESIRED_RETENTION

    client = Client(raise_request_exception=False)
    client.force_login(world.learner)
    bounds = {"desired_retention": DESIRED_RETENTION}

    # Fewer examples: the page simulates its workload curve (~60 ms a request).
    tally = fuzz_post(
        client,
        reverse("quizzes:retention", args=[world.course.slug]),
        bounds,
        _given,
        refused={200},
        examples=100,
    )

    tally.assert_each_field_met(["desired_retention"], 60)
    session = client.get(reverse("quizzes:session"))
    assert session.status_code == 200


def test_grade_levels(world: World) -> None:
    """The grading form's level of each criterion (a level id) under a live claim."""
    client = Client(raise_request_exception=False)
    client.force_login(world.staff)
    assert client.post(reverse("capstone:claim", args=[world.submission.pk])).status_code == 302
    criteria = list(world.course.rubric.criteria.all())
    ids = Bound(maximum=Decimal(10**6), integer=True)
    bounds = {f"level_{c.pk}": ids for c in criteria}

    tally = fuzz_post(
        client,
        reverse("capstone:grade_save", args=[world.submission.pk]),
        bounds,
        lambda v: {"action": "draft", "overall_feedback": "", **_given(v)},
        refused={400},
        examples=150,
    )

    tally.assert_each_field_met(sorted(bounds), 90)
