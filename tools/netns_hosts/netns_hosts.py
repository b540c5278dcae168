"""Several hosts on this one machine: network namespaces on a private bridge.

    tools/bazel run //tools/netns_hosts -- [--hosts N] [--subnet CIDR] [--on K -- COMMAND...]

Host k (1..N) is a network namespace with its own address (the k-th of a
subnet reserved for documentation and tests, RFC 5737: by default the first
of 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24 that this machine's own
network does not use; a virtual machine may well sit on 192.0.2.0/24), its own hostname
(`hostK`, a UTS namespace), its own /tmp (a tmpfs in a mount namespace of its
own) and its own loopback. The hosts are joined by a bridge that lives in a
namespace of its own (the "fabric"): every host has one link, a veth pair
whose other end is a port of that bridge. No namespace has a default route
and the fabric has no uplink, so nothing a host sends leaves the machine, and
nothing is added to the caller's own network namespace.

From Python:

    with Hosts(3) as hosts:
        server = hosts.host(1).popen(["python3", "-m", "http.server", "--bind", hosts.host(1).address])
        hosts.host(2).run(["ping", "-c1", hosts.host(1).address], check=True)
        hosts.host(1).cut()       # its link down at the bridge, mid-run
        hosts.host(1).restore()   # and up again

A process runs "on host k" through nsenter into the namespaces of that
host's holder process (`Host.command`); it sees the same files as the caller
(including the same root, e.g. the toolchain root of tools/bazel) except /tmp,
where it sees only what the caller shares (`Hosts(shared=[...])`, `--share`:
a checkout under /tmp, say) at the same path.

Each namespace is held by one process (`sleep infinity`) that dies with the
thread that made it (PR_SET_PDEATHSIG). Stopping (normal exit, an exception in
the `with` block, SIGTERM or SIGINT through the CLI or `terminate_on_signals`)
kills every process in each host's network namespace, whatever its parentage,
then the holders, and the namespaces and links vanish with them. After a
SIGKILL of the caller, the holders still die, but processes started on a host
keep its namespace alive: each host marks its loopback with the run's id and
the caller's pid and start time (an interface alias), and every `Hosts.start`
first sweeps the namespaces whose caller is gone, killing what runs in them.

Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2, util-linux (unshare,
nsenter, setpriv) and, for pings, iputils-ping: all in the toolchain root.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from namespaces import (
    ALIAS_PREFIX,
    TEST_NETS,
    HostsError,
    free_test_subnet,
    kill_netns,
    networks_in_use,
    pids_by_netns,
    reap,
    run_checked,
    start_time,
    sweep_stale,
)

# Interface names: "nh" + run id (6 hex) + "br" | "e<k>" (the host's end) | "f<k>" (the bridge's end).
IFNAME_PREFIX = "nh"
MAX_HOSTS = 99  # keeps every interface name within IFNAMSIZ (15)

T = TypeVar("T")

# A host's setup in its new UTS and mount namespaces ($2: its name, $3: the
# size of its /tmp, $4: an empty staging directory under /tmp, then the paths
# under /tmp that it shares with the caller). The tmpfs on /tmp must not
# propagate back to the caller's /tmp: every mount is made private first, or,
# chrooted (the toolchain root of tools/bazel, where "/" is no mount point),
# the /tmp mount at least. The tmpfs is made at the staging directory, the
# shared paths are bound into it while they are still in sight, and it is
# then moved onto /tmp.
PRIVATE_TMP = """hostname "$2"
if ! mount --make-rprivate / 2>/dev/null; then
  if ! mountpoint -q /tmp; then
    echo "cannot give $2 a private /tmp: neither / nor /tmp is a mount point here" >&2
    exit 1
  fi
  mount --make-rprivate /tmp
fi
stage="$4"
mount -t tmpfs -o "mode=1777,size=$3" "netns-hosts-$2-tmp" "$stage"
shift 4
for path in "$@"; do
  mkdir -p "$stage${path#/tmp}"
  mount --bind "$path" "$stage${path#/tmp}"
done
mount --move "$stage" /tmp"""


def _in_netns(netns_fd: int, fn: Callable[[], T]) -> T:
    """fn() on a thread of its own inside the network namespace of netns_fd
    (setns changes only the calling thread's); a socket made there stays there."""
    if not hasattr(os, "setns"):
        raise HostsError(
            "running a function in a host's network needs Python 3.12 or later (os.setns);"
            f" this is {sys.version.split()[0]}"
        )
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            os.setns(netns_fd, os.CLONE_NEWNET)
            result.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            error.append(e)

    thread = threading.Thread(target=target, name="netns_hosts.in_netns")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


@dataclass
class Host:
    """Host k: its namespaces (held by `holder`), address and link."""

    index: int
    name: str
    address: str
    prefixlen: int
    interface: str  # its end of the link, inside the host
    port: str  # the other end: a port of the bridge, in the fabric
    fabric: Callable[[], int]  # the fabric holder's pid
    holder: subprocess.Popen | None = None
    netns: int | None = None  # the network namespace's inode
    # Held open from start to stop: the namespace (and so its inode, by which
    # its processes are found) cannot be freed and reused by another meanwhile.
    netns_fd: int | None = None

    @property
    def pid(self) -> int:
        if self.holder is None or self.holder.poll() is not None:
            raise HostsError(f"{self.name} is not running")
        return self.holder.pid

    def command(self, argv: list[str], cwd: str | os.PathLike | None = None) -> list[str]:
        """argv as a command that runs on this host: in its network, UTS and
        mount namespaces, with the holder's root, in `cwd` (default: ours)."""
        wd = os.fspath(cwd) if cwd is not None else os.getcwd()
        return ["nsenter", "-t", str(self.pid), "--net", "--uts", "--mount", "--root", f"--wd={wd}", "--", *argv]

    def popen(self, argv: list[str], cwd: str | os.PathLike | None = None, **kwargs) -> subprocess.Popen:
        return subprocess.Popen(self.command(argv, cwd), **kwargs)

    def run(self, argv: list[str], cwd: str | os.PathLike | None = None, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(argv, cwd), **kwargs)

    def in_netns(self, fn: Callable[[], T]) -> T:
        """fn() with this host's network (sockets it makes are this host's); files as ours."""
        if self.netns_fd is None:
            raise HostsError(f"{self.name} is not running")
        return _in_netns(self.netns_fd, fn)

    def pids(self) -> list[int]:
        """Every process on this host (in its network namespace), the holder included."""
        return sorted(pids_by_netns().get(self.netns, [])) if self.netns is not None else []

    def _link(self, state: str) -> None:
        run_checked(
            ["nsenter", f"--net=/proc/{self.fabric()}/ns/net", "ip", "link", "set", "dev", self.port, state],
            f"setting {self.name}'s link {state}",
        )

    def cut(self) -> None:
        """Its link goes down at the bridge: the host and its processes run on,
        and can reach no other host, nor any other host it."""
        self._link("down")

    def restore(self) -> None:
        self._link("up")

    def link_up(self) -> bool:
        out = run_checked(
            ["nsenter", f"--net=/proc/{self.fabric()}/ns/net", "ip", "-j", "link", "show", "dev", self.port],
            f"reading {self.name}'s link",
        )
        return "UP" in json.loads(out)[0].get("flags", [])


@dataclass
class Hosts:
    """N hosts on a private bridge; `start()` (or `with`) makes them, `stop()` removes them."""

    count: int
    subnet: str = ""  # default: free_test_subnet()
    tmp_size: str = "1g"  # each host's /tmp (tmpfs; only what is written uses memory)
    # Paths under the caller's /tmp that every host sees too, at the same path
    # (a checkout in /tmp, say); the rest of each host's /tmp is its own.
    shared: list[str] = field(default_factory=list)
    run_id: str = field(default_factory=lambda: secrets.token_hex(3))
    hosts: list[Host] = field(default_factory=list)
    fabric_holder: subprocess.Popen | None = None
    swept: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.subnet = self.subnet or free_test_subnet()
        network = ipaddress.ip_network(self.subnet)
        if not any(network.subnet_of(net) for net in TEST_NETS if net.version == network.version):
            raise ValueError(
                f"subnet {self.subnet} is not within a range reserved for tests (RFC 5737:"
                f" {', '.join(map(str, TEST_NETS))}): the hosts' addresses must never be real ones"
            )
        clash = [str(other) for other in networks_in_use() if other.version == 4 and network.overlaps(other)]
        if clash:
            raise ValueError(
                f"subnet {self.subnet} overlaps this machine's own network ({', '.join(clash)}):"
                f" take another RFC 5737 range, e.g. {free_test_subnet()}"
            )
        shared = [Path(path).resolve() for path in self.shared]
        for path in shared:
            if not path.is_dir():
                raise ValueError(f"shared path {path} is not a directory")
        self.shared = [str(path) for path in shared if Path("/tmp") in path.parents]
        if not 1 <= self.count <= min(MAX_HOSTS, network.num_addresses - 2):
            raise ValueError(f"{self.count} hosts: between 1 and {min(MAX_HOSTS, network.num_addresses - 2)} fit")
        self._network = network

    def host(self, k: int) -> Host:
        """Host k, counted from 1."""
        if not 1 <= k <= len(self.hosts):
            raise IndexError(f"host {k}: there are hosts 1..{len(self.hosts)}")
        return self.hosts[k - 1]

    def __iter__(self) -> Iterator[Host]:
        return iter(self.hosts)

    def _alias(self, host: str) -> str:
        pid = os.getpid()
        return f"{ALIAS_PREFIX}run={self.run_id} host={host} caller={pid}:{start_time(pid)}"

    def _holder(self, name: str, namespaces: list[str], setup: str, *args: str) -> subprocess.Popen:
        """A process in new namespaces that runs `setup` (sh), says ready and
        sleeps; it dies with the thread that made it."""
        proc = subprocess.Popen(
            [
                "setpriv",
                "--pdeathsig",
                "KILL",
                "--",
                "unshare",
                *namespaces,
                # Made private by the setup script: "/" is no mount point in a chroot.
                "--propagation",
                "unchanged",
                "--",
                "/bin/sh",
                "-euc",
                'ip link set lo up\nip link set lo alias "$1"\n' + setup + "\necho ready\nexec sleep infinity",
                name,
                *args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = proc.stdout.readline()
        proc.stdout.close()
        if line.strip() != "ready":
            proc.kill()
            _, err = proc.communicate()
            raise HostsError(f"could not make {name}'s namespaces (exit {proc.returncode}):\n{err.strip()}")
        proc.stderr.close()
        return proc

    def start(self) -> Hosts:
        try:
            self.swept = sweep_stale()
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        bridge = f"{IFNAME_PREFIX}{self.run_id}br"
        self.fabric_holder = self._holder("fabric", ["--net"], "", self._alias("fabric"))
        fabric = f"--net=/proc/{self.fabric_holder.pid}/ns/net"
        run_checked(["nsenter", fabric, "ip", "link", "add", bridge, "type", "bridge"], "making the bridge")
        run_checked(["nsenter", fabric, "ip", "link", "set", bridge, "up"], "bringing the bridge up")
        for k in range(1, self.count + 1):
            name = f"host{k}"
            host = Host(
                index=k,
                name=name,
                address=str(self._network.network_address + k),
                prefixlen=self._network.prefixlen,
                interface=f"{IFNAME_PREFIX}{self.run_id}e{k}",
                port=f"{IFNAME_PREFIX}{self.run_id}f{k}",
                fabric=lambda: self.fabric_holder.pid,
            )
            # Empty in the caller's /tmp, hidden under the host's: removed once the host is up.
            stage = tempfile.mkdtemp(prefix=f".netns-hosts-{self.run_id}-{name}-", dir="/tmp")
            try:
                host.holder = self._holder(
                    name,
                    ["--net", "--uts", "--mount"],
                    PRIVATE_TMP,
                    self._alias(name),
                    name,
                    self.tmp_size,
                    stage,
                    *self.shared,
                )
            finally:
                os.rmdir(stage)
            self.hosts.append(host)
            host.netns_fd = os.open(f"/proc/{host.holder.pid}/ns/net", os.O_RDONLY)
            host.netns = os.fstat(host.netns_fd).st_ino
            run_checked(
                [
                    "nsenter",
                    fabric,
                    "ip",
                    "link",
                    "add",
                    host.port,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    host.interface,
                    "netns",
                    str(host.holder.pid),
                ],
                f"making {name}'s link",
            )
            run_checked(
                ["nsenter", fabric, "ip", "link", "set", host.port, "master", bridge, "up"],
                f"plugging {name} into the bridge",
            )
            inside = f"--net=/proc/{host.holder.pid}/ns/net"
            run_checked(
                ["nsenter", inside, "ip", "addr", "add", f"{host.address}/{host.prefixlen}", "dev", host.interface],
                f"addressing {name}",
            )
            run_checked(["nsenter", inside, "ip", "link", "set", host.interface, "up"], f"bringing {name}'s link up")

    def stop(self) -> None:
        """Every process on every host, then the holders: the namespaces and
        links go with them. A host whose processes will not die does not keep
        the others: it is named in the HostsError raised at the end."""
        stuck = []
        for host in reversed(self.hosts):
            try:
                if host.netns is not None and host.holder is not None:
                    kill_netns(host.netns, spare={host.holder.pid})
                if host.holder is not None:
                    with contextlib.suppress(ProcessLookupError):
                        host.holder.kill()
                    reap(host.holder)
                if host.netns is not None:
                    kill_netns(host.netns, grace=0)  # anything that entered as the holder died
            except HostsError as e:
                stuck.append(f"{host.name}: {e}")
            if host.netns_fd is not None:
                os.close(host.netns_fd)  # the last reference: the namespace and its link go
                host.netns_fd = None
        self.hosts.clear()
        if self.fabric_holder is not None:
            with contextlib.suppress(ProcessLookupError):
                self.fabric_holder.kill()
            reap(self.fabric_holder)
            self.fabric_holder = None
        if stuck:
            raise HostsError("; ".join(stuck))

    def __enter__(self) -> Hosts:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def terminate_on_signals() -> None:
    """SIGTERM (and SIGINT) raise KeyboardInterrupt in the main thread, so a
    `with Hosts(...)` block unwinds and removes the hosts."""

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=2, help="how many hosts (default 2)")
    ap.add_argument(
        "--subnet",
        default="",
        help="within RFC 5737's ranges (default: the first of them this machine's own network does not use)",
    )
    ap.add_argument("--on", type=int, default=1, metavar="K", help="the host COMMAND runs on (default 1)")
    ap.add_argument(
        "--share",
        action="append",
        default=[],
        metavar="PATH",
        help="a directory under /tmp every host sees too, at the same path (repeatable)",
    )
    ap.add_argument("--sweep", action="store_true", help="only remove what SIGKILLed runs left, and exit")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...: run it on host K, then stop")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    if args.sweep:
        for line in sweep_stale():
            print(f"netns_hosts: swept {line}", flush=True)
        return 0
    terminate_on_signals()
    try:
        with Hosts(args.hosts, args.subnet, shared=args.share) as hosts:
            print(f"netns_hosts: run {hosts.run_id}, {args.hosts} hosts on {hosts.subnet}", flush=True)
            for line in hosts.swept:
                print(f"netns_hosts: swept {line}", flush=True)
            for host in hosts:
                print(
                    f"{host.name} {host.address}/{host.prefixlen} (holder pid {host.holder.pid}:"
                    f" nsenter -t {host.holder.pid} --net --uts --mount --root)",
                    flush=True,
                )
            if command:
                return hosts.host(args.on).run(command).returncode
            print("netns_hosts: until interrupted (Ctrl-C or SIGTERM removes the hosts)", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        print("netns_hosts: interrupted; hosts removed", flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
