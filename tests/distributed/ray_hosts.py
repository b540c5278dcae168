"""A Ray cluster on namespace hosts (tools/netns_hosts), as docs/DISTRIBUTED.md
says to start one on real machines: `ray start --head` on host1, `ray start
--address=...` on the others, each offering its modrt devices as Ray
resources. Shared by tests/distributed/hosts_test.py and the distributed rows
of tools/bench; `ray_environment` is also what a driver subprocess of a local
cluster needs (faults_test.py)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from netns_hosts import Host, Hosts

RAY_PORT = 6379
# Ray's GCS declares a node dead after failed health checks: 5 of 3 s period
# and 10 s timeout each by default (a cut host took 65 s here), 3 of 1 s here
# (docs/DISTRIBUTED.md).
HEALTH_CHECKS = {"health_check_period_ms": 1000, "health_check_timeout_ms": 1000, "health_check_failure_threshold": 3}


def ray_environment(*extra_paths: str) -> dict[str, str]:
    """This process's environment for Ray's processes and drivers started
    from it: Ray (the toolchain root's, found by modrt.distributed) and
    `extra_paths` on PYTHONPATH, no usage stats, and a token of this
    cluster's own (Ray 2.60 authenticates every node and driver with one;
    not ~/.ray/auth_token, which other Ray clusters on this machine may have
    written)."""
    import modrt.distributed._cluster as cluster_module

    cluster_module.import_ray()  # Ray on sys.path, and so on PYTHONPATH below
    paths = [*extra_paths, *[p for p in sys.path if p and os.path.isdir(p)]]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }


def ray_start(host: Host, *args: str, env: dict[str, str]) -> None:
    proc = host.run(
        [sys.executable, "-m", "ray.scripts.scripts", "start", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, f"ray start on {host.name}:\n{proc.stdout}\n{proc.stderr}"


def resources_on(host: Host, env: dict[str, str], workers_per_device: int, only: Sequence[str] | None = None) -> str:
    """`python -m modrt.distributed resources` on `host`, keeping the kinds in `only`."""
    proc = host.run(
        [sys.executable, "-m", "modrt.distributed", "resources", "--workers-per-device", str(workers_per_device)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    offered = json.loads(proc.stdout)
    return json.dumps({k: v for k, v in offered.items() if only is None or k.removeprefix("modrt_") in only})


@contextlib.contextmanager
def ray_cluster(
    offers: Sequence[Sequence[str] | None],
    workers_per_device: int = 1,
    paths: Sequence[str] = (),
    share: Sequence[str] = (),
) -> Iterator[tuple[Hosts, dict[str, str], str]]:
    """len(offers) + 1 hosts: host k (1..len(offers)) a Ray node offering the
    device kinds offers[k-1] of those it has (None: all), host1 the head; the
    last host a Ray node offering nothing, for the driver. Yields the hosts,
    the environment for processes on them (`paths` first on PYTHONPATH),
    and the head's address. The hosts see this checkout and `share` where
    the caller does, even under /tmp (each host's /tmp is its own)."""
    env = ray_environment(*paths)
    # The runfiles point into the checkout; a checkout under /tmp (a CI's clean
    # clone) must stay in sight of the hosts, whose /tmp is their own.
    checkout = Path(importlib.util.find_spec("modrt").origin).resolve().parents[2]
    with Hosts(len(offers) + 1, shared=list(dict.fromkeys([str(checkout), *share]))) as hosts:
        common = ["--num-cpus=1", "--object-store-memory=100000000"]
        head = hosts.host(1)
        address = f"{head.address}:{RAY_PORT}"
        for k, kinds in enumerate(offers, start=1):
            host = hosts.host(k)
            where = (
                [
                    "--head",
                    f"--port={RAY_PORT}",
                    "--include-dashboard=false",
                    f"--system-config={json.dumps(HEALTH_CHECKS)}",
                ]
                if k == 1
                else [f"--address={address}"]
            )
            resources = resources_on(host, env, workers_per_device, kinds)
            ray_start(host, *where, f"--node-ip-address={host.address}", f"--resources={resources}", *common, env=env)
        driver = hosts.host(len(offers) + 1)
        ray_start(driver, f"--address={address}", f"--node-ip-address={driver.address}", *common, env=env)
        yield hosts, env, address


# What a driver on a namespace host runs first: the hosts share one PID
# namespace, so Ray's driver, looking for its node's raylet among the
# processes it sees, would take host1's (the head's) for its own; it is told
# its address instead, and the session joins that Ray.
DRIVER_PRELUDE = r"""
import sys
import modrt.distributed._cluster as cluster_module
cluster_module.import_ray().init(address=sys.argv[1], _node_ip_address=sys.argv[2], logging_level="WARNING")
"""
