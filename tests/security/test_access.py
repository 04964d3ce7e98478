"""Access control over the URLconf: CSRF on every POST, another learner's ids are a 404, another
course's instructor gets nothing, and learners get no instructor page. Routes are walked from the
URLconf, so a new URL is covered the day it is added."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from courses.models import Enrollment
from tests.factories import CourseFactory, EnrollmentFactory, InstructorFactory
from tests.security.conftest import World, written_tables
from tests.security.urlwalk import Route, fill, routes

pytestmark = pytest.mark.django_db

# RFC 8058 one-click unsubscribe: mail providers POST with no cookie; the signed token is the
# permission (tests/reminders/test_links.py and test_signed_links.py cover it).
# The estimate API computes and writes nothing (the test below holds it to that); scripts POST a
# config.json to it that is too long for a URL, as `curl -F config=@config.json` does.
READ_ONLY_POSTS = {
    "planner:api_serving",
    "planner:api_training",
    "planner:api_batch",
    "planner:api_measured",
}
CSRF_EXEMPT = {"reminders:unsubscribe", *READ_ONLY_POSTS}
# Pages of one learner's own objects: anyone else must get a 404 (or be refused outright).
LEARNER_OBJECTS = {"submission_id", "card_id"}
# Teaching pages: they name a course (or a submission or criterion of it) the user must teach.
TEACHING = {
    "courses:teaching_course",
    "quizzes:course_stats",
    "quizzes:course_settings",
    "capstone:grade",
    "capstone:claim",
    "capstone:unclaim",
    "capstone:grade_save",
    "capstone:rubric",
    "capstone:criterion",
    "capstone:export",
    "capstone:peer_settings",
}
REFUSED = {302, 403, 404, 405}


def _walk(world: World, wanted: Callable[[Route], object]) -> list[tuple[Route, str]]:
    found = [(r, fill(r, world)) for r in routes() if wanted(r)]
    return [(r, url) for r, url in found if url is not None]


def _request(client: Client, method: str, url: str) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(url, {"action": "release"} if method == "post" else {})
    return response.status_code, written_tables(queries)


@pytest.mark.parametrize("role", ["learner", "instructor", "staff"])
def test_every_post_needs_the_csrf_token(world: World, role: str) -> None:
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(getattr(world, role))
    failures = []
    for route, url in _walk(world, lambda r: not r.route.startswith("admin/")):
        if route.name in CSRF_EXEMPT:
            continue
        status, writes = _request(client, "post", url)
        if status != 403 or writes:
            failures.append(f"POST {url} ({route.name}) without a token -> {status} {writes}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("role", ["learner", "instructor"])
def test_posts_without_a_token_write_nothing(world: World, role: str) -> None:
    """The POSTs that need no CSRF token (the estimate API) change no table, for anyone."""
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(getattr(world, role))
    seen = set()
    for route, url in _walk(world, lambda r: r.name in READ_ONLY_POSTS):
        status, writes = _request(client, "post", url)
        seen.add(route.name)
        assert status < 500 and not writes, f"POST {url} -> {status} {writes}"
    assert seen == READ_ONLY_POSTS


def test_the_admin_posts_need_the_csrf_token_too(world: World) -> None:
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(world.staff)
    admin_routes = _walk(world, lambda r: r.route.startswith("admin/"))
    assert len(admin_routes) > 20
    for route, url in admin_routes:
        status, writes = _request(client, "post", url)
        assert status == 403 and not writes, (url, route.name, status, writes)


def test_another_learners_ids_are_a_404(world: World) -> None:
    """Mallory, enrolled in the same course, names the learner's submission and card."""
    client = Client(raise_request_exception=False)
    client.force_login(world.other)
    urls = _walk(world, lambda r: set(r.parameters()) & LEARNER_OBJECTS)
    names = {r.name for r, _ in urls}
    assert {"capstone:submission", "planner:card_delete"} <= names
    for route, url in urls:
        for method in ("get", "post"):
            status, writes = _request(client, method, url)
            assert status in REFUSED and not writes, (method, url, route.name, status, writes)


def test_another_courses_instructor_gets_nothing_of_this_course(world: World) -> None:
    outsider: User = InstructorFactory(email="other-teacher@example.com")
    EnrollmentFactory(course=CourseFactory(), user=outsider, role=Enrollment.Role.INSTRUCTOR)
    client = Client(raise_request_exception=False)
    client.force_login(outsider)
    urls = _walk(world, lambda r: r.name in TEACHING)
    assert {r.name for r, _ in urls} == TEACHING
    for route, url in urls:
        for method in ("get", "post"):
            status, writes = _request(client, method, url)
            assert status in {404, 405} and not writes, (method, url, route.name, status, writes)


@pytest.mark.parametrize("who", ["learner", "anonymous"])
def test_learners_and_visitors_get_no_teaching_page(world: World, who: str) -> None:
    client = Client(raise_request_exception=False)
    if who == "learner":
        client.force_login(world.learner)
    for route, url in _walk(
        world, lambda r: r.name in TEACHING or r.name == "capstone:grading_queue"
    ):
        for method in ("get", "post"):
            status, writes = _request(client, method, url)
            expected = {403, 404, 405} if who == "learner" else {302, 405}
            assert status in expected and not writes, (method, url, route.name, status, writes)
