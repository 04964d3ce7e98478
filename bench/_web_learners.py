"""Learners at their own pace, for bench/web.py's latency goal: each of N threads is a learner who
reads for a think time, then sends one request of a request file over a new connection, as a
buffering proxy in front of gunicorn's sync workers sends it, and waits for the whole answer.

wrk cannot do this: its connections stay open while it waits (wrk's delay()), and a sync worker
that has accepted an idle connection waits on it, so the other learners queue behind a reader.
"""

from __future__ import annotations

import http.client
import random
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit


def _requests(file: Path) -> list[tuple[str, str, dict[str, str], bytes | None]]:
    """(method, path, headers, body) per line: method, path, cookie, body, extra headers."""
    parsed = []
    for line in file.read_text().splitlines():
        method, path, cookie, *rest = [*line.split("\t"), "", ""]
        headers = {"Cookie": cookie, "X-Forwarded-Proto": "https"}
        for pair in filter(None, rest[1].split("|")):
            name, _, value = pair.partition("=")
            headers[name] = value
        parsed.append((method, path, headers, rest[0].encode() or None))
    return parsed


def learners_p95(
    url: str, file: Path, *, learners: int, think_ms: int, seconds: float, once: bool
) -> tuple[float, int]:
    """The 95th percentile latency (ms) of the learners' requests over `seconds`, and how many
    were answered; each line used once when `once`. Fails on any answer but 200."""
    host = urlsplit(url)
    lines = _requests(file)
    latencies: list[float] = []
    bad: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def learner(n: int) -> None:
        rng = random.Random(n)
        mine = lines[n::learners] if once else lines
        for i in range(len(mine) if once else 1_000_000):
            time.sleep(rng.uniform(think_ms / 2, think_ms * 1.5) / 1000)
            if time.monotonic() >= deadline:
                return
            method, path, headers, body = mine[i] if once else rng.choice(mine)
            started = time.perf_counter()
            conn = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
            try:
                conn.request(method, path, body=body, headers=headers)
                answer = conn.getresponse()
                answer.read()
            finally:
                conn.close()
            took = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(took)
                if answer.status != 200:
                    bad.append(f"{answer.status} {path}")

    threads = [threading.Thread(target=learner, args=(n,)) for n in range(learners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if bad:
        raise SystemExit(f"{file.name}: {len(bad)} answers were not 200 (first: {bad[0]})")
    if len(latencies) < 20:
        raise SystemExit(f"{file.name}: only {len(latencies)} answers; too few for a p95")
    return statistics.quantiles(latencies, n=20)[-1], len(latencies)
