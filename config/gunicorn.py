"""gunicorn settings for the production web server (`make serve`, Procfile.production).

Read by `gunicorn -c config/gunicorn.py config.wsgi`. Every value comes from the environment
with a default sized for the machine, so production differs by values, not by files.
"""

from __future__ import annotations

import os


def _cores() -> int:
    # The cores this process may run on (a container's CPU set), not every core of the host.
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _int(name: str, default: int, *, low: int, high: int) -> int:
    """An integer setting from the environment, refused outside [low, high]."""
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {raw[:40]!r}") from None
    if not low <= value <= high:
        raise SystemExit(f"{name} must be between {low} and {high}, not {value}")
    return value


# Sync workers: each request holds one worker, and the work is CPU in Python and PostgreSQL;
# gunicorn's rule of thumb of two per core plus one keeps the cores busy while others wait on I/O.
workers = _int("WEB_CONCURRENCY", 2 * _cores() + 1, low=1, high=256)
worker_class = "sync"
bind = [os.environ.get("WEB_BIND", f"127.0.0.1:{_int('PORT', 8000, low=1, high=65535)}")]
# Behind a proxy that terminates TLS: trust its X-Forwarded-* only from these addresses.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
timeout = _int("WEB_TIMEOUT", 30, low=5, high=600)
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then (staggered), so a slow leak never takes a process down.
max_requests = _int("WEB_MAX_REQUESTS", 5000, low=0, high=10_000_000)
max_requests_jitter = max_requests // 10
# Import Django once in the master: workers fork with it loaded (faster start, shared pages).
preload_app = True
accesslog = os.environ.get("WEB_ACCESS_LOG", "-") or None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "INFO").lower()
proc_name = "recall-web"
# No runtime control socket: its default path is one per user, which several servers on one
# machine (a web process per port, the benchmark) would fight over; signals do the same job.
control_socket_disable = True
