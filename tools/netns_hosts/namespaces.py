"""What netns_hosts knows of this machine's network namespaces: the processes
in each (to stop a host's, or those of a run whose caller died) and which
RFC 5737 test network is free for a new run."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import subprocess
import time
from pathlib import Path

# RFC 5737: documentation and test networks, never routed on the internet.
TEST_NETS = tuple(ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))
# The alias on each host's loopback names its run and caller (see sweep_stale).
ALIAS_PREFIX = "netns_hosts "
STOP_GRACE_S = 5.0
KILL_WAIT_S = 10.0


class HostsError(RuntimeError):
    """The hosts could not be made or a command on them failed."""


def run_checked(argv: list[str], what: str) -> str:
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise HostsError(f"{what} failed (exit {out.returncode}): {' '.join(argv)}\n{out.stderr.strip()}")
    return out.stdout


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a pid from its reuse)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def pids_by_netns() -> dict[int, list[int]]:
    """{network namespace inode: pids in it}, for every process."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            inode = netns_inode(int(entry.name))
            if inode is not None:
                found.setdefault(inode, []).append(int(entry.name))
    return found


def kill_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def reap(proc: subprocess.Popen | None) -> None:
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)


def kill_netns(inode: int, spare: set[int] = frozenset(), grace: float = STOP_GRACE_S) -> list[int]:
    """SIGTERM to every process in the network namespace `inode` (but `spare`),
    SIGKILL to those left after `grace` s, until none is left. Returns the pids.
    Raises HostsError if some survive SIGKILL for 10 s (stuck in the kernel)."""
    killed: set[int] = set()
    deadline = time.monotonic() + grace
    sig = signal.SIGTERM
    while True:
        pids = [p for p in pids_by_netns().get(inode, []) if p not in spare]
        if not pids:
            return sorted(killed)
        if time.monotonic() > deadline + KILL_WAIT_S:
            raise HostsError(f"processes {pids} of a host survived SIGKILL for {KILL_WAIT_S:.0f} s")
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        kill_all([p for p in pids if sig == signal.SIGKILL or p not in killed], sig)
        killed.update(pids)
        time.sleep(0.05)


def sweep_stale() -> list[str]:
    """Kills the processes of hosts whose run's caller is gone (SIGKILLed):
    namespaces whose loopback carries a netns_hosts alias naming a dead
    caller. Returns one line per namespace swept."""
    swept = []
    own = netns_inode(os.getpid())
    for inode, pids in pids_by_netns().items():
        if inode == own:
            continue
        alias = None
        for pid in pids:  # any process of the namespace will do; it may exit meanwhile
            out = subprocess.run(
                ["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-j", "link", "show", "dev", "lo"],
                capture_output=True,
                text=True,
            )
            if out.returncode == 0:
                alias = (json.loads(out.stdout) or [{}])[0].get("ifalias", "")
                break
        if not alias or not alias.startswith(ALIAS_PREFIX):
            continue
        fields = dict(item.split("=", 1) for item in alias[len(ALIAS_PREFIX) :].split() if "=" in item)
        pid_text, _, start_text = fields.get("caller", "").partition(":")
        if pid_text.isdigit() and start_text.isdigit() and start_time(int(pid_text)) == int(start_text):
            continue  # its caller still runs: not stale
        killed = kill_netns(inode, grace=1.0)
        swept.append(f"run {fields.get('run', '?')} ({fields.get('host', '?')}): killed pids {killed}")
    return swept


def networks_in_use() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The networks of this namespace's own addresses and routes."""
    found = []
    addresses = json.loads(run_checked(["ip", "-j", "addr", "show"], "listing this machine's addresses"))
    for interface in addresses:
        for a in interface.get("addr_info", []):
            found.append(ipaddress.ip_interface(f"{a['local']}/{a['prefixlen']}").network)
    for route in json.loads(run_checked(["ip", "-j", "route", "show"], "listing this machine's routes")):
        if route.get("dst", "default") != "default":
            found.append(ipaddress.ip_network(route["dst"], strict=False))
    return found


def free_test_subnet() -> str:
    """The first RFC 5737 range that no address or route of this machine overlaps."""
    in_use = networks_in_use()
    for net in TEST_NETS:
        if not any(net.overlaps(other) for other in in_use if other.version == net.version):
            return str(net)
    raise HostsError(f"this machine's own network overlaps every RFC 5737 range ({', '.join(map(str, TEST_NETS))})")
