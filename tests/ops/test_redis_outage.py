"""Redis stopped under the running site (gunicorn on a private Redis the test stops): logging in,
a refused login, the review session and the retention page answer without a 500, and /healthz
still names Redis as unavailable. The cache falls back to each process's memory meanwhile."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.utils import timezone

from tests.factories import PASSWORD, EnrollmentFactory, QuizItemFactory, RecallScheduleFactory
from tests.ops.outage import Browser, RedisServer, WebServer, service_env
from tests.reminders.worker import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# The web process's own hasher (the tests' fast one is not in its settings).
WEB_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]


def test_log_in_and_review_pages_answer_while_redis_is_down(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = WEB_HASHERS
    enrolment = EnrollmentFactory()
    learner, course = enrolment.user, enrolment.course
    item = QuizItemFactory(lesson__module__course=course)
    RecallScheduleFactory(
        learner=learner, item=item, due=timezone.now() - timedelta(hours=1), state=2, reps=2
    )
    with RedisServer() as redis:
        web = WebServer(service_env(redis_url=redis.url)).wait_ready()
        try:
            redis.stop()
            browser = Browser(web.url)
            started = time.monotonic()
            status, body = browser.log_in(learner.email, "not the password")
            assert status == 200, body  # refused with the form's error, counted per process
            status, where = browser.log_in(learner.email, PASSWORD)
            assert (status, where) == (302, "/dashboard/"), where
            answers = {
                path: browser.request(path)[0]
                for path in ("/dashboard/", "/review/", f"/review/retention/{course.slug}/")
            }
            assert answers == dict.fromkeys(answers, 200), web.output()[-3000:]
            status, body, _ = browser.request("/healthz")
            assert status == 503
            assert json.loads(body)["checks"] == {"database": "ok", "redis": "unavailable"}
            # Each page waited at most a short timeout on the dead server, not a long one.
            assert time.monotonic() - started < 30
            assert "Internal Server Error" not in web.output()

            redis.start()  # back on the same port: the cache uses it again
            time.sleep(6)
            assert browser.request("/review/")[0] == 200
            assert browser.request("/healthz")[0] == 200
        finally:
            web.stop()


def test_the_cache_keeps_working_in_memory_while_redis_is_unreachable(settings) -> None:  # type: ignore[no-untyped-def]
    """The cache backend itself: nothing listens on its port, yet a value set is read back,
    counters count, and no call waits longer than its short timeout."""
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache.DegradingRedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
    cache = caches["default"]
    started = time.monotonic()
    cache.set("curve", [1, 2, 3])
    assert cache.get("curve") == [1, 2, 3]
    assert cache.add("attempts", 1) is True
    assert cache.incr("attempts") == 2
    assert cache.get_many(["curve", "missing"]) == {"curve": [1, 2, 3]}
    cache.delete("curve")
    assert cache.get("curve") is None
    assert time.monotonic() - started < 3
