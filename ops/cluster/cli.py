"""`make cluster`: the production topology of docs/operations.md on this host, nodes killed.

    sudo .venv/bin/python -m ops.cluster [--seconds 60] [--learners 10] [--digests 300]
                                          [--submissions 40] [--keep]

Builds one network namespace per node on a bridge made for the run (10.231.39.0/24, inside the
run's namespaces only): a proxy (HAProxy, TLS, probing /healthz), two web nodes (gunicorn), two
worker nodes (one Celery worker per queue each), one beat node, a PostgreSQL node and a Redis
node (throwaway servers started for the run), and the driver, which holds a mail sink and drives
learners and instructors through the proxy. Every node runs its line of Procfile.production with
the same environment. Mid-run it makes 300 learners' cards fall due (beat's scan mails them),
SIGKILLs a worker node while the digests go out and a web node while it holds requests, and
restarts both. Its last line is the verdict (ops/cluster/verdict.py); the exit status is 0 only
when it passes. Everything it made is removed on exit, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from glob import glob
from pathlib import Path

from ops.cluster.net import Network, pid_alive, remove_leftovers
from ops.cluster.nodes import NODES, say
from ops.cluster.run import Cluster
from ops.cluster.servers import SUBNET

# The whole run, build to verdict, ends within five minutes whatever happens (the machine is shared).
RUN_LIMIT = 300
# A run's folder kept on purpose (--keep) says so; other folders of dead runs are removed.
KEPT = "KEPT"


def leftover_folders(tmp: Path) -> list[Path]:
    """Folders of earlier runs that died before removing them (and were not kept)."""
    found = []
    for folder in tmp.glob("recall-cluster-*-*"):
        pid = folder.name.split("-")[2]
        if pid.isdigit() and not (folder / KEPT).exists() and not pid_alive(int(pid)):
            found.append(folder)
    return found


class Interrupted(Exception):
    """SIGTERM or SIGHUP: clean up as for Ctrl-C."""


def _bounded(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if len(text) > 6 or not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"a whole number from {low} to {high}")
        return int(text)

    return parse


def _missing_tools() -> list[str]:
    tools = ["ip", "unshare", "setpriv", "openssl", "haproxy", "redis-server"]
    missing = [t for t in tools if shutil.which(t) is None]
    if not glob("/usr/lib/postgresql/*/bin/postgres"):
        missing.append("postgresql (Debian's /usr/lib/postgresql/*/bin)")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.cluster", description=__doc__)
    parser.add_argument("--seconds", type=_bounded(30, 150), default=60)
    parser.add_argument("--learners", type=_bounded(1, 40), default=10)
    parser.add_argument("--digests", type=_bounded(20, 2000), default=300)
    parser.add_argument("--submissions", type=_bounded(2, 200), default=40)
    parser.add_argument("--keep", action="store_true", help="keep the run's folder (logs)")
    args = parser.parse_args(argv)
    if args.submissions > args.digests:
        parser.error("--submissions: at most one per digest learner")
    if os.geteuid() != 0:
        print("make cluster needs root: it makes network namespaces", file=sys.stderr)
        return 2
    if missing := _missing_tools():
        print(f"make cluster needs {', '.join(missing)}", file=sys.stderr)
        return 2
    for name in remove_leftovers():
        say(f"removed {name}, left by an earlier run")
    for folder in leftover_folders(Path(tempfile.gettempdir())):
        shutil.rmtree(folder, ignore_errors=True)
    run_dir = Path(tempfile.mkdtemp(prefix=f"recall-cluster-{os.getpid()}-"))
    run_dir.chmod(0o755)

    def interrupted(signum: int, frame: object) -> None:
        if signum == signal.SIGALRM:
            raise Interrupted(f"the run passed its {RUN_LIMIT} s limit")
        raise Interrupted(signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
        signal.signal(signum, interrupted)
    signal.alarm(RUN_LIMIT)
    network = Network(subnet=SUBNET, nodes=NODES, run_dir=run_dir)
    cluster: Cluster | None = None
    try:
        network.create()
        network.enter("driver")
        cluster = Cluster(network, args)
        code, line = cluster.go()
    except KeyboardInterrupt:
        code, line = 130, "FAIL: interrupted (Ctrl-C); everything the run made was removed"
    except Interrupted as exc:
        code, line = 1, f"FAIL: interrupted ({exc}); everything the run made was removed"
    except Exception as exc:
        if cluster is not None:
            cluster.dump_logs()
        code, line = 1, f"FAIL: the run broke off: {type(exc).__name__}: {exc}"[-2000:]
    finally:
        signal.alarm(0)  # the cleanup itself is never cut short
        if cluster is not None:
            if cluster.db is not None:
                cluster.db.close()
            sink = getattr(cluster, "sink", None)
            if sink is not None:
                sink.stop()
        network.leave()
        network.destroy()
        if args.keep:
            (run_dir / KEPT).touch()
            say(f"(logs kept in {run_dir})")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
    # The verdict is the last line, whatever happened.
    say(" ".join(line.split()) if code else line)
    return code
