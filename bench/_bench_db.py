"""A throwaway PostgreSQL database for the quizzes benchmarks, then Django set up on it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


POSTGRES_SCHEMES = ("postgres://", "postgresql://")


def skip_unless_postgres() -> None:
    """Exit 0 with a one-line message unless DATABASE_URL is PostgreSQL (embedded mode runs
    these benchmarks with `make bench` too, and a skip there is not a failure)."""
    if not os.environ.get("DATABASE_URL", "").startswith(POSTGRES_SCHEMES):
        print("skipped: needs PostgreSQL; set DATABASE_URL=postgres://…", flush=True)
        sys.exit(0)


def use_throwaway_database(name: str) -> str:
    """Recreate database `name` next to DATABASE_URL's, point Django at it and migrate."""
    skip_unless_postgres()
    base = os.environ["DATABASE_URL"]
    import psycopg

    parts = urlsplit(base)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return use_kept_database(name)


def drop_database(name: str) -> None:
    from django.db import connections

    connections.close_all()
    import psycopg

    parts = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def unique_database_name(stem: str) -> str:
    """`<prefix>_<stem>_<pid>_<unix time>`, so runs side by side (and engineers sharing one
    server) never drop each other's database; the prefix is BENCH_DB_PREFIX, default `bench`."""
    import time

    prefix = os.environ.get("BENCH_DB_PREFIX", "bench")
    return f"{prefix}_{stem}_{os.getpid()}_{int(time.time())}"


def use_kept_database(name: str) -> str:
    """Point Django at database `name`, kept by an earlier run, as it is (migrated if behind)."""
    skip_unless_postgres()
    parts = urlsplit(os.environ["DATABASE_URL"])
    url = urlunsplit(parts._replace(path=f"/{name}"))
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "false")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    return url
