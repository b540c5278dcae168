"""Hosts on this machine, for real: namespaces, pings, a cut link, and cleanup
after a normal exit, an exception, SIGTERM and SIGKILL."""

import errno
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import namespaces
import netns_hosts as nh
import pytest

CLI = [sys.executable, str(Path(nh.__file__).resolve())]


def own_interfaces() -> list[str]:
    return sorted(name for _, name in socket.if_nameindex())


def ping(host: nh.Host, address: str) -> bool:
    return host.run(["ping", "-n", "-c", "1", "-W", "2", address], capture_output=True).returncode == 0


def ip_json(host: nh.Host, *args: str) -> list[dict]:
    return json.loads(host.run(["ip", "-j", *args], capture_output=True, text=True, check=True).stdout)


def alive(pid: int, started: int | None) -> bool:
    return started is not None and namespaces.start_time(pid) == started


def interfaces_of_run(run_id: str) -> list[str]:
    """Every interface anywhere on the machine whose name is of this run."""
    found = []
    for pids in namespaces.pids_by_netns().values():
        out = subprocess.run(
            ["nsenter", f"--net=/proc/{pids[0]}/ns/net", "ip", "-j", "link", "show"], capture_output=True, text=True
        )
        if out.returncode == 0:
            found += [i["ifname"] for i in json.loads(out.stdout) if i["ifname"].startswith(f"nh{run_id}")]
    return found


def wait_until(condition, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_each_host_has_its_own_address_hostname_and_tmp_and_reaches_the_others():
    before = own_interfaces()
    marker = f"netns_hosts_test.{os.getpid()}"
    # A directory under the caller's /tmp that the hosts share (a checkout there, say).
    shared = Path(tempfile.mkdtemp(prefix="netns_hosts_test.shared.", dir="/tmp"))
    (shared / "from-the-caller").write_text("caller\n")
    with nh.Hosts(3, shared=[str(shared)]) as hosts:
        base = ipaddress.ip_network(hosts.subnet).network_address
        assert [h.address for h in hosts] == [str(base + k) for k in (1, 2, 3)]
        for h in hosts:
            assert h.run(["hostname"], capture_output=True, text=True).stdout.strip() == h.name
            local = {a["local"] for i in ip_json(h, "-4", "addr", "show") for a in i["addr_info"]}
            assert local == {"127.0.0.1", h.address}

        one, two, three = hosts
        one.run(["sh", "-c", f"echo one > /tmp/{marker}"], check=True)
        assert one.run(["cat", f"/tmp/{marker}"], capture_output=True, text=True).stdout == "one\n"
        assert two.run(["test", "-e", f"/tmp/{marker}"]).returncode == 1
        assert not Path("/tmp", marker).exists()
        assert two.run(["cat", str(shared / "from-the-caller")], capture_output=True, text=True).stdout == "caller\n"
        three.run(["sh", "-c", f"echo three > {shared}/from-host3"], check=True)
        assert (shared / "from-host3").read_text() == "three\n"
        assert one.run(["cat", f"{shared}/from-host3"], capture_output=True, text=True).stdout == "three\n"
        assert not list(Path("/tmp").glob(f".netns-hosts-{hosts.run_id}-*")), "a staging directory was left"

        for a in hosts:
            for b in hosts:
                if a is not b:
                    assert ping(a, b.address), f"{a.name} cannot ping {b.name}"

        # A TCP connection between two hosts, from sockets made in their namespaces.
        server = one.in_netns(lambda: socket.create_server((one.address, 0)))
        with server:
            port = server.getsockname()[1]
            client = three.in_netns(lambda: socket.create_connection((one.address, port), timeout=5))
            with client:
                conn, (peer, _) = server.accept()
                with conn:
                    client.sendall(b"over the bridge")
                    assert conn.recv(64) == b"over the bridge"
            assert peer == three.address
        # Nothing was added to the caller's own namespace.
        assert own_interfaces() == before
    assert own_interfaces() == before
    assert sorted(p.name for p in shared.iterdir()) == ["from-host3", "from-the-caller"]
    shutil.rmtree(shared)


def test_nothing_a_host_sends_can_leave_the_machine():
    own_addresses = [
        a["local"]
        for i in json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True).stdout)
        for a in i["addr_info"]
        if not a["local"].startswith("127.")
    ]
    with nh.Hosts(2) as hosts:
        host = hosts.host(1)
        # One route, to the hosts' own subnet (and IPv6's link-local one, never routed): no default.
        routes = ip_json(host, "-4", "route", "show", "table", "all")
        assert [r["dst"] for r in routes if r.get("table") != "local"] == [hosts.subnet], routes
        assert all(r.get("dev") in (host.interface, "lo") for r in routes), routes
        routes6 = ip_json(host, "-6", "route", "show", "table", "all")
        assert {r["dst"] for r in routes6 if r.get("table") != "local"} <= {"fe80::/64"}, routes6

        def udp_connect(address: str) -> int:
            # connect() on UDP only looks up the route: nothing is sent.
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                try:
                    s.connect((address, 9))
                except OSError as e:
                    return e.errno
            return 0

        others = [str(n.network_address + 1) for n in namespaces.TEST_NETS if str(n) != hosts.subnet]
        assert len(others) == 2
        for address in [*others, *own_addresses]:
            assert host.in_netns(lambda a=address: udp_connect(a)) == errno.ENETUNREACH, address
        # The fabric holds the bridge and the hosts' ports, and no address at all.
        fabric = f"--net=/proc/{hosts.fabric_holder.pid}/ns/net"
        links = json.loads(
            subprocess.run(["nsenter", fabric, "ip", "-j", "addr"], capture_output=True, text=True).stdout
        )
        assert sorted(i["ifname"] for i in links) == sorted(["lo", f"nh{hosts.run_id}br", *(h.port for h in hosts)])
        assert [a["local"] for i in links for a in i["addr_info"] if a.get("family") == "inet"] == ["127.0.0.1"]


def test_a_cut_link_isolates_the_host_until_it_is_restored():
    with nh.Hosts(3) as hosts:
        one, two, three = hosts
        sleeper = two.popen(["sleep", "600"])
        assert ping(one, two.address)
        two.cut()
        assert not two.link_up()
        assert not ping(one, two.address)
        assert not ping(two, three.address)
        assert ping(one, three.address)
        assert sleeper.poll() is None  # the host runs on, cut off
        two.restore()
        assert two.link_up()
        assert wait_until(lambda: ping(one, two.address))


def test_stop_removes_every_process_and_link_after_an_exception_too():
    with pytest.raises(RuntimeError, match="in the block"), nh.Hosts(2) as hosts:
        run_id = hosts.run_id
        child = hosts.host(2).popen(["sleep", "600"])
        # A daemon that left its parent is found by its namespace all the same.
        hosts.host(1).run(["sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 &"], check=True)
        assert wait_until(lambda: len(hosts.host(1).pids()) == 2)
        processes = {p: namespaces.start_time(p) for h in hosts for p in h.pids()}
        processes[hosts.fabric_holder.pid] = namespaces.start_time(hosts.fabric_holder.pid)
        assert len(processes) == 5  # two holders, two sleeps, the fabric's holder
        assert interfaces_of_run(run_id)
        raise RuntimeError("in the block")
    assert child.wait(5) is not None
    assert not [p for p, started in processes.items() if alive(p, started)]
    assert interfaces_of_run(run_id) == []


def start_cli(*args: str) -> tuple[subprocess.Popen, str, dict[str, int]]:
    """The CLI with a command on host 2; returns it, its run id and {host: holder pid} once the command runs."""
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, text=True)
    run_id, holders = "", {}
    for line in proc.stdout:
        if line.startswith("netns_hosts: run "):
            run_id = line.split()[2].rstrip(",")
        if line.startswith("host"):
            holders[line.split()[0]] = int(line.split("holder pid ")[1].split(":")[0])
        if len(holders) == 2:
            break
    assert run_id and len(holders) == 2, (run_id, holders)
    return proc, run_id, holders


def sleeper_on(holder: int) -> int:
    """The `sleep 600` the CLI runs on the host of this holder."""
    inode = namespaces.netns_inode(holder)
    found: list[int] = []
    assert wait_until(
        lambda: found.extend(p for p in namespaces.pids_by_netns().get(inode, []) if p != holder) or found
    )
    return found[0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_cli_removes_the_hosts_when_terminated(sig):
    proc, run_id, holders = start_cli("--hosts", "2", "--on", "2", "--", "sleep", "600")
    sleeper = sleeper_on(holders["host2"])
    watched = {p: namespaces.start_time(p) for p in [sleeper, *holders.values()]}
    proc.send_signal(sig)
    assert proc.wait(30) == 130
    assert not [p for p, started in watched.items() if alive(p, started)]
    assert interfaces_of_run(run_id) == []


def test_after_a_sigkill_the_next_start_sweeps_what_was_left():
    proc, run_id, holders = start_cli("--hosts", "2", "--on", "2", "--", "sleep", "600")
    sleeper = sleeper_on(holders["host2"])
    started = namespaces.start_time(sleeper)
    proc.kill()
    proc.wait()
    # The holders die with their caller; what ran on a host outlives it and keeps its namespace.
    assert wait_until(lambda: not any(alive(p, namespaces.start_time(p)) for p in holders.values()))
    assert alive(sleeper, started)
    # The fabric went, so host 2's link went with it: the kernel removes a dead
    # namespace's interfaces in the background, later on a loaded machine.
    assert wait_until(lambda: interfaces_of_run(run_id) == [], timeout=60), interfaces_of_run(run_id)
    with nh.Hosts(1) as hosts:
        assert [line for line in hosts.swept if line.startswith(f"run {run_id} (host2)")], hosts.swept
    assert not alive(sleeper, started)


def test_only_test_networks_that_this_machine_does_not_use_are_accepted():
    for subnet in ["10.0.0.0/24", "192.168.1.0/24", "192.0.3.0/24", "0.0.0.0/0"]:
        with pytest.raises(ValueError, match="RFC 5737"):
            nh.Hosts(2, subnet)
    free = ipaddress.ip_network(namespaces.free_test_subnet())
    assert free in namespaces.TEST_NETS
    with pytest.raises(ValueError, match="hosts: between 1 and"):
        nh.Hosts(7, str(next(free.subnets(new_prefix=29))))
    assert nh.Hosts(2, str(free)).subnet == str(free)
    in_use = [
        n for n in namespaces.TEST_NETS if any(n.overlaps(o) for o in namespaces.networks_in_use() if o.version == 4)
    ]
    for net in in_use:  # this machine's own (a VM on 192.0.2.0/24, say)
        with pytest.raises(ValueError, match="overlaps this machine's own network"):
            nh.Hosts(2, str(net))
