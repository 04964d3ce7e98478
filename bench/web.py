"""Benchmark: the web pages on the production server, each beside a logged-in bare view.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/anything REDIS_URL=redis://127.0.0.1:6379/N \\
        .venv/bin/python bench/web.py [--learners 10000] [--seconds 4] [--keep | --reuse NAME]

Makes a throwaway database (named uniquely per run, dropped afterwards unless --keep; --reuse
runs on one kept earlier, without seeding), seeds the real course, a 400-item recall course and
learners with schedules and review logs, starts gunicorn (config/gunicorn.py, DJANGO_ENV=production,
DEBUG off, a bench-only URLconf adding the bare view) on a free 127.0.0.1 port, logs learners in,
and with wrk measures each page's requests/s between two runs of the bare view (a logged-in view
returning "ok" through the same middleware) at concurrency 1, 10 and 50, printing each page's
ratio to the mean of the two and, for the review pages, the 95th percentile latency at 10: the
median over --rounds interleaved rounds (this machine is shared; one 3-second run of a page can
move its ratio by 0.05 either way), with the range beside it. Requests go only to 127.0.0.1 and
are bounded in count (--max-requests per thread) and time (--seconds per run).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_db import drop_database, skip_unless_postgres, use_kept_database, use_throwaway_database
from _web_learners import learners_p95

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

LESSON_PATH = "/courses/gpus-tpus-ai-hardware/{slug}/"
SERVING_QUERY = "gpu_memory_gb=24&model_gb=14&overhead_gb=3&kv_per_user_gb=0.6&users=20"
CONCURRENCY = (1, 10, 50)
# Goals: each page's throughput as a share of the bare view's in the same run (issue 31 for the
# review pages, issue 15 for the others), and the review pages' p95 at 10 concurrent learners.
GOALS = {
    "GET /review/": 0.33,
    "reveal": 0.33,
    "POST /review/grade/": 0.33,
    "lesson": None,
    "calculator page": 0.40,
    "/planner/api/serving/": None,
    "/review/stats/": 0.20,
}
CARRIED = ("counts",)  # the signed fields the review forms carry
REVIEW_PAGES = ("GET /review/", "reveal", "POST /review/grade/")
# The latency goal's load: 10 learners, each reading a card for a think time around THINK_MS
# between one answer and the next request (a brisk learner: a real one reads for seconds), each
# request on a new connection, as a buffering proxy sends it to gunicorn (bench/_web_learners.py).
P95_LEVEL, P95_GOAL_MS, THINK_MS, PACED_SECONDS = 10, 50.0, 1000, 15
GRADES_PER_RUN = 3000  # more than a run at c = 50 answers in --seconds 6 on this machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def production_env(port: int) -> dict[str, str]:
    return {
        "DJANGO_ENV": "production",
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("BENCH_SECRET_KEY") or secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "EMAIL_URL": "smtp://127.0.0.1:2525",
        "DJANGO_SETTINGS_MODULE": "_web_settings",
        "PORT": str(port),
        "WEB_ACCESS_LOG": "",
        "LOG_LEVEL": "WARNING",
    }


def write_request_files(
    folder: Path, *, port: int, learners: int, grades: int, carried: tuple[str, ...] = CARRIED
) -> dict[str, tuple[Path, bool]]:
    """One request file per page: each line a request of one logged-in learner; `grades` grade
    lines. The reveal and grade carry the signed fields in `carried` as the forms do (without
    them the server counts the queue, or reads the schedule, itself)."""
    from _web_seed import sessions_for
    from django.conf import settings
    from django.utils import timezone

    from accounts.models import User
    from courses.models import Lesson
    from quizzes.models import RecallSchedule
    from quizzes.selectors.queue import due_queue_for

    ids = list(User.objects.order_by("id").values_list("id", flat=True))
    browse, graders = ids[: learners // 2], ids[learners // 2 :]
    keys = sessions_for(browse + graders)
    csrf = secrets.token_hex(16)  # a CSRF secret: the cookie and the header carry the same one
    origin = f"https://127.0.0.1:{port}"
    htmx = "HX-Request=true"

    def cookie(uid: int) -> str:
        return f"{settings.SESSION_COOKIE_NAME}={keys[uid]}; {settings.CSRF_COOKIE_NAME}={csrf}"

    lesson = Lesson.objects.filter(module__course__slug="gpus-tpus-ai-hardware").order_by(
        "module__position", "position"
    )[0]
    now = timezone.now()
    lines: dict[str, list[str]] = {name: [] for name in ("bare", *GOALS)}
    for uid in browse:
        c = cookie(uid)
        card = due_queue_for(learner=User.objects.get(pk=uid), now=now).card
        assert card is not None and card.schedule is not None, "every learner has a card due"
        reveal = f"/review/?reveal=1&schedule={card.schedule.pk}&token={card.schedule.card_token}"
        if "counts" in carried:
            reveal += f"&counts={quote(panel_counts(uid))}"  # passed on by the reveal, unread
        lines["bare"].append(f"GET\t/bench/bare/\t{c}")
        lines["GET /review/"].append(f"GET\t/review/\t{c}")
        lines["reveal"].append(f"GET\t{reveal}\t{c}\t\t{htmx}")
        lines["lesson"].append(f"GET\t{LESSON_PATH.format(slug=lesson.slug)}\t{c}")
        lines["calculator page"].append(f"GET\t/planner/\t{c}")
        lines["/planner/api/serving/"].append(f"GET\t/planner/api/serving/?{SERVING_QUERY}\t{c}")
        lines["/review/stats/"].append(f"GET\t/review/stats/\t{c}")
    # Grades: every line a different due card with its current token, used once, spread over
    # many learners so no one reaches the daily review cap; one slice per concurrency level.
    due = (
        RecallSchedule.objects.filter(learner_id__in=graders, due__lte=now)
        .order_by("learner_id", "due")
        .values_list("learner_id", "id", "card_token")
    )
    per_learner: dict[int, int] = {}
    cap = min(40, -(-grades // max(len(graders), 1)))
    for uid, sid, token in due.iterator(chunk_size=10_000):
        if per_learner.setdefault(uid, 0) >= cap:
            continue
        per_learner[uid] += 1
        body = f"rating=3&schedule_id={sid}&card_token={token}"
        # What the reveal's form carries; the counts are signed when the lines are used
        # (with_fresh_counts), as they keep 10 minutes.
        if "counts" in carried:
            body += f"&counts=COUNTS_{uid}"
        headers = f"{htmx}|X-CSRFToken={csrf}|Origin={origin}|Content-Type=application/x-www-form-urlencoded"
        lines["POST /review/grade/"].append(
            f"POST\t/review/grade/\t{cookie(uid)}\t{body}\t{headers}"
        )
        if len(lines["POST /review/grade/"]) >= grades:
            break
    files = {}
    for name, rows in lines.items():
        path = folder / (re.sub(r"\W+", "_", name).strip("_") + ".tsv")
        path.write_text("\n".join(rows) + "\n")
        files[name] = (path, name == "POST /review/grade/")
    return files


def panel_counts(learner_id: int) -> str:
    """The signed counts the review panel carries into its card's reveal and grade forms."""
    from django.utils import timezone

    from accounts.models import User
    from quizzes.selectors.carried_counts import counted_now, counts_dumps
    from quizzes.selectors.queue import queue_counts_for

    learner, now = User.objects.get(pk=learner_id), timezone.now()
    counts = queue_counts_for(learner=learner, now=now)
    return counts_dumps(counted_now(learner=learner, counts=counts, now=now), learner_id=learner_id)


def with_fresh_counts(lines: str) -> str:
    """Grade lines with each learner's counts signed now, as their panel would have them."""
    signed: dict[str, str] = {}

    def counts(match: re.Match[str]) -> str:
        if match.group(1) not in signed:
            signed[match.group(1)] = quote(panel_counts(int(match.group(1))))
        return signed[match.group(1)]

    return re.sub(r"COUNTS_(\d+)", counts, lines)


def start_server(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    server_env = {**os.environ, **env, "PYTHONPATH": f"{HERE}{os.pathsep}{ROOT}"}
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "-c",
            "config/gunicorn.py",
            "config.wsgi",
        ],
        cwd=ROOT,
        env=server_env,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("gunicorn did not start") from None
            time.sleep(0.3)


def wrk(
    url: str, file: Path, *, connections: int, seconds: float, max_requests: int, once: bool,
    offset_file: Path | None = None,
) -> tuple[float, float]:  # fmt: skip
    """Requests/s and the 95th percentile latency (ms) of one wrk run over `file`'s requests,
    fails on any answer but 200."""
    threads = min(2, connections)
    result = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{int(seconds)}s",
         "--timeout", "10s", "-s", str(HERE / "_wrk.lua"), url, "--", str(offset_file or file),
         str(threads), str(max_requests), "once" if once else "cycle"],
        capture_output=True, text=True, timeout=seconds + 60, check=False,
    )  # fmt: skip
    out = result.stdout
    bad = re.search(r"^BAD (\d+)(.*)$", out, re.MULTILINE)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p95 = re.search(r"^P95 (\d+)$", out, re.MULTILINE)
    if result.returncode or not rate or not bad or not p95:
        raise SystemExit(f"wrk failed on {file.name}:\n{out}\n{result.stderr}")
    if int(bad.group(1)):
        raise SystemExit(f"{file.name}: {bad.group(1)} answers were not 200 (first:{bad.group(2)})")
    return float(rate.group(1)), int(p95.group(1)) / 1000


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=10_000)
    parser.add_argument("--schedules", type=int, default=321, help="per learner (of 400 items)")
    parser.add_argument("--logs", type=int, default=2, help="review logs per schedule")
    parser.add_argument("--seconds", type=int, default=4, help="length of each wrk run")
    parser.add_argument("--max-requests", type=int, default=20_000, help="per wrk thread and run")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians shown")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway database")
    parser.add_argument("--reuse", metavar="NAME", help="a database kept by --keep: no seeding")
    parser.add_argument("--review-only", action="store_true", help="only the three review pages")
    parser.add_argument(
        "--without", action="append", choices=CARRIED, default=[],
        help="reveals and grades without this signed field their forms carry (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    for name, value, low, high in (
        ("--learners", args.learners, 20, 100_000),
        ("--schedules", args.schedules, 1, 400),
        ("--logs", args.logs, 0, 20),
        ("--seconds", args.seconds, 1, 120),
        ("--max-requests", args.max_requests, 1, 1_000_000),
        ("--rounds", args.rounds, 1, 9),
    ):
        if not low <= value <= high:
            parser.error(f"{name} must be between {low} and {high}")
    if args.reuse is not None and not re.fullmatch(r"bench_web_\w{1,40}", args.reuse):
        parser.error("--reuse must name a database kept by --keep (bench_web_…)")
    return with_server_database("web", lambda port, env, folder: run(args, port, env, folder),
                                keep=args.keep, reuse=args.reuse)  # fmt: skip


def with_server_database(
    stem: str,
    body: Callable[[int, dict[str, str], Path], int],
    *,
    keep: bool = False,
    reuse: str | None = None,
    server_env: dict[str, str] | None = None,
) -> int:
    """Run `body(port, server env, scratch folder)` with Django set up on a throwaway database
    (`bench_<stem>_<time>_<pid>`, dropped afterwards unless `keep`) and the production server's
    environment (`server_env` added to it), or on the kept database `reuse` as it is; exits 0
    with a line when PostgreSQL or wrk is missing."""
    skip_unless_postgres()
    if not shutil.which("wrk"):
        print("skipped: needs wrk (`make bench-tools` installs it)")
        return 0
    port = free_port()
    env = {**production_env(port), **(server_env or {})}
    os.environ.update({k: v for k, v in env.items() if k != "DJANGO_SETTINGS_MODULE"})
    os.environ["DJANGO_SETTINGS_MODULE"] = "_web_settings"
    name = reuse or f"bench_{stem}_{datetime.now(UTC):%Y%m%d%H%M%S}_{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix=f"bench_{stem}_") as tmp:
        os.environ["STATIC_ROOT"] = env["STATIC_ROOT"] = str(Path(tmp) / "static")
        if reuse:
            use_kept_database(reuse)
        else:
            use_throwaway_database(name)
            if keep:
                print(f"database {name} is kept: --reuse {name} runs on it again")
        env["DATABASE_URL"] = os.environ["DATABASE_URL"]
        try:
            return body(port, env, Path(tmp))
        finally:
            if not keep and not reuse:
                drop_database(name)


def run(args: argparse.Namespace, port: int, env: dict[str, str], folder: Path) -> int:
    from _web_seed import seed
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import User

    now = datetime.now(UTC)
    started = time.perf_counter()
    if not args.reuse:
        seed(learners=args.learners, schedules_per_learner=args.schedules,
             logs_per_schedule=args.logs, now=now)  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT COUNT(*) FROM quizzes_recallschedule), "
                       "(SELECT COUNT(*) FROM quizzes_reviewlog)")  # fmt: skip
        schedules, logs = cursor.fetchone()
        learners = User.objects.count()
    print(f"{'reused' if args.reuse else 'seeded'} {learners:,} learners, {schedules:,} schedules, "
          f"{logs:,} review logs in {time.perf_counter() - started:.0f} s")  # fmt: skip
    call_command("collectstatic", interactive=False, verbosity=0)
    grades = GRADES_PER_RUN * (len(CONCURRENCY) + 1) * args.rounds
    files = write_request_files(folder, port=port, learners=learners, grades=grades,
                                carried=tuple(f for f in CARRIED if f not in args.without))  # fmt: skip
    connection.close()
    server = start_server(port, env)
    try:
        return measure(args, f"http://127.0.0.1:{port}", files, folder)
    finally:
        server.terminate()
        server.wait(timeout=30)


def measure(
    args: argparse.Namespace, url: str, files: dict[str, tuple[Path, bool]], folder: Path
) -> int:
    from config import gunicorn as gunicorn_conf

    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.node()}, {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}; gunicorn "
          f"{gunicorn_conf.workers} sync workers; wrk on the same machine"
          + "".join(f"; forms without {f}" for f in args.without))  # fmt: skip
    pages = {n: g for n, g in GOALS.items() if not args.review_only or n in REVIEW_PAGES}
    for name in ("bare", *pages):  # warm every worker's templates and connections
        file, once = files[name]
        if not once:
            wrk(url, file, connections=10, seconds=1, max_requests=50, once=False)
    grade_lines = files["POST /review/grade/"][0].read_text().splitlines()
    slices = iter(range((len(CONCURRENCY) + 1) * args.rounds))
    per_slice = len(grade_lines) // ((len(CONCURRENCY) + 1) * args.rounds)

    def request_file(name: str) -> tuple[Path, bool]:
        file, once = files[name]
        if once:  # this run's own slice of never-used card tokens
            at = next(slices) * per_slice
            file = folder / f"grade_{at}.tsv"
            file.write_text(with_fresh_counts("\n".join(grade_lines[at : at + per_slice]) + "\n"))
        return file, once

    def run(name: str, connections: int, seconds: int) -> tuple[float, float]:
        file, once = request_file(name)
        return wrk(url, file, connections=connections, seconds=seconds,
                   max_requests=args.max_requests, once=once)  # fmt: skip

    # (rate, ratio, p95 ms) per page, level and round; the p95 of the paced learners per round
    results = {name: [[] for _ in CONCURRENCY] for name in pages}  # type: ignore[var-annotated]
    bare_runs: list[list[tuple[float, float]]] = [[] for _ in CONCURRENCY]
    paced: dict[str, list[float]] = {name: [] for name in ("bare", *REVIEW_PAGES)}
    for _ in range(args.rounds):
        for level, connections in enumerate(CONCURRENCY):
            bare_runs[level].append(run("bare", connections, args.seconds))
            for name in pages:
                rate, p95 = run(name, connections, args.seconds)
                bare_runs[level].append(run("bare", connections, args.seconds))
                bare_mean = (bare_runs[level][-2][0] + bare_runs[level][-1][0]) / 2
                results[name][level].append((rate, rate / bare_mean, p95))
        for name in paced:
            file, once = request_file(name)
            p95, _ = learners_p95(url, file, learners=P95_LEVEL, think_ms=THINK_MS,
                                  seconds=PACED_SECONDS, once=once)  # fmt: skip
            paced[name].append(p95)
    return report(args.rounds, pages, results, bare_runs, paced)


def report(
    rounds: int,
    pages: dict[str, float | None],
    results: dict[str, list[list[tuple[float, float, float]]]],
    bare_runs: list[list[tuple[float, float]]],
    paced: dict[str, list[float]],
) -> int:
    """Print each page's median rate and ratio per level, then the review pages' p95 at
    P95_LEVEL connections and for P95_LEVEL paced learners beside the bare view's; 1 if a goal
    is missed."""
    print(f"\nMedian of {rounds} round(s); the ratio's range over the rounds in brackets.")
    print(f"{'path':<24}" + "".join(f"{f'c={c} req/s':>12}{'ratio':>17}" for c in CONCURRENCY))
    spread = "".join(
        f"{f'{min(r for r, _ in runs):.0f}-{max(r for r, _ in runs):.0f}':>12}{'1.00':>17}"
        for runs in bare_runs
    )
    print(f"{'bare view (all runs)':<24}{spread}")
    failed = 0
    for name, goal in pages.items():
        medians = [
            (statistics.median(r for r, _, _ in runs), statistics.median(q for _, q, _ in runs),
             min(q for _, q, _ in runs), max(q for _, q, _ in runs))
            for runs in results[name]
        ]  # fmt: skip
        cells = "".join(
            f"{rate:>12.0f}{f'{ratio:.2f} [{low:.2f}-{high:.2f}]':>17}"
            for rate, ratio, low, high in medians
        )
        lowest = min(ratio for _, ratio, _, _ in medians)
        verdict = (
            ""
            if goal is None
            else f"  goal {goal:.2f}: " + ("met" if lowest >= goal else "NOT met")
        )
        failed += goal is not None and lowest < goal
        print(f"{name:<24}{cells}{verdict}")
    level = CONCURRENCY.index(P95_LEVEL)
    print(f"\np95 latency, ms (median of the rounds, their range): {P95_LEVEL} connections sending "
          f"back to back, and {P95_LEVEL} learners each thinking {THINK_MS / 2000:g}-"
          f"{THINK_MS * 1.5 / 1000:g} s between answer and request ({PACED_SECONDS} s a run)")  # fmt: skip
    print(f"{'path':<24}{'back to back':>20}{f'{P95_LEVEL} learners':>20}")
    closed = {"bare": [p for _, p in bare_runs[level]]}
    closed.update({name: [p for _, _, p in results[name][level]] for name in REVIEW_PAGES})
    for name, learners in paced.items():
        cells = "".join(
            f"{f'{statistics.median(p):.1f} [{min(p):.1f}-{max(p):.1f}]':>20}"
            for p in (closed[name], learners)
        )
        verdict = ""
        if name != "bare":
            met = statistics.median(learners) < P95_GOAL_MS
            verdict = f"  goal < {P95_GOAL_MS:.0f} ms for {P95_LEVEL} learners: " + (
                "met" if met else "NOT met"
            )
            failed += not met
        print(f"{'bare view' if name == 'bare' else name:<24}{cells}{verdict}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
