"""The Redis cache, degraded rather than failed while Redis is unreachable: each process keeps
its own memory cache meanwhile (login rate limits then count per process), and tries Redis again
a few seconds later."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import redis
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

# After a failure, Redis is left alone this long: a page does not wait on a dead server twice.
RETRY_AFTER_SECONDS = 5.0


class DegradingRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._fallback = LocMemCache(f"degraded-{server}", {"TIMEOUT": params.get("TIMEOUT", 300)})
        self._down_until = 0.0

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() >= self._down_until:
            method: Callable[..., Any] = getattr(super(), name)
            try:
                return method(*args, **kwargs)
            except redis.RedisError as exc:
                self._down_until = time.monotonic() + RETRY_AFTER_SECONDS
                logger.warning(
                    "cache: Redis unreachable (%s); this process's memory meanwhile", exc
                )
        return getattr(self._fallback, name)(*args, **kwargs)

    def add(self, *args: Any, **kwargs: Any) -> bool:
        return bool(self._call("add", *args, **kwargs))

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("get", *args, **kwargs)

    def set(self, *args: Any, **kwargs: Any) -> None:
        self._call("set", *args, **kwargs)

    def touch(self, *args: Any, **kwargs: Any) -> bool:
        return bool(self._call("touch", *args, **kwargs))

    def delete(self, *args: Any, **kwargs: Any) -> bool:
        return bool(self._call("delete", *args, **kwargs))

    def get_many(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(self._call("get_many", *args, **kwargs))

    def has_key(self, *args: Any, **kwargs: Any) -> bool:
        return bool(self._call("has_key", *args, **kwargs))

    def incr(self, *args: Any, **kwargs: Any) -> int:
        return int(self._call("incr", *args, **kwargs))

    def set_many(self, *args: Any, **kwargs: Any) -> list[Any]:
        return list(self._call("set_many", *args, **kwargs) or [])

    def delete_many(self, *args: Any, **kwargs: Any) -> None:
        self._call("delete_many", *args, **kwargs)

    def clear(self) -> None:
        self._call("clear")
