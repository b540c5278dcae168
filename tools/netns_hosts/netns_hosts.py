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
(including the same root, e.g. the toolchain root of tools/bazel) except /tmp.

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
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

# RFC 5737: documentation and test networks, never routed on the internet.
TEST_NETS = tuple(ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))
ALIAS_PREFIX = "netns_hosts "
# Interface names: "nh" + run id (6 hex) + "br" | "e<k>" (the host's end) | "f<k>" (the bridge's end).
IFNAME_PREFIX = "nh"
MAX_HOSTS = 99  # keeps every interface name within IFNAMSIZ (15)
STOP_GRACE_S = 5.0
KILL_WAIT_S = 10.0

T = TypeVar("T")

# A host's setup in its new UTS and mount namespaces ($2: its name, $3: the
# size of its /tmp). The tmpfs on /tmp must not propagate back to the caller's
# /tmp: every mount is made private first, or, chrooted (the toolchain root of
# tools/bazel, where "/" is no mount point), the /tmp mount at least.
PRIVATE_TMP = """hostname "$2"
if ! mount --make-rprivate / 2>/dev/null; then
  if ! mountpoint -q /tmp; then
    echo "cannot give $2 a private /tmp: neither / nor /tmp is a mount point here" >&2
    exit 1
  fi
  mount --make-rprivate /tmp
fi
mount -t tmpfs -o "mode=1777,size=$3" "netns-hosts-$2-tmp" /tmp"""


class HostsError(RuntimeError):
    """The hosts could not be made or a command on them failed."""


def _run(argv: list[str], what: str) -> str:
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise HostsError(f"{what} failed (exit {out.returncode}): {' '.join(argv)}\n{out.stderr.strip()}")
    return out.stdout


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a pid from its reuse)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def _pids_by_netns() -> dict[int, list[int]]:
    """{network namespace inode: pids in it}, for every process."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            inode = _netns_inode(int(entry.name))
            if inode is not None:
                found.setdefault(inode, []).append(int(entry.name))
    return found


def _kill_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _reap(proc: subprocess.Popen | None) -> None:
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
        pids = [p for p in _pids_by_netns().get(inode, []) if p not in spare]
        if not pids:
            return sorted(killed)
        if time.monotonic() > deadline + KILL_WAIT_S:
            raise HostsError(f"processes {pids} of a host survived SIGKILL for {KILL_WAIT_S:.0f} s")
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        _kill_all([p for p in pids if sig == signal.SIGKILL or p not in killed], sig)
        killed.update(pids)
        time.sleep(0.05)


def sweep_stale() -> list[str]:
    """Kills the processes of hosts whose run's caller is gone (SIGKILLed):
    namespaces whose loopback carries a netns_hosts alias naming a dead
    caller. Returns one line per namespace swept."""
    swept = []
    own = _netns_inode(os.getpid())
    for inode, pids in _pids_by_netns().items():
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
        if pid_text.isdigit() and start_text.isdigit() and _start_time(int(pid_text)) == int(start_text):
            continue  # its caller still runs: not stale
        killed = kill_netns(inode, grace=1.0)
        swept.append(f"run {fields.get('run', '?')} ({fields.get('host', '?')}): killed pids {killed}")
    return swept


def networks_in_use() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The networks of this namespace's own addresses and routes."""
    found = []
    addresses = json.loads(_run(["ip", "-j", "addr", "show"], "listing this machine's addresses"))
    for interface in addresses:
        for a in interface.get("addr_info", []):
            found.append(ipaddress.ip_interface(f"{a['local']}/{a['prefixlen']}").network)
    for route in json.loads(_run(["ip", "-j", "route", "show"], "listing this machine's routes")):
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
        return sorted(_pids_by_netns().get(self.netns, [])) if self.netns is not None else []

    def _link(self, state: str) -> None:
        _run(
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
        out = _run(
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
        return f"{ALIAS_PREFIX}run={self.run_id} host={host} caller={pid}:{_start_time(pid)}"

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
                setup + '\nip link set lo up\nip link set lo alias "$1"\necho ready\nexec sleep infinity',
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
        _run(["nsenter", fabric, "ip", "link", "add", bridge, "type", "bridge"], "making the bridge")
        _run(["nsenter", fabric, "ip", "link", "set", bridge, "up"], "bringing the bridge up")
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
            host.holder = self._holder(
                name,
                ["--net", "--uts", "--mount"],
                PRIVATE_TMP,
                self._alias(name),
                name,
                self.tmp_size,
            )
            self.hosts.append(host)
            host.netns_fd = os.open(f"/proc/{host.holder.pid}/ns/net", os.O_RDONLY)
            host.netns = os.fstat(host.netns_fd).st_ino
            _run(
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
            _run(
                ["nsenter", fabric, "ip", "link", "set", host.port, "master", bridge, "up"],
                f"plugging {name} into the bridge",
            )
            inside = f"--net=/proc/{host.holder.pid}/ns/net"
            _run(
                ["nsenter", inside, "ip", "addr", "add", f"{host.address}/{host.prefixlen}", "dev", host.interface],
                f"addressing {name}",
            )
            _run(["nsenter", inside, "ip", "link", "set", host.interface, "up"], f"bringing {name}'s link up")

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
                    _reap(host.holder)
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
            _reap(self.fabric_holder)
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
        with Hosts(args.hosts, args.subnet) as hosts:
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
