"""The run's private network: one network namespace per node, each with its own address on a
bridge that lives in a namespace of its own (nothing is added to the host's namespace), and the
processes started on those nodes. Everything is removed again by `Network.destroy`, which kills
every process left in the run's namespaces by pid first.

Each node's processes also get their own UTS namespace, so `hostname` (Celery's `%h`) names the
node, as on separate machines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

# The run's namespaces are named `<PREFIX><pid of the run>-<node>`, so a run can find and remove
# what an earlier run that was itself killed left behind (its pid is no longer alive).
PREFIX = "recall-cl"
SWITCH = "switch"
BRIDGE = "br0"
_OURS = re.compile(rf"^{PREFIX}(\d+)-[a-z0-9]+$")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _namespaces() -> list[str]:
    listed = _ip("netns", "list", check=False).stdout.splitlines()
    return [line.split()[0] for line in listed if line.strip()]


def _pids_in(namespace: str) -> list[int]:
    out = _ip("netns", "pids", namespace, check=False).stdout.split()
    return [int(p) for p in out if p.isdigit() and int(p) != os.getpid()]


def _kill_all_in(namespace: str, *, wait: float = 10.0) -> None:
    """SIGKILL every process in the namespace (by pid) and wait until none is left."""
    deadline = time.monotonic() + wait
    while pids := _pids_in(namespace):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)


def _remove(namespace: str) -> None:
    _kill_all_in(namespace)
    _ip("netns", "delete", namespace, check=False)


def remove_leftovers() -> list[str]:
    """Remove the namespaces of earlier runs whose process is gone; returns their names."""
    removed = []
    for name in _namespaces():
        match = _OURS.match(name)
        if match and not pid_alive(int(match.group(1))):
            _remove(name)
            removed.append(name)
    return removed


@dataclass
class Process:
    node: str
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    _file: IO[bytes]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        self._file.close()


@dataclass
class Network:
    """The run's namespaces on a /24 (`subnet` is its first three octets)."""

    subnet: str
    nodes: Mapping[str, int]  # node name -> last octet of its address
    run_dir: Path
    run_id: str = field(default_factory=lambda: str(os.getpid()))
    processes: list[Process] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    _home: int | None = None  # this process's own network namespace, while it is on a node

    def ns(self, node: str) -> str:
        return f"{PREFIX}{self.run_id}-{node}"

    def address(self, node: str) -> str:
        return f"{self.subnet}.{self.nodes[node]}"

    def create(self) -> None:
        switch = self.ns(SWITCH)
        _ip("netns", "add", switch)
        self.created.append(switch)
        _ip("-n", switch, "link", "add", BRIDGE, "type", "bridge")
        _ip("-n", switch, "link", "set", BRIDGE, "up")
        for node in self.nodes:
            name = self.ns(node)
            _ip("netns", "add", name)
            self.created.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
            # One end on the bridge, the other the node's eth0.
            _ip("-n", switch, "link", "add", node, "type", "veth", "peer", "name", "eth0",
                "netns", name)  # fmt: skip
            _ip("-n", switch, "link", "set", node, "master", BRIDGE, "up")
            _ip("-n", name, "addr", "add", f"{self.address(node)}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")

    def enter(self, node: str) -> None:
        """Move this thread (and every thread and process it starts from now on) onto the
        node."""
        if self._home is None:
            self._home = os.open("/proc/self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.ns(node)}", os.O_RDONLY)
        try:
            os.setns(fd, os.CLONE_NEWNET)
        finally:
            os.close(fd)

    def leave(self) -> None:
        """Back to the namespace this process started in (before the nodes are removed)."""
        if self._home is not None:
            os.setns(self._home, os.CLONE_NEWNET)
            os.close(self._home)
            self._home = None

    def start(
        self,
        node: str,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        user: str | None = None,
    ) -> Process:
        """Run `argv` on the node (its own hostname, logs in the run folder), as `user` if given."""
        as_user = ["runuser", "-u", user, "--"] if user else []
        command = [
            "ip", "netns", "exec", self.ns(node),
            "unshare", "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', node,
            *as_user, *argv,
        ]  # fmt: skip
        log = self.run_dir / "logs" / f"{node}-{name}-{len(self.processes)}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        handle = log.open("wb")
        popen = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process = Process(node=node, name=name, popen=popen, log=log, _file=handle)
        self.processes.append(process)
        return process

    def of(self, node: str) -> list[Process]:
        return [p for p in self.processes if p.node == node]

    def pids(self, node: str) -> list[int]:
        return _pids_in(self.ns(node))

    def kill(self, node: str, *, known: Sequence[int] = ()) -> None:
        """SIGKILL every process on the node at once, as when its machine is lost (the node's
        address stays up, so connections to it are refused rather than left hanging). The
        `known` pids (listed beforehand) die first, without the time it takes to list them."""
        for pid in known:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _kill_all_in(self.ns(node))
        for process in self.of(node):
            try:
                process.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def destroy(self) -> None:
        for name in reversed(self.created):
            _remove(name)
        self.created.clear()
        for process in self.processes:
            if process.popen.poll() is None:
                try:
                    os.killpg(process.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            process.close()
