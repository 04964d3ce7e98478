"""GET-safety over every URL: walked from the URLconf, as every kind of visitor, no GET writes a
row and none answers 500 (issue 12: the worksheet, rubric and lesson pages wrote on GET)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.security.conftest import World, written_tables
from tests.security.urlwalk import fill, routes

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "learner", "other", "instructor", "staff"]


def test_every_route_is_walked() -> None:
    """Admin object pages name their model's first row; only models with no rows are left out."""
    all_routes = list(routes())
    assert len(all_routes) > 40
    names = {r.name for r in all_routes}
    for expected in [
        "courses:lesson",
        "capstone:worksheet",
        "capstone:rubric",
        "planner:api_serving",
    ]:
        assert expected in names


@pytest.mark.parametrize("role", ROLES)
def test_no_get_writes_a_row_or_fails(world: World, role: str) -> None:
    client = Client(raise_request_exception=False)
    user = getattr(world, role, None)
    if user is not None:
        client.force_login(user)
    skipped, failures = [], []
    for route in routes():
        url = fill(route, world)
        if url is None:
            skipped.append(route.route)
            continue
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        writes = written_tables(queries)
        if writes or response.status_code >= 500:
            failures.append(f"GET {url} ({route.name}) -> {response.status_code}: {writes}")
    assert not failures, "\n".join(failures)
    assert all(route.startswith("admin/") for route in skipped), skipped
    if role == "staff":  # the admin's change, delete and history pages were walked too
        assert len(skipped) < 40, skipped
