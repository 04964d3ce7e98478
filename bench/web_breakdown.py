"""Benchmark: where each web page's time goes, inside one gunicorn worker.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything REDIS_URL=redis://127.0.0.1:6379/N \\
        .venv/bin/python bench/web_breakdown.py [--learners 300] [--seconds 4]

The same throwaway database, seed, request files and production server as bench/web.py, but one
sync worker, wrk at concurrency 1, and a bench-only middleware (bench/_web_timing.py) that adds up
per path the time inside Django, the worker's user CPU, and each SQL statement's round trip as
Django's execute wrapper sees it. Prints per request: server time, Python CPU, statements and
their time, then each page's statements by kind with their mean round trip, beside the bare
view's. wrk's own requests/s are printed too, as in bench/web.py. Last, the floor those round
trips stand on, measured in the same run with psycopg alone: an empty statement, a committed
one-row UPDATE, and the two pipelined.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web import start_server, with_fresh_counts, with_server_database, write_request_files, wrk

PATHS = ("bare", "GET /review/", "reveal", "POST /review/grade/", "lesson", "/review/stats/")


def timing(url: str, *, reset: bool) -> dict[str, object]:
    request = urllib.request.Request(
        f"{url}/bench/timing/{'?reset=1' if reset else ''}",
        headers={"X-Forwarded-Proto": "https"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        data: dict[str, object] = json.load(answer)
        return data


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--seconds", type=int, default=4, help="length of each wrk run")
    args = parser.parse_args()
    for name, value, low, high in (
        ("--learners", args.learners, 20, 100_000),
        ("--seconds", args.seconds, 1, 120),
    ):
        if not low <= value <= high:
            parser.error(f"{name} must be between {low} and {high}")
    return with_server_database(
        "web_breakdown",
        lambda port, env, folder: run(args, port, env, folder),
        server_env={"DJANGO_SETTINGS_MODULE": "_web_timing_settings", "WEB_CONCURRENCY": "1"},
    )


def run(args: argparse.Namespace, port: int, env: dict[str, str], folder: Path) -> int:
    from _web_seed import seed
    from django.core.management import call_command
    from django.db import connection

    seed(learners=args.learners, schedules_per_learner=321, logs_per_schedule=2,
         now=datetime.now(UTC))  # fmt: skip
    call_command("collectstatic", interactive=False, verbosity=0)
    files = write_request_files(folder, port=port, learners=args.learners, grades=20_000)
    connection.close()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, env)
    try:
        for file, once in files.values():  # warm the worker's templates and statements
            if not once:
                wrk(url, file, connections=1, seconds=1, max_requests=30, once=False)
        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; one gunicorn sync worker, wrk at c = 1, "
              f"{args.seconds} s a path; {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.2f}\n")  # fmt: skip
        print(f"{'path':<22}{'wrk req/s':>10}{'server ms':>11}{'Python CPU':>12}"
              f"{'statements':>12}{'in them ms':>12}")  # fmt: skip
        kinds: dict[str, list[tuple[str, float, float]]] = {}
        for label in PATHS:
            file, once = files[label]
            if once:  # the grades: their counts signed now
                file.write_text(with_fresh_counts(file.read_text()))
            timing(url, reset=True)
            rate, _ = wrk(url, file, connections=1, seconds=args.seconds, max_requests=20_000,
                       once=once)  # fmt: skip
            data = timing(url, reset=True)
            paths: dict[str, list[float]] = data["paths"]  # type: ignore[assignment]
            requests, wall, cpu, statements, in_statements = (
                sum(v[n] for v in paths.values()) for n in range(5)
            )
            per = max(requests, 1)
            print(f"{label:<22}{rate:>10.0f}{wall / per * 1000:>11.2f}{cpu / per * 1000:>12.2f}"
                  f"{statements / per:>12.1f}{in_statements / per * 1000:>12.2f}")  # fmt: skip
            by_kind: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
            for _, kind, count, seconds in data["statements"]:  # type: ignore[attr-defined]
                by_kind[kind][0] += count
                by_kind[kind][1] += seconds
            kinds[label] = sorted(
                ((kind, n / per, s / n * 1000) for kind, (n, s) in by_kind.items()),
                key=lambda row: -row[1] * row[2],
            )
        print("\nStatements per request: kind, how many, mean round trip in ms")
        for label, rows in kinds.items():
            cells = "; ".join(f"{kind} {n:.1f} × {ms:.2f}" for kind, n, ms in rows)
            print(f"  {label}: {cells}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print_floor(os.environ["DATABASE_URL"])
    return 0


def print_floor(database_url: str, *, repeat: int = 2000) -> None:
    """psycopg's own round trips on the benchmark's database: what no statement can beat."""
    import psycopg

    def best(run: Callable[[], object]) -> float:
        for _ in range(200):
            run()
        times = []
        for _ in range(3):
            started = time.perf_counter()
            for _ in range(repeat):
                run()
            times.append((time.perf_counter() - started) / repeat)
        return min(times) * 1000

    with psycopg.connect(database_url, autocommit=True, prepare_threshold=0) as conn:
        # A logged table (not a temporary one), so each commit waits for its WAL flush as a
        # grade's does; the throwaway database goes with it.
        conn.execute("CREATE TABLE floor_row (id int PRIMARY KEY, n int)")
        conn.execute("INSERT INTO floor_row VALUES (1, 0)")
        cursor = conn.cursor()
        update = "UPDATE floor_row SET n = n + 1 WHERE id = %s"

        def one_after_the_other() -> None:
            cursor.execute(update, (1,))
            conn.execute("SELECT n FROM floor_row WHERE id = %s", (1,)).fetchall()

        def pipelined() -> None:
            with conn.pipeline():
                cursor.execute(update, (1,))
                conn.execute("SELECT n FROM floor_row WHERE id = %s", (1,)).fetchall()

        figures = {
            "SELECT 1": best(lambda: cursor.execute("SELECT 1").fetchall()),
            "one-row UPDATE, committed": best(lambda: cursor.execute(update, (1,))),
            "it and a SELECT, one after the other": best(one_after_the_other),
            "the two pipelined": best(pipelined),
        }
    print(
        "\nFloor, psycopg alone on the same database (best of 3 × "
        f"{repeat:,}): " + "; ".join(f"{k} {v:.3f} ms" for k, v in figures.items())
    )


if __name__ == "__main__":
    sys.exit(main())
