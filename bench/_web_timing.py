"""Where a request's time goes, for bench/web_breakdown.py's server only: a middleware that adds
up each path's wall time and its process's user CPU, and, through Django's execute wrapper, each
SQL statement's round trip; `/bench/timing/` hands the sums out as JSON (`?reset=1` clears them).
One gunicorn worker serves the benchmark, so its sums are the whole run's."""

from __future__ import annotations

import re
import resource
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from _web_urls import urlpatterns as bench_urlpatterns
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

# path -> [requests, wall s, user CPU s, statements, statement wall s]
_paths: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0, 0.0])
# (path, statement label) -> [count, wall s]
_statements: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])

_TABLE_RE = re.compile(r'\b(?:FROM|UPDATE|INTO)\s+"?(\w+)"?', re.IGNORECASE)


def statement_label(sql: str) -> str:
    """A short name for a statement: what it is on the review pages, else its verb and table."""
    head = sql.lstrip("( ")
    if "UNION ALL" in sql and head.startswith("SELECT"):
        return "queue counts (one UNION ALL)"
    if head.startswith("WITH swapped"):
        return "grade write (UPDATE + log INSERT)"
    verb = head.split(None, 1)[0].upper() if head else "?"
    # The statement's own table, not a subquery's: the first FROM, UPDATE or INTO outside
    # parentheses (the statement's own, after any leading one).
    offset = len(sql) - len(head)
    for match in _TABLE_RE.finditer(sql, offset):
        if sql.count("(", offset, match.start()) == sql.count(")", offset, match.start()):
            return f"{verb} {match.group(1)}"
    return verb


def request_timing(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[..., Any]:
    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/bench/timing/"):
            return get_response(request)
        key = request.path
        sums = _paths[key]

        def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                took = time.perf_counter() - started
                sums[3] += 1
                sums[4] += took
                one = _statements[(key, statement_label(sql))]
                one[0] += 1
                one[1] += took

        cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        started = time.perf_counter()
        with connection.execute_wrapper(timed):
            response = get_response(request)
        sums[0] += 1
        sums[1] += time.perf_counter() - started
        sums[2] += resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu
        return response

    return middleware


def timing(request: HttpRequest) -> JsonResponse:
    data = {
        "paths": {key: list(value) for key, value in _paths.items()},
        "statements": [[key, label, *value] for (key, label), value in _statements.items()],
    }
    if request.GET.get("reset"):
        _paths.clear()
        _statements.clear()
    return JsonResponse(data)


urlpatterns = [path("bench/timing/", timing), *bench_urlpatterns]
