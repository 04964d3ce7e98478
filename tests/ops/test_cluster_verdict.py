"""The cluster run's judgement (ops/cluster/verdict.py) and its pure helpers, from recorded
results: no namespaces, no root, no servers. `make cluster` itself runs outside `make test`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ops.cluster.cli import main
from ops.cluster.load import form_with_class, hidden_inputs, level_choices
from ops.cluster.nodes import WORKER_LINES, procfile
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
from ops.cluster.verdict import (
    percentile,
    promise_key,
    proxy_log_parse,
    verdict,
)

ROOT = Path(__file__).resolve().parents[2]
WEB_KILL = Kill("web1", 10.0, 10.05)
WORKER_KILL = Kill("worker1", 6.5, 6.55)


def ok(rid: str, started: float = 1.0, ended: float = 1.1) -> Attempt:
    return Attempt(rid, "learner", "GET /review/", started, ended, 200, True)


def clean_record(**changes: object) -> Record:
    """A run where everything held: two answered grades, one release, a digest and a grade
    email each delivered once, both killed nodes back at work."""
    record = Record(
        attempts=[ok("l-1"), ok("l-2", 11.0, 11.2)],
        proxy={
            "l-1": ProxyEntry("l-1", "web2", 200, "----"),
            "l-2": ProxyEntry("l-2", "web1", 200, "----"),
        },
        web_kill=WEB_KILL,
        worker_kill=WORKER_KILL,
        posted=[PostedGrade("a@x", "t1", 3, True), PostedGrade("a@x", "t2", 1, True)],
        applied=[AppliedGrade("a@x", "t1", 3), AppliedGrade("a@x", "t2", 1)],
        releases=[Release(7, True)],
        release_rows=[ReleaseRow(7, 1, 1), ReleaseRow(8, 0, 0)],
        promises=[Promise("digest1", "sent", "d@x"), Promise("capstone3", "sent", "c@x")],
        deliveries=[
            Delivery("<1.2.3.digest1@host>", ("d@x",), 6.0),
            Delivery("<1.2.4.capstone3@host>", ("c@x",), 7.0),
        ],
        interrupted=frozenset(),
        owed_digests=frozenset({"d@x"}),
        restarted_web_served=3,
        restarted_worker_tasks=2,
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def test_a_run_where_everything_held_passes_with_its_figures_on_one_line():
    result = verdict(clean_record())
    assert result.passed
    line = result.line()
    assert line.startswith("PASS | 2 requests, 0 failed")
    assert "2 review grades and 1 capstone releases applied once" in line
    assert "1 digests + 1 grade emails delivered once" in line
    assert "killed web1 and worker1" in line
    assert "\n" not in line


@pytest.mark.parametrize(
    ("started", "ended"),
    [(9.9, 10.2), (10.02, 10.2)],  # sent before the first signal, or while web1 was dying
)
def test_a_request_in_flight_on_the_killed_web_node_is_forgiven(started, ended):
    """Sent to web1 while it was alive, answered 502 by the proxy (server abort) once it died."""
    failed = Attempt("l-3", "learner", "POST /review/grade/", started, ended, 502, False)
    record = clean_record(
        attempts=[ok("l-1"), failed],
        proxy={"l-1": ProxyEntry("l-1", "web2", 200, "----"),
               "l-3": ProxyEntry("l-3", "web1", 502, "SH--")},
    )  # fmt: skip
    result = verdict(record)
    assert result.passed, result.problems
    assert (result.failed, result.forgiven) == (1, 1)


@pytest.mark.parametrize(
    ("entry", "started", "ended"),
    [
        (ProxyEntry("l-3", "web2", 502, "SH--"), 9.9, 10.2),  # on the node still alive
        (ProxyEntry("l-3", "web1", 502, "SH--"), 10.1, 10.3),  # sent once web1 was gone
        (ProxyEntry("l-3", "web1", 502, "SH--"), 9.0, 9.5),  # over before the kill
        (ProxyEntry("l-3", "web1", 500, "----"), 9.9, 10.2),  # the node answered: an error
        (None, 9.9, 10.2),  # the proxy never had it
    ],
)
def test_any_other_failed_request_fails_the_run(entry, started, ended):
    failed = Attempt("l-3", "learner", "POST /review/grade/", started, ended, 502, False)
    proxy = {"l-1": ProxyEntry("l-1", "web2", 200, "----")}
    if entry is not None:
        proxy["l-3"] = entry
    result = verdict(clean_record(attempts=[ok("l-1"), failed], proxy=proxy))
    assert not result.passed
    assert result.problems[0].startswith("1 request(s) failed outside the kill")
    assert result.line().startswith("FAIL: 1 request(s) failed outside the kill")


@pytest.mark.parametrize(
    ("applied", "problem"),
    [
        ([AppliedGrade("a@x", "t1", 3)], "1 answered grade(s) left no review log"),
        (
            [
                AppliedGrade("a@x", "t1", 3),
                AppliedGrade("a@x", "t2", 1),
                AppliedGrade("a@x", "t2", 1),
            ],
            "1 grade(s) applied twice",
        ),
        (
            [AppliedGrade("a@x", "t1", 3), AppliedGrade("a@x", "t2", 4)],
            "1 grade(s) logged with another rating",
        ),
        (
            [
                AppliedGrade("a@x", "t1", 3),
                AppliedGrade("a@x", "t2", 1),
                AppliedGrade("a@x", "t9", 2),
            ],
            "1 review log(s) nobody posted",
        ),
    ],
)
def test_grades_must_be_applied_exactly_once(applied, problem):
    result = verdict(clean_record(applied=applied))
    assert problem in result.problems


def test_a_grade_whose_every_try_failed_may_be_applied_once_or_not_at_all():
    posted = [PostedGrade("a@x", "t1", 3, True), PostedGrade("a@x", "t2", 1, False)]
    assert verdict(clean_record(posted=posted)).passed
    assert verdict(clean_record(posted=posted, applied=[AppliedGrade("a@x", "t1", 3)])).passed


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([ReleaseRow(7, 0, 0)], "1 release(s) not applied exactly once (e.g. 7)"),
        ([ReleaseRow(7, 1, 2)], "1 release(s) not applied exactly once (e.g. 7)"),
        ([ReleaseRow(7, 1, 1), ReleaseRow(8, 1, 1)], "1 grade(s) released that nobody released"),
    ],
)
def test_each_release_grades_once_and_promises_one_email(rows, problem):
    assert problem in verdict(clean_record(release_rows=rows)).problems


def test_an_email_lost_or_sent_twice_fails_the_run():
    lost = clean_record(deliveries=[Delivery("<1.2.3.digest1@host>", ("d@x",), 6.0)])
    assert "1 promised email(s) not delivered (e.g. capstone3)" in verdict(lost).problems
    unsent = clean_record(promises=[Promise("digest1", "failed", "d@x")])
    assert "1 promised email(s) not delivered (e.g. digest1)" in verdict(unsent).problems
    twice = clean_record(
        deliveries=[*clean_record().deliveries, Delivery("<1.2.3.digest1@host>", ("d@x",), 8.0)]
    )
    assert "1 email(s) delivered more than once (e.g. digest1)" in verdict(twice).problems


def test_the_one_accepted_duplicate_is_a_resend_of_a_send_the_kill_cut_short():
    """The guide's exception: the sink had the message before the worker died mid-send, so the
    sweep's resend is a second copy, with the same Message-ID. Anything else stays a failure."""
    again = Delivery("<1.2.3.digest1@host>", ("d@x",), 20.0)
    deliveries = [*clean_record().deliveries, again]
    resent = verdict(clean_record(deliveries=deliveries, interrupted=frozenset({"digest1"})))
    assert resent.passed and resent.resent == 1
    assert "(1 resent after the kill)" in resent.line()
    # Not mid-send at the kill: a plain duplicate.
    assert not verdict(clean_record(deliveries=deliveries)).passed
    # The first copy came after the kill: the kill did not cut that send short.
    late = [Delivery("<1.2.3.digest1@host>", ("d@x",), 6.0 + 10), again, deliveries[1]]
    assert not verdict(clean_record(deliveries=late, interrupted=frozenset({"digest1"}))).passed
    # A resend under a new Message-ID cannot be folded by a mail client.
    new_id = [*clean_record().deliveries, Delivery("<9.9.9.digest1@host>", ("d@x",), 20.0)]
    problems = verdict(clean_record(deliveries=new_id, interrupted=frozenset({"digest1"}))).problems
    assert "1 resend(s) with a new Message-ID (e.g. digest1)" in problems


def test_mail_nobody_promised_or_to_the_wrong_person_fails_the_run():
    stray = [*clean_record().deliveries, Delivery("<1.2.5@host>", ("x@x",), 7.0)]
    assert (
        "1 delivered message(s) no outbox row promised"
        in verdict(clean_record(deliveries=stray)).problems
    )
    wrong = [Delivery("<1.2.3.digest1@host>", ("z@x",), 6.0), clean_record().deliveries[1]]
    assert "1 email(s) to the wrong recipient" in verdict(clean_record(deliveries=wrong)).problems


def test_a_learner_owed_a_digest_must_have_been_promised_one():
    record = clean_record(owed_digests=frozenset({"d@x", "e@x"}))
    assert "1 learner(s) owed a digest were promised none" in verdict(record).problems


def test_both_nodes_must_be_killed_and_back_at_work():
    assert (
        "a web node and a worker node were not both killed"
        in verdict(clean_record(web_kill=None)).problems
    )
    assert (
        "the restarted web1 served no request"
        in verdict(clean_record(restarted_web_served=0)).problems
    )
    assert (
        "the restarted worker1 ran no task"
        in verdict(clean_record(restarted_worker_tasks=0)).problems
    )


def test_the_proxy_log_gives_each_request_its_node_and_termination_state():
    lines = [
        "[WARNING]  (12) : Server web/web1 is DOWN, reason: Layer4 connection problem",
        "rid=l-7 srv=web1 st=502 ts=SH-- tt=91",
        "rid=i-2 srv=web2 st=302 ts=---- tt=54",
        "rid=- srv=web2 st=200 ts=---- tt=3",
        "rid=l-9 srv=<NOSRV> st=-1 ts=CR-- tt=-1",
    ]
    assert proxy_log_parse(lines) == {
        "l-7": ProxyEntry("l-7", "web1", 502, "SH--"),
        "i-2": ProxyEntry("i-2", "web2", 302, "----"),
        "l-9": ProxyEntry("l-9", "<NOSRV>", -1, "CR--"),
    }


def test_a_message_id_names_its_outbox_row():
    assert promise_key("<179642734098.18097.1431.digest12@10.231.39.2>") == "digest12"
    assert promise_key("<1.2.3.capstone7@localhost>") == "capstone7"
    assert promise_key("<1.2.3@localhost>") is None


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200), st.floats(1, 100))
def test_a_percentile_is_one_of_the_values_and_grows_with_q(values, q):
    p = percentile(values, q)
    assert p in values
    assert percentile(values, 50) <= percentile(values, 95)
    assert percentile(values, 100) == max(values)
    assert sum(v <= p for v in values) >= q / 100 * len(values)


def test_every_process_the_cluster_runs_is_a_line_of_the_production_procfile():
    lines = procfile(ROOT / "Procfile.production")
    assert {"web", "beat", *WORKER_LINES} <= set(lines)
    assert lines["web"].startswith("gunicorn -c config/gunicorn.py")
    assert "var/celerybeat-schedule" in lines["beat"]  # the run points it into its own folder
    for queue in WORKER_LINES:
        assert f"-Q {queue}" in lines[queue] and "%h" in lines[queue]


def test_the_driver_reads_the_review_and_grading_forms():
    panel = (
        '<form method="get" action="/review/" class="reveal-form">'
        '<input type="hidden" name="reveal" value="1">'
        '<input type="hidden" name="schedule" value="42">'
        '<input type="hidden" name="counts" value="a&amp;b">'
        '<input type="number" name="value"></form>'
        '<form method="post" class="undo-form"><input type="hidden" name="x" value="y"></form>'
    )
    reveal = form_with_class(panel, "reveal-form")
    assert reveal is not None
    assert hidden_inputs(reveal) == {"reveal": "1", "schedule": "42", "counts": "a&b"}
    assert form_with_class(panel, "grade-form") is None
    rubric = (
        '<input type="radio" name="level_3" id="level-8" value="8">'
        '<input type="radio" name="level_3" id="level-9" value="9" checked>'
        '<input type="radio" name="level_4" id="level-10" value="10">'
    )
    assert level_choices(rubric) == {"level_3": ["8", "9"], "level_4": ["10"]}


@pytest.mark.parametrize(
    "args", [["--seconds", "9999"], ["--learners", "0"], ["--digests", "x"],
             ["--digests", "20", "--submissions", "40"]],
)  # fmt: skip
def test_out_of_range_options_stop_before_anything_is_made(args, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("usage:") or "error:" in err


def test_a_later_run_removes_the_folders_of_dead_runs_but_not_kept_or_live_ones(tmp_path):
    import os
    import subprocess

    from ops.cluster.cli import KEPT, leftover_folders

    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = tmp_path / f"recall-cluster-{gone.pid}-abc"
    kept = tmp_path / f"recall-cluster-{gone.pid}-def"
    live = tmp_path / f"recall-cluster-{os.getpid()}-ghi"
    for folder in (dead, kept, live):
        folder.mkdir()
    (kept / KEPT).touch()
    assert leftover_folders(tmp_path) == [dead]
