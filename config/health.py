"""Health check for load balancers and process managers: can this process reach its services?

GET /healthz answers 200 when the database and (when configured) Redis answer, else 503, with a
small JSON body naming each check. It reads no session and needs no login.
"""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

# A health check must answer quickly even when a service hangs: the balancer's own timeout is
# typically 2-5 s.
REDIS_TIMEOUT_SECONDS = 1.0


@cache
def _redis_client(url: str) -> redis.Redis:
    # One client (and connection pool) per URL for the life of the process.
    return redis.Redis.from_url(
        url, socket_connect_timeout=REDIS_TIMEOUT_SECONDS, socket_timeout=REDIS_TIMEOUT_SECONDS
    )


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError:
        return False


def _redis_ok(url: str) -> bool:
    try:
        return bool(_redis_client(url).ping())
    except redis.RedisError:
        return False


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": "ok" if _database_ok() else "unavailable"}
    if settings.REDIS_URL:
        checks["redis"] = "ok" if _redis_ok(settings.REDIS_URL) else "unavailable"
    healthy = all(state == "ok" for state in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status=200 if healthy else 503,
    )
