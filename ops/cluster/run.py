"""The cluster run's timeline (`make cluster`, ops/cluster/cli.py): the users through the proxy,
the digests falling due, a worker node killed while they go out and a web node killed while it
holds requests, both restarted; then the outbox drained and the record judged."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ops.cluster import load, reads, servers
from ops.cluster.nodes import (
    START_LIMIT,
    VENV_BIN,
    Site,
    say,
    wait_for,
    wait_for_or_none,
)
from ops.cluster.records import Kill, Record
from ops.cluster.verdict import promise_key, proxy_log_parse, verdict

DRAIN_LIMIT = 90.0
# The outbox's stale limits are 10 minutes; the recovery looks that far (and a minute) ahead.
RECOVER_AHEAD = 660
# Killed nodes come back after this long (a process manager's restart, or a machine's reboot).
DOWN_FOR = 5.0


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f} s"


class Cluster(Site):
    """The run: load through the proxy, the kills and restarts, the drain, the verdict."""

    @contextmanager
    def users(self, recorder: load.Recorder, deadline: float) -> Iterator[threading.Event]:
        """The learners' and instructors' threads, for as long as the block runs."""
        stop = threading.Event()
        tls = load.tls_context(str(self.dir / "proxy.crt"))
        pace = load.Pace(deadline=deadline, think=(0.3, 1.2))
        threads = []
        password = self.password
        for n, person in enumerate(self.seed["learners"]):
            client = load.Client(
                host=self.proxy_ip, tls=tls, recorder=recorder, run="l", actor=person["email"]
            )
            client.cookies[self.seed["session_cookie"]] = person["session"]
            threads.append(
                threading.Thread(
                    target=load.learner,
                    daemon=True,
                    args=(client,),
                    kwargs={"pace": pace, "max_grades": 200, "rng": random.Random(n), "stop": stop},
                )
            )
        submissions = self.seed["submissions"]
        count = len(self.seed["instructors"])
        for n, email in enumerate(self.seed["instructors"]):
            client = load.Client(
                host=self.proxy_ip, tls=tls, recorder=recorder, run="i", actor=email
            )

            def grade(
                c: load.Client = client, mine: list[int] = submissions[n::count], seed: int = n
            ) -> None:
                if load.log_in(c, email=c.actor, password=password):
                    load.instructor(
                        c, submissions=mine, pace=pace, rng=random.Random(100 + seed), stop=stop
                    )

            threads.append(threading.Thread(target=grade, daemon=True))
        for thread in threads:
            thread.start()
        try:
            yield stop
        finally:
            stop.set()
            joined_by = time.monotonic() + load.TIMEOUT * 2
            for thread in threads:
                thread.join(timeout=max(joined_by - time.monotonic(), 0.1))

    def drive(self, recorder: load.Recorder) -> dict[str, Any]:
        """The load, with the digests falling due, a worker node and a web node killed and
        restarted. Returns the timeline."""
        seconds = self.args.seconds
        start = time.monotonic()
        timeline: dict[str, Any] = {}
        with self.users(recorder, deadline=start + seconds):
            say(f"{self.elapsed()} load started: {len(self.seed['learners'])} learners, "
                f"{len(self.seed['instructors'])} instructors, for {seconds} s")  # fmt: skip
            time.sleep(min(8.0, seconds / 8))
            reads.cards_fall_due(self.db, self.seed)
            say(f"{self.elapsed()} {len(self.seed['digest_learner_ids'])} learners' cards due; "
                "beat's next scan owes them a digest")  # fmt: skip
            self.kill_worker_mid_digests(timeline, limit=seconds * 0.4)
            time.sleep(max(0.0, start + seconds * 0.45 - time.monotonic()))
            self.kill_web_mid_request(timeline)
            time.sleep(max(0.0, start + seconds - time.monotonic()))
            say(f"{self.elapsed()} load over; waiting for the users' last requests")
        timeline["load_seconds"] = time.monotonic() - start
        return timeline

    def kill_worker_mid_digests(self, timeline: dict[str, Any], *, limit: float) -> None:
        """SIGKILL worker1 once a tenth of the digests are sent; restart it DOWN_FOR later."""
        owed = len(self.seed["digest_learner_ids"])
        started = wait_for_or_none(
            lambda: reads.digest_progress(self.db, self.seed)[1] >= max(owed // 10, 1),
            limit=limit,
        )
        if not started:
            say(f"{self.elapsed()} the digests had not started; killing worker1 anyway")
        pids = self.net.pids("worker1")
        total, sent = reads.digest_progress(self.db, self.seed)
        at = time.monotonic()
        self.net.kill("worker1", known=pids)
        timeline["worker_kill"] = Kill("worker1", at, time.monotonic())
        timeline["sending_at_kill"] = reads.sending_keys(self.db, self.seed)
        say(f"{self.elapsed()} SIGKILL worker1 (all its processes) with {sent} of {total} "
            f"digests sent, {len(timeline['sending_at_kill'])} emails mid-send")  # fmt: skip
        time.sleep(DOWN_FOR)
        timeline["worker_restart"] = time.monotonic()
        timeline["restarted_workers"] = self.start_workers("worker1")
        say(f"{self.elapsed()} worker1 restarted")

    def kill_web_mid_request(self, timeline: dict[str, Any]) -> None:
        """SIGKILL web1 while the proxy has a request on it (waiting at most 5 s for one), and
        restart it DOWN_FOR later; times how soon the proxy sees it down and up again."""
        pids = self.net.pids("web1")

        def busy() -> bool:
            return int(servers.proxy_stats(self.net).get("web1", {}).get("scur", "0") or 0) > 0

        seen = wait_for_or_none(busy, limit=5.0, every=0.005)
        at = time.monotonic()
        self.net.kill("web1", known=pids)
        timeline["web_kill"] = kill = Kill("web1", at, time.monotonic())
        say(f"{self.elapsed()} SIGKILL web1 with a request on it"
            f"{'' if seen else ' (none seen within 5 s)'}")  # fmt: skip
        down = wait_for_or_none(lambda: not self.web_up("web1"), limit=10.0)
        timeline["web_marked_down_s"] = time.monotonic() - kill.at if down else None
        time.sleep(max(0.0, kill.at + DOWN_FOR - time.monotonic()))
        self.start_line("web1", "web")
        timeline["web_restart"] = time.monotonic()
        up = wait_for_or_none(lambda: self.web_up("web1"), limit=START_LIMIT)
        timeline["web_back_s"] = time.monotonic() - timeline["web_restart"] if up else None
        say(f"{self.elapsed()} web1 restarted; the proxy marked it down after "
            f"{_seconds(timeline['web_marked_down_s'])} and up "
            f"{_seconds(timeline['web_back_s'])} after its restart")  # fmt: skip

    def drain(self, timeline: dict[str, Any]) -> frozenset[str]:
        """Wait for every promised email; rows the killed worker node left behind (claimed and
        `sending`, or in a chunk it had taken) wait for the outbox's 10-minute stale limit, so
        once nothing else moves the sweeps run as of 11 minutes ahead. Returns the keys of the
        rows that were mid-send at the kill and still stuck then."""
        sent = self.seed["values"]["sent"]
        deadline = time.monotonic() + DRAIN_LIMIT
        while True:
            rows = reads.outbox_rows(self.db, self.seed)
            waiting = [r for r in rows if r[1] != sent]
            since_restart = time.monotonic() - timeline["worker_restart"]
            # Left behind: untouched since before the restart, while nothing moved for 8 s.
            if not waiting or (
                all(age > since_restart for _, _, age in waiting)
                and all(age > 8 for _, _, age in rows)
            ):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(waiting)} promised email(s) still unsent: {waiting[:5]}")
            time.sleep(0.5)
        stuck = waiting
        interrupted = frozenset(key for key, _, _ in stuck if key in timeline["sending_at_kill"])
        if stuck:
            self.release_step(
                "recover",
                [str(VENV_BIN / "python"), "-m", "ops.cluster.app", "recover", "--ahead",
                 str(RECOVER_AHEAD)],
                node="driver",
            )  # fmt: skip
            say(f"{self.elapsed()} {len(stuck)} email(s) left by the killed worker node "
                f"({len(interrupted)} mid-send): the sweep run as of "
                f"{RECOVER_AHEAD // 60} minutes later re-enqueued them")  # fmt: skip
        wait_for(
            lambda: all(r[1] == sent for r in reads.outbox_rows(self.db, self.seed)),
            what="every promised email sent",
            limit=DRAIN_LIMIT,
        )
        time.sleep(6)  # a sweep or two more: a second copy would arrive now
        return interrupted

    def collect(
        self, recorder: load.Recorder, timeline: dict[str, Any], interrupted: frozenset[str]
    ) -> Record:
        proxy_log = next(p for p in self.net.processes if p.name == "haproxy").output()
        proxy = proxy_log_parse(proxy_log.splitlines())
        served_after = sum(
            1
            for a in recorder.attempts
            if a.started > timeline["web_restart"]
            and (e := proxy.get(a.request_id)) is not None
            and e.server == "web1"
            and e.status < 500
        )
        tasks_after = sum(p.output().count(" succeeded in ") for p in timeline["restarted_workers"])
        with self.sink_lock:
            deliveries = list(self.deliveries)
        return Record(
            attempts=list(recorder.attempts),
            proxy=proxy,
            web_kill=timeline["web_kill"],
            worker_kill=timeline["worker_kill"],
            posted=list(recorder.grades),
            applied=reads.applied_grades(self.db, self.seed),
            releases=list(recorder.releases),
            release_rows=reads.release_rows(self.db, self.seed),
            promises=reads.promises(self.db, self.seed),
            deliveries=deliveries,
            interrupted=interrupted,
            owed_digests=frozenset(self.seed["digest_learners"]),
            restarted_web_served=served_after,
            restarted_worker_tasks=tasks_after,
        )

    def report(self, record: Record, timeline: dict[str, Any]) -> None:
        by_action: dict[str, list[float]] = {}
        for a in record.attempts:
            by_action.setdefault(a.action, []).append((a.ended - a.started) * 1000)
        say("figures:")
        for action, times in sorted(by_action.items()):
            times.sort()
            say(f"  {action:34} {len(times):5} requests, p50 {times[len(times) // 2]:6.0f} ms")
        per_server: dict[str, int] = {}
        for entry in record.proxy.values():
            per_server[entry.server] = per_server.get(entry.server, 0) + 1
        say(f"  requests per web node: {dict(sorted(per_server.items()))}")
        kill = record.web_kill
        for a in [a for a in record.attempts if not a.ok][:10]:
            since = (
                f"{(a.started - kill.at) * 1000:+.0f}..{(a.ended - kill.at) * 1000:+.0f} ms"
                if kill
                else ""
            )
            say(f"  failed: {a.request_id} {a.actor} {a.action} -> {a.status or 'no answer'} "
                f"({since} from the web kill; proxy: {record.proxy.get(a.request_id)})")  # fmt: skip
        copies: dict[str, list[str]] = {}
        for d in record.deliveries:
            copies.setdefault(promise_key(d.message_id) or "?", []).append(d.message_id)
        for key, ids in sorted(copies.items()):
            if len(ids) > 1:
                same = "the same Message-ID" if len(set(ids)) == 1 else "different Message-IDs"
                say(f"  {key}: {len(ids)} copies, {same}")
        say(f"  restarted web1 served {record.restarted_web_served} requests; restarted "
            f"worker1 ran {record.restarted_worker_tasks} tasks")  # fmt: skip
        say(f"  mail sink: {len(record.deliveries)} messages; load {timeline['load_seconds']:.0f} "
            f"s, whole run {time.monotonic() - self.t0:.0f} s")  # fmt: skip

    def go(self) -> tuple[int, str]:
        """The whole run; returns the exit status and the verdict line (printed last, once the
        run has cleaned up)."""
        self.build()
        recorder = load.Recorder()
        timeline = self.drive(recorder)
        interrupted = self.drain(timeline)
        record = self.collect(recorder, timeline, interrupted)
        result = verdict(record)
        self.report(record, timeline)
        if not result.passed:
            self.dump_logs()
        return (0 if result.passed else 1), result.line()

    def dump_logs(self) -> None:
        for process in self.net.processes:
            text = process.output()
            if "Traceback" in text or "ERROR" in text:
                say(f"--- {process.log.name} (last lines) ---")
                say(text[-1500:])
