"""A load test's measurement as the planner reads it, and bounded reads of the result file.

Both readers (parse_vllm, parse_guidellm) fill a MeasuredRun: times in milliseconds, rates per
second, the run's configuration (lengths, concurrency or rate) that drives the engine's prediction
for the same run. Every number is range-checked before it is used; an error names the JSON key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

from planner.capacity.hf.json_text import kind_of, load_json
from planner.capacity.units import CapacityInputError

FIELD: Final = "result"
# vLLM's --save-result file is a few kB without per-request details and a few MB with
# --save-detailed at a thousand prompts; GuideLLM's report of a sweep is of the same order.
MAX_RESULT_BYTES: Final = 4 * 1024 * 1024
MAX_MS: Final = 86_400_000.0  # a day: no request of a load test waits longer
MAX_TOKENS_PER_S: Final = 1e8  # 100 M tokens/s: far above any cluster's output rate
MAX_REQUESTS_PER_S: Final = 1e6
MAX_SECONDS: Final = 30 * 86_400.0  # a month-long run
MAX_REQUESTS: Final = 100_000_000
MAX_TOKENS_PER_REQUEST: Final = 100_000_000  # the calculator's own bound on prompt tokens
MAX_TOTAL_TOKENS: Final = 10**13
MAX_CONCURRENCY: Final = 1_000_000
MAX_LIST_ITEMS: Final = 1_000_000


class MeasuredInputError(CapacityInputError):
    """A result file the planner cannot read; the message names the key and what is wrong."""

    def __init__(self, message: str, field: str = FIELD) -> None:
        super().__init__(field, message)


@dataclass(frozen=True, slots=True)
class Distribution:
    """One metric's summary as the file gives it (ms): mean, median, p99 and what else it has."""

    mean: float
    p50: float | None = None
    p99: float | None = None
    p90: float | None = None
    p95: float | None = None
    std: float | None = None

    def to_dict(self) -> dict[str, float]:
        out = {"mean": self.mean}
        for name in ("p50", "p90", "p95", "p99", "std"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """What a load test measured, and the configuration it ran (None where the file is silent)."""

    tool: str  # "vllm bench serve" or "guidellm"
    key_set: str  # which version's keys the file has, in words
    completed: int
    failed: int
    ttft_ms: Distribution
    itl_ms: Distribution
    output_tokens_per_s: float
    request_throughput: float
    concurrency: int | None  # max_concurrency, or GuideLLM's concurrent streams
    request_rate: float | None  # requests/s the tool sent; None: as fast as it could
    mean_input_tokens: float
    mean_output_tokens: float
    duration_s: float | None = None
    tpot_ms: Distribution | None = None
    e2el_ms: Distribution | None = None
    model_id: str = ""
    output_tokens_min: int | None = None
    output_tokens_max: int | None = None
    observed_concurrency: float | None = None  # the tool's own mean of requests in flight
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The `measured` block of the comparison's JSON (the CLI's contract)."""
        out: dict[str, Any] = {
            "tool": self.tool,
            "key_set": self.key_set,
            "model": self.model_id or None,
            "completed": self.completed,
            "failed": self.failed,
            "ttft_ms": self.ttft_ms.to_dict(),
            "itl_ms": self.itl_ms.to_dict(),
            "output_tokens_per_s": self.output_tokens_per_s,
            "request_throughput": self.request_throughput,
            "concurrency": self.concurrency,
            "request_rate": self.request_rate,
            "mean_input_tokens": self.mean_input_tokens,
            "mean_output_tokens": self.mean_output_tokens,
            "duration_s": self.duration_s,
        }
        if self.tpot_ms is not None:
            out["tpot_ms"] = self.tpot_ms.to_dict()
        if self.e2el_ms is not None:
            out["e2el_ms"] = self.e2el_ms.to_dict()
        return out


def load_result(text: str | bytes) -> dict[str, Any]:
    """The file's JSON object: size, UTF-8, depth, NaN and huge numbers refused, naming why."""
    if isinstance(text, str | bytes | bytearray) and not text.strip():
        raise MeasuredInputError("is empty; give the JSON file the load test wrote")
    try:
        return load_json(text, FIELD, MAX_RESULT_BYTES)
    except MeasuredInputError:
        raise
    except CapacityInputError as err:
        message = err.message
        if "must be a JSON object" in message:
            message = "must be a JSON object ({...}), as vllm bench serve and guidellm write"
        if message.startswith("is not JSON"):
            message += "; is the file cut short?"
        raise MeasuredInputError(message) from None


class Reader:
    """Typed, range-checked reads of one JSON object, naming `where` + the key in every error."""

    def __init__(self, data: dict[str, Any], where: str = "") -> None:
        self.data = data
        self.where = where

    def name(self, key: str) -> str:
        return f"{self.where}{key}"

    def error(self, key: str, why: str) -> MeasuredInputError:
        return MeasuredInputError(f"{self.name(key)}: {why}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def number(self, key: str, low: float, high: float, *, required: bool = False) -> float | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(key, "missing; the file must give it")
            return None
        return checked(value, self.name(key), low, high)

    def need(self, key: str, low: float, high: float) -> float:
        value = self.number(key, low, high, required=True)
        assert value is not None
        return value

    def whole(self, key: str, low: int, high: int, *, required: bool = False) -> int | None:
        value = self.number(key, low, high, required=required)
        if value is None:
            return None
        if value != int(value):
            raise self.error(key, f"must be a whole number, not {value!r}")
        return int(value)

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, not {kind_of(value)}")
        return value[:200]

    def child(self, key: str, *, required: bool = False) -> Reader | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(key, "missing; the file must give it")
            return None
        if not isinstance(value, dict):
            raise self.error(key, f"must be an object, not {kind_of(value)}")
        return Reader(value, f"{self.name(key)}.")

    def numbers(self, key: str, low: float, high: float) -> list[float] | None:
        """A list of numbers (per-request figures), each in range; None when absent."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, not {kind_of(value)}")
        if len(value) > MAX_LIST_ITEMS:
            raise self.error(key, f"has {len(value):,} items; at most {MAX_LIST_ITEMS:,}")
        return [checked(v, f"{self.name(key)}[{i}]", low, high) for i, v in enumerate(value)]


def checked(value: Any, name: str, low: float, high: float) -> float:
    """A JSON number within [low, high]; anything else refused naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MeasuredInputError(f"{name}: must be a number, not {kind_of(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise MeasuredInputError(f"{name}: {value!r} is not a finite number")
    if number < low:
        why = "cannot be negative" if low == 0 else f"is below {low:g}"
        raise MeasuredInputError(f"{name}: {number:g} {why}")
    if number > high:
        raise MeasuredInputError(f"{name}: {number:g} is above {high:g}, out of any physical range")
    return number
