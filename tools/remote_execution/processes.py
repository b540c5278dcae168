"""The cluster's processes: ports, log tails, and process trees (a worker is
one process group; stopping it stops every descendant)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def say(msg: str) -> None:
    print(f"cluster: {msg}", file=sys.stderr, flush=True)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def here(fn: Callable[[], T]) -> T:
    """fn() in this process's own network namespace."""
    return fn()


def wait_for_port(
    port: int,
    proc: subprocess.Popen,
    what: str,
    log: Path,
    timeout: float = 120,
    host: str = "127.0.0.1",
    in_netns: Callable[[Callable[[], None]], None] = here,
) -> None:
    """Waits until `host:port` takes connections, as seen from the network
    namespace `in_netns` runs its function in (default: ours)."""

    def connect() -> None:
        socket.create_connection((host, port), timeout=1).close()

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            in_netns(connect)
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}:\n{tail(log)}")
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on {host}:{port} within {timeout:.0f} s:\n{tail(log)}")


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


@dataclass
class Worker:
    name: str
    directory: Path
    properties: dict[str, str]
    proc: subprocess.Popen | None = None

    @property
    def pgid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def running_actions(self) -> list[int]:
        """pids of this worker's runners (buildbox-run-hosttools): its actions in flight."""
        return [pid for pid in descendants(self.proc.pid) if comm(pid).startswith("buildbox-run")]


def processes() -> dict[int, int]:
    """{pid: parent pid} of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The parent is the 2nd field after the parenthesised command name.
            table[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return table


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, parent in processes().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def start_time(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def kill_tree(pid: int) -> None:
    """SIGKILL to a process and all its descendants, whatever process group or
    session they moved to (buildbox-worker starts each runner in a group of its
    own). The tree is stopped first so that nothing forks or is re-parented
    half way."""
    stopped: dict[int, int | None] = {}
    while True:
        new = [p for p in [pid, *descendants(pid)] if p not in stopped]
        if not new:
            break
        for p in new:
            stopped[p] = start_time(p)
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGSTOP)
    for p, started in stopped.items():
        if started is not None and start_time(p) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def stop_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, grace: float = 10) -> None:
    """`sig` to the process, then SIGKILL to whatever is left of its tree after `grace` s."""
    tree = {p: start_time(p) for p in [proc.pid, *descendants(proc.pid)]}
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    if proc.poll() is None:
        kill_tree(proc.pid)
    # Descendants re-parented when their parent exited.
    for p, started in tree.items():
        if started is not None and start_time(p) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
