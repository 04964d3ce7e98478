"""Shared fixtures: real services when configured, a real browser, eager Celery for unit tests.

Tests marked `postgres`, `redis` or `browser` need that real thing. Without it they are skipped
with the reason printed (`-ra`), except in CI (CI=true), where a missing service is a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# around it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-gpu",
    "--no-first-run",
]


def chromium_path() -> str | None:
    return (
        os.environ.get("CHROMIUM_PATH")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


def redis_available() -> bool:
    url = settings.REDIS_URL
    if not url:
        return False
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI must run this test, but {reason}")
    pytest.skip(reason)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Browser tests last: they are the slowest and the least specific when they fail.
    items.sort(key=lambda item: 1 if item.get_closest_marker("browser") else 0)


@pytest.fixture(autouse=True)
def _service_markers(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("postgres") and connection.vendor != "postgresql":
        _missing("no PostgreSQL: set DATABASE_URL=postgres://... to run it")
    if request.node.get_closest_marker("redis") and not redis_available():
        _missing("no Redis: set REDIS_URL=redis://... to a running server to run it")
    if request.node.get_closest_marker("browser") and not chromium_path():
        _missing("no Chromium: apt-get install chromium to run browser tests")


@pytest.fixture(autouse=True)
def _celery_eager(settings: pytest.FixtureRequest) -> Iterator[None]:
    """Unit tests run tasks in-process; flows that cross the queue use a real worker instead."""
    from config.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(autouse=True)
def _fast_hashing_and_private_cache(settings, request) -> Iterator[None]:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # A location of its own per test: local-memory caches with one name share their data across
    # tests, so login rate-limit counters (allauth's 30 logins a minute per IP) would carry over.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"test-{request.node.nodeid}",
        }
    }
    yield
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    path = chromium_path()
    if not path:
        _missing("no Chromium: apt-get install chromium to run browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def nu_checker() -> Iterator[object]:
    """The Nu HTML checker as a local service, started once for the browser tests."""
    from tests import accessibility

    if not accessibility.VNU.exists():
        _missing("no Nu HTML checker: make setup installs vnu-jar with npm")
    if not shutil.which("java"):
        _missing("no Java for the Nu HTML checker")
    checker = accessibility.NuChecker()
    yield checker
    checker.close()


@pytest.fixture
def page(browser, live_server, request, nu_checker):  # type: ignore[no-untyped-def]
    """A fresh browser context per test; a screenshot of the last page is saved as an artifact.

    Every page the test opens (each `goto`) and the page it ends on pass axe-core's WCAG 2.2 AA
    rules and the Nu HTML checker (tests/accessibility.py): a page state with a violation fails
    the test that showed it.
    """
    from tests import accessibility

    context = browser.new_context(base_url=live_server.url, viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15_000)
    pg = context.new_page()
    console_errors: list[str] = []

    def on_console(message):  # type: ignore[no-untyped-def]
        # hx-sync="this:replace" aborts a request a newer one supersedes, by design; htmx logs that
        # request's afterRequest and then sendAbort as errors, which no user sees.
        if message.type != "error":
            return
        if message.text.startswith("htmx:sendAbort"):
            if console_errors and console_errors[-1].startswith("htmx:afterRequest"):
                console_errors.pop()
            return
        console_errors.append(message.text)

    pg.on("console", on_console)
    pg.console_errors = console_errors
    found: dict[str, list[str]] = {}
    goto = pg.goto

    def goto_and_check(url, *args, **kwargs):  # type: ignore[no-untyped-def]
        response = goto(url, *args, **kwargs)
        if response is not None and response.ok:
            found.update(accessibility.page_states(pg, all_widths=False))
            _nu_check(pg, nu_checker, found)
        return response

    pg.goto = goto_and_check
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
        if not getattr(request.node, "rep_call_failed", True) and pg.url not in ("", "about:blank"):
            found.update(accessibility.page_states(pg, all_widths=True))
            _nu_check(pg, nu_checker, found)
    finally:
        context.close()
    if getattr(request.node, "rep_call_failed", True):
        return
    if os.environ.get("RECALL_ACCESSIBILITY_REPORT"):
        with open(os.environ["RECALL_ACCESSIBILITY_REPORT"], "a", encoding="utf-8") as report:
            for state, lines in found.items():
                report.writelines(f"{request.node.nodeid} | {state} | {line}\n" for line in lines)
        return
    assert not found, "Accessibility and HTML violations:\n" + "\n".join(
        f"{state}:\n  " + "\n  ".join(lines) for state, lines in found.items()
    )


def _nu_check(page, checker, found: dict[str, list[str]]) -> None:  # type: ignore[no-untyped-def]
    errors = checker.errors(page.content())
    if errors:
        found[f"{page.url} (Nu HTML checker)"] = errors


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    """Let fixtures see whether the test itself failed (no accessibility check on a broken page)."""
    report = yield
    if report.when == "call":
        item.rep_call_failed = report.failed
    return report


@pytest.fixture
def learner(db):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(email="learner@example.com", display_name="Lee Learner")


@pytest.fixture
def instructor(db):  # type: ignore[no-untyped-def]
    from tests.factories import InstructorFactory

    return InstructorFactory(email="teacher@example.com", display_name="Ida Instructor")


def login_in_browser(page, email: str, password: str = "correct horse battery") -> None:  # type: ignore[no-untyped-def]
    page.goto("/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url("**/dashboard/")
