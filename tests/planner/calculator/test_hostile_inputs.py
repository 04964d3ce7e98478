"""Hostile inputs a probe found on the config.json and batch-window surfaces: each answers fast
with a message naming its field, in every entry point (engine, API, page, htmx fragment, CLI,
worksheet save), never a 500, a traceback or Django's bare HTML 400."""

from __future__ import annotations

import json
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from planner.calculator.config_input import CONFIG_MAX_BYTES
from planner.capacity import BatchInputs, CapacityInputError, estimate_batch
from planner.capacity.hf.json_text import load_json
from tests.factories import CourseFactory, EnrollmentFactory
from tests.planner.capstone.test_worksheet_views import form_data

pytestmark = pytest.mark.django_db

QWEN3_32B = Path(__file__).resolve().parents[1] / "data" / "configs" / "qwen3-32b.json"
SERVING_QUERY = {"gpu": "h100-sxm", "users": "4", "context_tokens": "4096"}
# An unterminated string of escaped quotes: a backtracking string pattern took quadratic time
# on it (64 kB: 10 s), so 256 KiB would hold a web worker for minutes.
ESCAPED_QUOTES = '{"a": "' + '\\"' * (CONFIG_MAX_BYTES // 2 - 8)
BATCH = {"items": "50000", "items_per_s": "10", "price_per_hour": "0.80"}


def test_an_unterminated_run_of_escaped_quotes_is_refused_in_well_under_a_second() -> None:
    assert len(ESCAPED_QUOTES.encode()) <= CONFIG_MAX_BYTES
    started = time.perf_counter()
    with pytest.raises(CapacityInputError) as err:
        load_json(ESCAPED_QUOTES, "config", CONFIG_MAX_BYTES)
    assert time.perf_counter() - started < 0.5
    assert err.value.field == "config" and "Unterminated string" in err.value.message


def test_the_api_refuses_the_escaped_quotes_in_well_under_a_second(client: Client) -> None:
    started = time.perf_counter()
    response = client.post(
        reverse("planner:api_serving"), {**SERVING_QUERY, "config": ESCAPED_QUOTES}
    )
    assert time.perf_counter() - started < 1
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["config"]


def test_a_config_object_with_a_duplicate_key_is_refused_like_pasted_text(client: Client) -> None:
    """The JSON body's config object and the same text pasted give the same refusal."""
    text = QWEN3_32B.read_text()
    duplicated = text.replace('"hidden_size": 5120,', '"hidden_size": 5120, "hidden_size": 64,')
    assert duplicated != text
    url = reverse("planner:api_serving")
    body = '{"gpu": "h100-sxm", "users": 4, "context_tokens": 4096, "config": ' + duplicated + "}"
    as_object = client.post(url, body, content_type="application/json")
    pasted = client.post(url, {**SERVING_QUERY, "config": duplicated})
    for response in (as_object, pasted):
        assert response.status_code == 400
        assert "appears twice" in response.json()["errors"]["config"][0]
    assert as_object.json()["errors"]["config"] == pasted.json()["errors"]["config"]


def test_a_body_field_given_twice_is_refused_naming_it(client: Client) -> None:
    body = '{"gpu": "h100-sxm", "users": 4, "users": 4000, "context_tokens": 4096, "model_gb": 16}'
    response = client.post(reverse("planner:api_serving"), body, content_type="application/json")
    assert response.status_code == 400
    assert "appears twice" in response.json()["errors"]["users"][0]


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_a_10_mib_pasted_config_answers_in_the_apis_json_naming_config(
    client: Client, encoding: str
) -> None:
    huge = "x" * (10 << 20)
    url = reverse("planner:api_serving")
    if encoding == "multipart":
        response = client.post(url, {**SERVING_QUERY, "config": huge})
    else:
        body = "gpu=h100-sxm&users=4&config=" + huge
        response = client.post(url, body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "larger than" in response.json()["errors"]["config"][0]


def test_the_page_shows_a_10_mib_config_at_its_field(client: Client) -> None:
    response = client.post(
        reverse("planner:calculator"), {**SERVING_QUERY, "config": "x" * (10 << 20)}
    )
    assert response.status_code == 200
    assert "larger than 256 KiB" in response.content.decode()


@pytest.mark.parametrize("window", ["1e-9", "0.00004", "0.01", "0"])
def test_a_window_under_a_minute_is_refused_by_the_api_naming_it(
    client: Client, window: str
) -> None:
    response = client.get(reverse("planner:api_batch"), {**BATCH, "window_hours": window})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["window_hours"]


@pytest.mark.parametrize("window", ["1e-9", "0.00004"])
def test_the_comparison_refuses_a_window_under_a_minute_everywhere(
    client: Client, window: str
) -> None:
    query = {"estimate": "batch", **BATCH, "window_hours": window}
    api = client.get(reverse("planner:api_paths"), query)
    assert api.status_code == 400 and "window_hours" in api.json()["errors"]
    page = client.get(reverse("planner:paths"), query)
    fragment = client.get(reverse("planner:paths"), query, HTTP_HX_REQUEST="true")
    for response in (page, fragment):
        assert response.status_code == 200
        assert "0.0167" in response.content.decode()
    with pytest.raises(CommandError) as err:
        call_command(
            "capacity",
            "paths",
            "batch",
            "--items",
            "50000",
            "--items-per-s",
            "10",
            "--window-hours",
            window,
            stdout=StringIO(),
        )
    assert err.value.returncode == 2
    assert str(err.value).startswith("--window-hours:") and "\n" not in str(err.value)


def test_a_minute_is_the_shortest_window_the_engine_takes() -> None:
    """The engine's own guard, for callers that skip the form: nothing rounds to a 0 h window."""
    with pytest.raises(CapacityInputError) as err:
        estimate_batch(BatchInputs(items=10, window_hours=0.00004, items_per_s=1))
    assert err.value.field == "window_hours"
    one_minute = estimate_batch(BatchInputs(items=10, window_hours=0.0167, items_per_s=1))
    assert one_minute.window_hours > 0


def test_a_worksheet_linking_a_comparison_with_a_tiny_window_names_it(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    link = "/planner/paths/?estimate=batch&items=50000&items_per_s=10&window_hours=1e-9"
    response = client.post(
        reverse("capstone:worksheet_save", args=[course.slug]), form_data(paths_query=link)
    )
    assert response.status_code == 400
    assert "window hours: must be a number from 0.0167" in response.content.decode()


def test_a_json_body_nesting_past_a_configs_depth_names_config(client: Client) -> None:
    nested: dict = {}
    inner = nested
    for _ in range(40):
        inner["a"] = {}
        inner = inner["a"]
    response = client.post(
        reverse("planner:api_serving"),
        json.dumps({**SERVING_QUERY, "config": nested}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "nests deeper" in response.json()["errors"]["config"][0]
