"""The scan's enqueue through real Redis: one send task per chunk of digests, every id once, in
order, with a short argsrepr, published in pipelines."""

from __future__ import annotations

import base64
import json

import pytest
import redis

from config.celery import app
from reminders import scan
from reminders.scan import digests_enqueue

pytestmark = [pytest.mark.redis]

QUEUE = "reminders"


@pytest.fixture
def reminders_queue(settings):  # type: ignore[no-untyped-def]
    """The `reminders` queue of this test's Redis database, emptied before and after, and
    chunks of five digests."""
    settings.REMINDER_DIGEST_CHUNK = 5
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(QUEUE)
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield client
    app.conf.task_always_eager = eager
    client.delete(QUEUE)


def queued(client: redis.Redis) -> list[tuple[list[int], str]]:
    """(digest ids, argsrepr) of each queued send task, oldest first (workers BRPOP the tail)."""
    tasks = []
    for raw in reversed(client.lrange(QUEUE, 0, -1)):  # type: ignore[arg-type]
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        assert message["headers"]["task"] == "reminders.tasks.send_digests"
        tasks.append((args[0], message["headers"]["argsrepr"]))
    return tasks


def test_one_send_task_per_chunk_every_id_once_in_order(reminders_queue, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """23 digests in chunks of five, pipelined two tasks at a time: five tasks, the ids sorted
    and each in exactly one task, the last chunk short."""
    monkeypatch.setattr(scan, "PUBLISH_BATCH", 2)
    ids = list(range(123, 100, -1))
    digests_enqueue(digest_ids=ids)
    tasks = queued(reminders_queue)
    assert [chunk for chunk, _ in tasks] == [
        [101, 102, 103, 104, 105],
        [106, 107, 108, 109, 110],
        [111, 112, 113, 114, 115],
        [116, 117, 118, 119, 120],
        [121, 122, 123],
    ]
    assert [argsrepr for _, argsrepr in tasks] == ["(5 digest ids)"] * 4 + ["(3 digest ids)"]


def test_nothing_to_enqueue_publishes_nothing(reminders_queue) -> None:  # type: ignore[no-untyped-def]
    digests_enqueue(digest_ids=[])
    assert reminders_queue.llen(QUEUE) == 0
