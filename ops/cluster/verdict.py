"""The cluster run's pass criteria, judged from what the run recorded (pure: no Django, no I/O).

- No request fails except those in flight on the killed web node: a failed attempt is forgiven
  only when the proxy's log shows it was sent to that node, the node's answer never came (an
  `S…` termination state or a 502/504), and the attempt was open while the node was dying
  (between the first signal and the moment none of its processes was left).
- Every grade applied exactly once: each card token the learners posted and saw answered has
  exactly one review log with that token (its idempotency key) and the posted rating; none has
  two; no review log exists that nobody posted. Each capstone grade released has one released
  grade and one promised grade email.
- Every promised email delivered exactly once: each outbox row (digest or grade email) is sent
  and the mail sink holds one copy of it, matched by the row's id inside the Message-ID. The one
  copy too many the operations guide accepts (a worker killed after the server took the message
  and before the row was updated) is counted apart, and allowed only for rows the killed worker
  node was sending, whose first copy arrived before the kill.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ops.cluster.records import (
    AppliedGrade,
    Attempt,
    Delivery,
    Kill,
    PostedGrade,
    Promise,
    ProxyEntry,
    Record,
    Release,
    ReleaseRow,
)

# The id the outbox puts into each Message-ID (make_msgid's idstring): digest<pk> or capstone<pk>.
_PROMISE_KEY = re.compile(r"\.((?:digest|capstone)\d+)@")
# A server-side abort (HAProxy's termination state starts with S) or the proxy's own bad-gateway
# and gateway-timeout answers: the node never answered.
_NO_ANSWER_STATUSES = frozenset({502, 504})


def promise_key(message_id: str) -> str | None:
    match = _PROMISE_KEY.search(message_id)
    return match.group(1) if match else None


def percentile(values: Iterable[float], q: float) -> float:
    """The nearest-rank q-th percentile (0 < q <= 100); 0.0 of nothing."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(math.ceil(q / 100 * len(ordered)), 1)
    return ordered[rank - 1]


def proxy_log_parse(lines: Iterable[str]) -> dict[str, ProxyEntry]:
    """Request lines of the proxy's log (`rid=… srv=… st=… ts=…`), by request id; other lines
    (server state changes, start-up) are skipped."""
    entries: dict[str, ProxyEntry] = {}
    for line in lines:
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        rid = fields.get("rid", "")
        if not rid or rid == "-" or not fields.get("st", "").lstrip("-").isdigit():
            continue
        entries[rid] = ProxyEntry(
            request_id=rid,
            server=fields.get("srv", ""),
            status=int(fields["st"]),
            termination=fields.get("ts", ""),
        )
    return entries


def failed_in_flight(attempt: Attempt, *, proxy: Mapping[str, ProxyEntry], kill: Kill) -> bool:
    """A failed attempt that was on the killed node when it died."""
    entry = proxy.get(attempt.request_id)
    return (
        entry is not None
        and entry.server == kill.node
        and (entry.termination.startswith("S") or entry.status in _NO_ANSWER_STATUSES)
        and attempt.started <= kill.done
        and attempt.ended >= kill.at
    )


@dataclass(frozen=True)
class Verdict:
    requests: int
    failed: int
    forgiven: int  # failed in flight on the killed web node
    p50_ms: float
    p95_ms: float
    grades: int
    releases: int
    digests: int
    grade_emails: int
    resent: int  # the guide's one accepted duplicate
    kills: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.problems

    def line(self) -> str:
        head = "PASS" if self.passed else "FAIL: " + "; ".join(self.problems[:4])
        return (
            f"{head} | {self.requests} requests, {self.failed} failed "
            f"({self.forgiven} in flight on the killed web node), p50 {self.p50_ms:.0f} ms, "
            f"p95 {self.p95_ms:.0f} ms | {self.grades} review grades and {self.releases} "
            f"capstone releases applied once | {self.digests} digests + {self.grade_emails} "
            f"grade emails delivered once ({self.resent} resent after the kill) | killed "
            f"{' and '.join(self.kills) or 'nothing'}"
        )


def _request_problems(
    attempts: list[Attempt], proxy: Mapping[str, ProxyEntry], web_kill: Kill | None
) -> tuple[int, int, list[str]]:
    failed = [a for a in attempts if not a.ok]
    forgiven = [a for a in failed if web_kill and failed_in_flight(a, proxy=proxy, kill=web_kill)]
    unforgiven = [a for a in failed if a not in forgiven]
    problems = []
    if unforgiven:
        first = unforgiven[0]
        problems.append(
            f"{len(unforgiven)} request(s) failed outside the kill "
            f"(first: {first.actor} {first.action} -> {first.status or 'no answer'})"
        )
    return len(failed), len(forgiven), problems


def _grade_problems(posted: list[PostedGrade], applied: list[AppliedGrade]) -> list[str]:
    logs = Counter(a.token for a in applied)
    rating = {a.token: a.rating for a in applied}
    posted_tokens = {p.token for p in posted}
    missing = [p for p in posted if p.answered and logs[p.token] == 0]
    twice = [t for t, n in logs.items() if n > 1]
    wrong = [p for p in posted if logs[p.token] == 1 and rating[p.token] != p.rating]
    unposted = [a for a in applied if a.token not in posted_tokens]
    problems = []
    if missing:
        problems.append(f"{len(missing)} answered grade(s) left no review log")
    if twice:
        problems.append(f"{len(twice)} grade(s) applied twice")
    if wrong:
        problems.append(f"{len(wrong)} grade(s) logged with another rating")
    if unposted:
        problems.append(f"{len(unposted)} review log(s) nobody posted")
    return problems


def _release_problems(releases: list[Release], rows: list[ReleaseRow]) -> list[str]:
    by_id = {r.submission_id: r for r in rows}
    asked = {r.submission_id for r in releases}
    problems = []
    wrong = [
        r.submission_id
        for r in releases
        if r.answered
        and (
            r.submission_id not in by_id
            or by_id[r.submission_id].released_grades != 1
            or by_id[r.submission_id].grade_emails != 1
        )
    ]
    if wrong:
        problems.append(f"{len(wrong)} release(s) not applied exactly once (e.g. {wrong[0]})")
    unasked = [r.submission_id for r in rows if r.released_grades and r.submission_id not in asked]
    if unasked:
        problems.append(f"{len(unasked)} grade(s) released that nobody released")
    return problems


def _email_problems(
    promises: list[Promise],
    deliveries: list[Delivery],
    interrupted: frozenset[str],
    worker_kill: Kill | None,
) -> tuple[int, list[str]]:
    copies: dict[str, list[Delivery]] = {}
    strays = 0
    for delivery in deliveries:
        key = promise_key(delivery.message_id)
        if key is None:
            strays += 1
            continue
        copies.setdefault(key, []).append(delivery)
    promised = {p.key: p for p in promises}
    lost, twice, misdirected, new_id, resent = [], [], [], [], 0
    for promise in promises:
        got = sorted(copies.get(promise.key, []), key=lambda d: d.received_at)
        if promise.status != "sent" or not got:
            lost.append(promise.key)
            continue
        if any(d.recipients != (promise.recipient,) for d in got):
            misdirected.append(promise.key)
        if len(got) == 1:
            continue
        accepted_then_killed = (
            promise.key in interrupted
            and worker_kill is not None
            and len(got) == 2
            and got[0].received_at < worker_kill.at
        )
        if accepted_then_killed:
            resent += 1
            if got[0].message_id != got[1].message_id:
                new_id.append(promise.key)
        else:
            twice.append(promise.key)
    strays += sum(len(v) for k, v in copies.items() if k not in promised)
    problems = []
    if lost:
        problems.append(f"{len(lost)} promised email(s) not delivered (e.g. {lost[0]})")
    if twice:
        problems.append(f"{len(twice)} email(s) delivered more than once (e.g. {twice[0]})")
    if new_id:
        problems.append(f"{len(new_id)} resend(s) with a new Message-ID (e.g. {new_id[0]})")
    if misdirected:
        problems.append(f"{len(misdirected)} email(s) to the wrong recipient")
    if strays:
        problems.append(f"{strays} delivered message(s) no outbox row promised")
    return resent, problems


def verdict(record: Record) -> Verdict:
    failed, forgiven, problems = _request_problems(record.attempts, record.proxy, record.web_kill)
    problems += _grade_problems(record.posted, record.applied)
    problems += _release_problems(record.releases, record.release_rows)
    resent, email_problems = _email_problems(
        record.promises, record.deliveries, record.interrupted, record.worker_kill
    )
    problems += email_problems
    promised_to = {p.recipient for p in record.promises if p.key.startswith("digest")}
    if unpromised := record.owed_digests - promised_to:
        problems.append(f"{len(unpromised)} learner(s) owed a digest were promised none")
    if record.web_kill is None or record.worker_kill is None:
        problems.append("a web node and a worker node were not both killed")
    if record.web_kill is not None and record.restarted_web_served == 0:
        problems.append(f"the restarted {record.web_kill.node} served no request")
    if record.worker_kill is not None and record.restarted_worker_tasks == 0:
        problems.append(f"the restarted {record.worker_kill.node} ran no task")
    if not any(p.answered for p in record.posted):
        problems.append("no grade was posted")
    if not record.promises:
        problems.append("no email was promised")
    answered = [(a.ended - a.started) * 1000 for a in record.attempts if a.status]
    return Verdict(
        requests=len(record.attempts),
        failed=failed,
        forgiven=forgiven,
        p50_ms=percentile(answered, 50),
        p95_ms=percentile(answered, 95),
        grades=sum(1 for p in record.posted if p.answered),
        releases=sum(1 for r in record.releases if r.answered),
        digests=sum(1 for p in record.promises if p.key.startswith("digest")),
        grade_emails=sum(1 for p in record.promises if p.key.startswith("capstone")),
        resent=resent,
        kills=tuple(k.node for k in (record.web_kill, record.worker_kill) if k is not None),
        problems=tuple(problems),
    )
