"""Numeric fuzzing of the calculator: every number of every estimate, on the JSON API, the page
and the CLI. Each answer is a 200 or a 400 naming the field (exit 0 or 2 with one line), within
a bound, and writes nothing (issue 12: 19 of 122 bad numbers were a 500; one stalled 20 s)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings

from core.forms import BoundedNumberField
from planner.calculator.forms import FORMS
from planner.calculator.parsing import DEFAULT_INPUTS
from tests.security.fuzz import Tally, answered_in_bound_without_writes, field_values

pytestmark = pytest.mark.django_db

EXAMPLES = 400
# Each field is left at its baseline in about a third of the examples.
AT_LEAST = 200
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def numeric_bounds(kind: str) -> dict:
    return {
        name: field.bound
        for name, field in FORMS[kind].base_fields.items()
        if isinstance(field, BoundedNumberField)
    }


def _data(kind: str, values: dict[str, str | None]) -> dict[str, str]:
    return {**DEFAULT_INPUTS[kind], **{k: v for k, v in values.items() if v is not None}}


@pytest.mark.parametrize("kind", sorted(FORMS))
def test_every_number_of_the_api_is_a_200_or_a_400_naming_it(kind: str) -> None:
    bounds = numeric_bounds(kind)
    tally = Tally()
    client = Client(raise_request_exception=False)

    @FUZZ
    @given(values=field_values(bounds))
    def api(values: dict[str, str | None]) -> None:
        tally.add(values)
        with answered_in_bound_without_writes():
            response = client.get(reverse(f"planner:api_{kind}"), _data(kind, values))
        assert response.status_code in {200, 400}, (values, response.content[:500])
        if response.status_code == 400:
            errors = response.json()["errors"]
            assert errors and set(errors) <= {*FORMS[kind].base_fields, "__all__"}, errors

    api()
    tally.assert_each_field_met(sorted(bounds), AT_LEAST)


@pytest.mark.parametrize("kind", sorted(FORMS))
def test_every_number_of_the_page_is_shown_or_refused_at_the_field(learner, kind: str) -> None:  # type: ignore[no-untyped-def]
    bounds = numeric_bounds(kind)
    tally = Tally()
    client = Client(raise_request_exception=False)
    client.force_login(learner)

    @settings(FUZZ, max_examples=EXAMPLES // 4)
    @given(values=field_values(bounds))
    def page(values: dict[str, str | None]) -> None:
        tally.add(values)
        with answered_in_bound_without_writes():
            response = client.get(
                reverse("planner:calculator"),
                {"estimate": kind, **_data(kind, values)},
            )
        assert response.status_code in {200, 400}, (values, response.content[:500])

    page()
    tally.assert_each_field_met(sorted(bounds), AT_LEAST // 4)


@pytest.mark.parametrize("kind", sorted(FORMS))
def test_every_option_of_the_cli_exits_0_or_2_with_one_line(kind: str) -> None:
    bounds = numeric_bounds(kind)
    tally = Tally()

    @settings(FUZZ, max_examples=EXAMPLES // 2)
    @given(values=field_values(bounds))
    def cli(values: dict[str, str | None]) -> None:
        tally.add(values)
        argv = [f"--{k.replace('_', '-')}={v}" for k, v in _data(kind, values).items()]
        with answered_in_bound_without_writes():
            try:
                call_command("capacity", kind, *argv, stdout=StringIO(), stderr=StringIO())
            except CommandError as refused:
                assert refused.returncode == 2, (values, refused)
                line = str(refused)
                assert "\n" not in line and "Traceback" not in line, line
                assert line.startswith("--"), line

    cli()
    tally.assert_each_field_met(sorted(bounds), AT_LEAST // 2)
