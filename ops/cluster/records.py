"""What the cluster run records (requests, grades, releases, outbox rows, mail received, kills),
for its verdict (ops/cluster/verdict.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Attempt:
    """One HTTP request the driver sent through the proxy."""

    request_id: str
    actor: str
    action: str
    started: float  # time.monotonic() when sent
    ended: float  # when its answer (or error) came
    status: int  # 0: no HTTP answer at all (connection refused, reset, timeout)
    ok: bool  # the answer the flow expected


@dataclass(frozen=True)
class ProxyEntry:
    """One line of the proxy's request log."""

    request_id: str
    server: str  # the node that served it, "<NOSRV>" if none
    status: int
    termination: str  # HAProxy's termination state, e.g. "--" or "SH"


@dataclass(frozen=True)
class Kill:
    node: str
    at: float  # time.monotonic() when the first signal went
    done: float  # when none of the node's processes was left


@dataclass(frozen=True)
class PostedGrade:
    """A learner's grade of one card (all attempts of it share the card token)."""

    learner: str
    token: str
    rating: int
    answered: bool  # some attempt got the panel back


@dataclass(frozen=True)
class AppliedGrade:
    """A review log row the grades left."""

    learner: str
    token: str
    rating: int


@dataclass(frozen=True)
class Release:
    submission_id: int
    answered: bool  # released, or told on a retry that it already was


@dataclass(frozen=True)
class ReleaseRow:
    """What the database holds for a submission after the run."""

    submission_id: int
    released_grades: int
    grade_emails: int


@dataclass(frozen=True)
class Promise:
    """An outbox row: a promised email."""

    key: str  # "digest12", "capstone7"
    status: str
    recipient: str


@dataclass(frozen=True)
class Delivery:
    """A message the mail sink accepted."""

    message_id: str
    recipients: tuple[str, ...]
    received_at: float  # time.monotonic()


@dataclass(frozen=True)
class Record:
    """Everything the run recorded, for the verdict."""

    attempts: list[Attempt]
    proxy: Mapping[str, ProxyEntry]
    web_kill: Kill | None
    worker_kill: Kill | None
    posted: list[PostedGrade]
    applied: list[AppliedGrade]
    releases: list[Release]
    release_rows: list[ReleaseRow]
    promises: list[Promise]
    deliveries: list[Delivery]
    interrupted: frozenset[str]  # outbox keys the killed worker node was sending
    owed_digests: frozenset[str]  # learners owed a digest by the run (their emails)
    restarted_web_served: int  # requests the killed web node served after its restart
    restarted_worker_tasks: int  # tasks the killed worker node ran after its restart
