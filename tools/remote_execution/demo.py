"""Builds and tests modrt on a BuildGrid cluster of two buildbox workers.

    tools/bazel run //tools/remote_execution:demo [-- [--hosts N [--gpu-hosts G]] TARGET_PATTERN...]   (default //...)

0. before any build, asks Bazel which of the tests need a GPU (exec_properties
   gpu or test.gpu, docs/BAZEL.md): if no worker declares what one needs, it
   stops there and names the test, since BuildGrid would keep it queued until
   such a worker joins, and the build would never end;
1. starts a cluster on 127.0.0.1 (cluster.py): BuildGrid and 2 workers; or,
   with --hosts N (N >= 4), across N hosts made on this machine
   (tools/netns_hosts: network namespaces on a private bridge): BuildGrid and
   its database on host 1, one worker on each of hosts 2..N-1 joining it
   (--join), and Bazel itself on host N, so that everything between them
   crosses the network, and nothing is shared on 127.0.0.1;
2. `bazel test PATTERNS --config=cpu-runtimes --config=remote-exec` from a clean
   output base (disk cache off): prints Bazel's process summary, the actions by
   kind and where they ran, the workers that ran them, and the test results;
   compiles, links and tests must have run remotely;
3. `bazel clean`, the same again: every action that may run remotely must come
   from the remote action cache (tests tagged "local", which run nested Bazel
   builds here and never use the cluster, are left out of this run and the next);
   with --hosts and G >= 1 worker hosts declaring gpu=cuda (the last G; default
   1), the GPU routing: the probe test that asks for gpu=cuda
   (//tools/remote_execution:gpu_property_probe_test) runs 4 times with
   --noremote_accept_cached, and every run must land on a host that declares it;
4. `bazel clean`, the same again with --noremote_accept_cached, and worker 0 is
   killed (SIGKILL to its whole process tree) while it runs an action, or, with
   --hosts, its host's link is cut (the host runs on, unreachable): the build
   must still succeed, the lost actions run again on another worker, and every
   action that ran again gave the same output bytes as in build 1, whichever
   host ran it;
5. stops the cluster.

Each build reports how many actions ran on each worker (and host).

The verdicts are told apart (verdicts.py): remote execution's own checks, each
build's outcome, and the tests that failed, by name. A failing test is a test
failure, not a remote-execution one: it is left out of the cache-hit count
(BuildGrid does not cache a failed action) and named on its own. Exits 0 only
if all of that held and every test passed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cluster as cl
import gpu_routing
from execution_log import digest_key, output_digests, read_execution_log
from hosts_cluster import HostsCluster
from netns_hosts import Hosts
from verdicts import BUILD, GPU_ROUTING, REMOTE_EXECUTION, RESULT, Verdicts, count_cache_hits

SUMMARY = re.compile(r"^INFO: \d+ process(?:es)?: .*$", re.M)
EXECUTED = re.compile(r"^(?:Executed \d+ out of \d+ tests?.*|There were tests whose specified size.*)$", re.M)


# Tests tagged "local" (nested Bazel builds) never use the cluster: they run
# in the first build and are left out of the second and third.
LOCAL_ONLY_LEFT_OUT = ["--test_tag_filters=-local"]
# A test's own outputs (its log, its XML report) carry timings: not compared.
NOT_REPRODUCIBLE = {"TestRunner"}
MIN_HOSTS = 4  # BuildGrid's, two workers', Bazel's


class Demo:
    def __init__(
        self,
        workspace: Path,
        patterns: list[str],
        scratch: Path,
        workers: int,
        env: dict[str, str] | None = None,
        hosts: int = 0,
        gpu_hosts: int = 0,
    ) -> None:
        self.workspace = workspace
        self.patterns = patterns
        self.scratch = scratch
        # Not under /tmp, like every cluster's state (see cluster.Cluster).
        self.state = cl.new_state_dir()
        self.host_count = hosts
        if hosts and hosts < MIN_HOSTS:
            raise ValueError(f"--hosts {hosts}: at least {MIN_HOSTS} (BuildGrid, two workers, Bazel), or 0")
        if gpu_hosts and not 0 < gpu_hosts <= hosts - 3:
            raise ValueError(f"--gpu-hosts {gpu_hosts}: between 1 and the {max(hosts - 3, 0)} worker hosts of --hosts")
        self.gpu_hosts = gpu_hosts
        self.cluster: cl.Cluster | HostsCluster = cl.Cluster(self.state, workers=workers, port=0)
        self.client = None  # the host Bazel runs on (None: this machine)
        self.first_spawns: list[dict] = []
        self.first_ran: dict[str, str] = {}
        self.bazel = ["bazel", f"--output_base={scratch}/output_base", "--max_idle_secs=120"]
        # Convenience links go to the scratch directory: `bazel clean` deletes
        # the links of its prefix, and with the default one those would be the
        # workspace's bazel-bin and bazel-out (--symlink_prefix=/ included).
        self.symlinks = f"--symlink_prefix={scratch}/bazel-"
        self.env = env  # Bazel's environment (default: this process's)
        self.verdicts = Verdicts()

    def check(self, ok: bool, what: str) -> bool:
        """A check of remote execution itself."""
        return self.verdicts.check(REMOTE_EXECUTION, ok, what)

    def flags(self, log: Path) -> list[str]:
        return [
            "--config=cpu-runtimes",
            "--config=remote-exec",
            f"--remote_executor={self.cluster.endpoint}",
            # The toolchain root sets a disk cache for every checkout; a hit
            # there would hide what the cluster did.
            "--disk_cache=",
            self.symlinks,
            "--color=no",
            "--curses=no",
            f"--execution_log_json_file={log}",
        ]

    def workers_alive(self, when: str) -> bool:
        """A worker that died on its own (not killed by the demo) is a failure."""
        dead = [w.name for w in self.cluster.worker_list if not w.alive()]
        return self.check(
            not dead,
            f"every worker still running {when}"
            + (f" (dead: {', '.join(dead)}; see their worker.log)" if dead else ""),
        )

    def bazel_test(self, name: str, extra: list[str] = ()) -> tuple[int, str, list[dict], float]:
        exec_log = self.scratch / f"{name}.exec.json"
        out_log = self.scratch / f"{name}.log"
        argv = [*self.bazel, "test", *self.flags(exec_log), *extra, "--", *self.patterns]
        print(f"   $ {' '.join(argv)}", flush=True)
        start = time.monotonic()
        with open(out_log, "w") as out:
            rc = self.run_bazel(argv, stdout=out, stderr=subprocess.STDOUT).returncode
        wall = time.monotonic() - start
        output = out_log.read_text(errors="replace")
        spawns = read_execution_log(exec_log) if exec_log.exists() else []
        print(f"   exit {rc} after {wall:.0f} s (log {out_log})", flush=True)
        for line in SUMMARY.findall(output)[-1:]:
            print(f"   {line}")
        return rc, output, spawns, wall

    def run_bazel(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        """argv (a Bazel command) in the workspace, on the client host if there is one."""
        if self.client is not None:
            return subprocess.run(self.client.command(argv, self.workspace), env=self.env, **kwargs)
        return subprocess.run(argv, cwd=self.workspace, env=self.env, **kwargs)

    def clean(self) -> None:
        self.run_bazel([*self.bazel, "clean", self.symlinks], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def show_spawns(self, spawns: list[dict]) -> Counter:
        by_kind = Counter((s.get("mnemonic", "?"), s.get("runner", "?")) for s in spawns)
        print("   actions by kind and where they ran:")
        for (mnemonic, runner), n in sorted(by_kind.items()):
            print(f"     {mnemonic:<24} {runner:<18} {n:>5}")
        return by_kind

    def where(self, worker: str | None) -> str:
        """The host a worker runs on (with --hosts), else the worker itself."""
        host = self.cluster.host_of(worker) if isinstance(self.cluster, HostsCluster) and worker else None
        return host.name if host is not None else worker or "?"

    def show_workers(self, spawns: list[dict], since: float) -> dict[str, str]:
        """Which worker ran each remotely executed action of this build (BuildGrid's record)."""
        jobs = {digest: worker for digest, worker, _, _ in self.cluster.jobs(since)}
        ran = {digest_key(s): jobs.get(digest_key(s), "?") for s in spawns if s.get("runner") == "remote"}
        for worker, n in sorted(Counter(ran.values()).items()):
            host = self.cluster.host_of(worker) if isinstance(self.cluster, HostsCluster) else None
            on = f"{host.name} ({host.address}), worker {worker}" if host is not None else worker
            print(f"     on {on}: {n} actions")
        return ran

    def workspace_links(self) -> dict[str, str]:
        """The workspace's convenience links (bazel-bin, bazel-out, ...) and their targets."""
        return {p.name: os.readlink(p) for p in self.workspace.glob("bazel-*") if p.is_symlink()}

    def run(self) -> int:
        t0 = time.monotonic()
        links = self.workspace_links()
        with contextlib.ExitStack() as stack:
            if self.host_count:
                # A checkout under /tmp (a CI's clean clone) stays in sight on every host:
                # Bazel runs in it, the workers run its runner.sh.
                hosts = stack.enter_context(Hosts(self.host_count, shared=[str(self.workspace)]))
                print(f"== {self.host_count} hosts on this machine (tools/netns_hosts, {hosts.subnet}):", flush=True)
                server, *workers, self.client = hosts
                self.cluster = HostsCluster(self.state, server, workers, gpu_hosts=self.gpu_hosts)
                print(f"   {server.name} {server.address}: BuildGrid and its database")
                for i, host in enumerate(workers):
                    gpu = f", declaring {cl.GPU_PROPERTY}=cuda" if i >= len(workers) - self.gpu_hosts else ""
                    print(f"   {host.name} {host.address}: a buildbox worker{gpu}, joining BuildGrid on {server.name}")
                print(f"   {self.client.name} {self.client.address}: Bazel", flush=True)
            else:
                print(
                    f"== starting a cluster: BuildGrid and {self.cluster.workers} buildbox workers on 127.0.0.1",
                    flush=True,
                )
            stack.enter_context(self.cluster)
            print(f"   remote executor {self.cluster.endpoint}, instance {cl.INSTANCE}")
            if gpu_routing.tests_served(self):
                self.first()
                self.second()
                if self.gpu_hosts:
                    gpu_routing.check_routing(self)
                self.third()
            print("== stopping the cluster", flush=True)
            self.shutdown()  # while its host, if any, still runs
        self.verdicts.check(BUILD, self.workspace_links() == links, "the workspace's bazel-* links are as they were")
        print(f"== demo wall time {time.monotonic() - t0:.0f} s")
        return self.report()

    def shutdown(self) -> None:
        subprocess.run(
            [*self.bazel, "shutdown"],
            cwd=self.workspace,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def report(self) -> int:
        """The verdicts part by part; 0 only if every check held and every test passed."""
        ok, lines = self.verdicts.summary()
        print("== verdicts")
        for line in lines:
            print(f"   {line}")
        if ok:
            print("remote execution demo: all checks held, every test passed")
            return 0
        remote = self.verdicts.failures(REMOTE_EXECUTION)
        checked = any(part == REMOTE_EXECUTION for part, _, _ in self.verdicts.checks)
        print(
            "remote execution demo FAILED: "
            + (
                "remote execution failed its checks"
                if remote
                else "remote execution held all its checks"
                if checked
                else "remote execution not checked"
            )
            + ("; GPU routing failed" if self.verdicts.failures(GPU_ROUTING) else "")
            + (
                f"; test failures: {', '.join(sorted(self.verdicts.failed_tests))}"
                if self.verdicts.failed_tests
                else ""
            )
            + ("; a build failed" if self.verdicts.failures(BUILD) else "")
        )
        return 1

    def first(self) -> None:
        print(
            f"== 1. bazel test {' '.join(self.patterns)} --config=cpu-runtimes --config=remote-exec,"
            " clean output base, empty cluster",
            flush=True,
        )
        since = time.time()
        rc, output, spawns, _ = self.bazel_test("first")
        by_kind = self.show_spawns(spawns)
        print("   remote actions by worker:")
        self.first_spawns, self.first_ran = spawns, self.show_workers(spawns, since)
        print("   test results:")
        for m in RESULT.finditer(output):
            print(f"     {m.group(0)}")
        for line in EXECUTED.findall(output):
            print(f"   {line}")
        self.verdicts.build("build 1", rc, output)
        for mnemonic in ("CppCompile", "CppLink", "TestRunner"):
            self.check(
                by_kind[(mnemonic, "remote")] > 0, f"{mnemonic} actions ran remotely: {by_kind[(mnemonic, 'remote')]}"
            )
        self.workers_alive("after the first build")

    def second(self) -> None:
        print("== 2. bazel clean; the same build: served from the remote action cache", flush=True)
        self.clean()
        rc, output, spawns, _ = self.bazel_test("second", LOCAL_ONLY_LEFT_OUT)
        self.show_spawns(spawns)
        self.verdicts.build("build 2", rc, output)
        cache = count_cache_hits(spawns)
        here = sorted({s.get("targetLabel", "?") for s in spawns if not s.get("remotable")})
        print("   tests tagged local left out: --test_tag_filters=-local")
        if cache.failed:
            print(
                f"   not counted: the actions of {', '.join(cache.failed)}, which failed"
                " (a failed action is never cached, so it ran again)"
            )
        self.check(cache.held, cache.describe())
        if here:
            print(f"   run here by their tags (local/no-remote): {', '.join(here)}")
        self.workers_alive("after the second build")

    def third(self) -> None:
        victim = self.cluster.worker_list[0]
        cut = self.cluster.host_of(victim.name) if isinstance(self.cluster, HostsCluster) else None
        lost = f"{cut.name}'s link is cut" if cut is not None else f"{victim.name} is killed"
        print(
            f"== 3. bazel clean; the same build with --noremote_accept_cached (every action executes"
            f" again); {lost} while {victim.name} runs an action",
            flush=True,
        )
        self.clean()
        killed: dict[str, float | int] = {}
        done = threading.Event()
        start = time.monotonic()
        since = time.time()

        def killer() -> None:
            # Let the build get going, then take the worker down the moment it is running an action.
            while not done.is_set():
                running = victim.running_actions()
                if running and time.monotonic() - start > 20:
                    killed.update(at=time.monotonic() - start, actions=len(running))
                    if cut is not None:
                        # The machine drops off the network: its worker and actions run on, unheard.
                        cut.cut()
                        how = f"cut {cut.name}'s link (ip link set down at the bridge)"
                    else:
                        self.cluster.kill_worker(victim)
                        how = f"killed {victim.name} (SIGKILL to its process tree, pid {victim.proc.pid})"
                    print(f"   {how} at {killed['at']:.0f} s, {len(running)} action(s) in flight", flush=True)
                    return
                time.sleep(0.05)

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        rc, output, spawns, _ = self.bazel_test("third", ["--noremote_accept_cached", *LOCAL_ONLY_LEFT_OUT])
        done.set()
        thread.join()
        self.show_spawns(spawns)
        print("   remote actions by worker (final attempt):")
        ran = self.show_workers(spawns, since)
        self.check(bool(killed), f"{lost} with an action of {victim.name} in flight")
        self.verdicts.build("build 3", rc, output)
        retried = [(d, w, n) for d, w, n, _ in self.cluster.jobs(since) if n > 1 and d in ran]
        for digest, worker, tries in retried[:10]:
            print(f"     action {digest[:16]}... ran {tries} times, finished on {self.where(worker)}")
        self.check(
            bool(retried) and all(w != victim.name for _, w, _ in retried),
            f"{len(retried)} action(s) lost with {victim.name} were retried and finished elsewhere",
        )
        self.same_bytes(spawns, ran)
        others = [w.name for w in self.cluster.worker_list if w is not victim and not w.alive()]
        self.check(
            not others,
            "every other worker still running after the third build" + (f" (dead: {others})" if others else ""),
        )
        if cut is not None:
            cut.restore()

    def same_bytes(self, spawns: list[dict], ran: dict[str, str]) -> None:
        """Every action that ran remotely in builds 1 and 3 gave the same output
        bytes both times, on the same host or not (tests' own logs aside)."""
        before = {
            digest_key(s): s
            for s in self.first_spawns
            if s.get("runner") == "remote" and s.get("mnemonic") not in NOT_REPRODUCIBLE
        }
        again = [s for s in spawns if s.get("runner") == "remote" and digest_key(s) in before]
        moved = [
            s for s in again if self.where(self.first_ran.get(digest_key(s))) != self.where(ran.get(digest_key(s)))
        ]
        differ = [
            f"{s.get('mnemonic')} of {s.get('targetLabel')}"
            for s in again
            if output_digests(s) != output_digests(before[digest_key(s)])
        ]
        print(
            f"   {len(again)} actions ran remotely in builds 1 and 3, {len(moved)} of them on another"
            f" {'host' if isinstance(self.cluster, HostsCluster) else 'worker'} the second time"
        )
        self.check(
            bool(moved) and not differ,
            f"{len(again) - len(differ)} of {len(again)} actions gave the same output bytes in builds 1 and 3,"
            f" {len(moved)} of them having moved" + (f"; outputs differ: {', '.join(differ[:5])}" if differ else ""),
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns", nargs="*", default=["//..."], help="target patterns (default //...)")
    ap.add_argument("--workers", type=int, default=2, help="workers on 127.0.0.1 (without --hosts)")
    ap.add_argument(
        "--hosts",
        type=int,
        default=0,
        help=f"run across N >= {MIN_HOSTS} hosts on this machine: BuildGrid, N-2 workers, Bazel (default 0: 127.0.0.1)",
    )
    ap.add_argument(
        "--gpu-hosts",
        type=int,
        default=None,
        help=f"with --hosts: how many worker hosts declare {cl.GPU_PROPERTY}=cuda (default 1; 0: none)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory (logs, output base)")
    args = ap.parse_args()
    workspace = Path(os.environ.get("BUILD_WORKSPACE_DIRECTORY") or Path(__file__).resolve().parents[2])
    # Outside /tmp, like the cluster's state: tests tagged local that start a
    # cluster of their own keep it in their TEST_TMPDIR, in this output base.
    cl.state_root().mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="demo.", dir=cl.state_root()))
    scratch.chmod(0o755)

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    # SIGTERM too unwinds through the cluster's context manager, which stops it.
    signal.signal(signal.SIGTERM, interrupted)
    gpu_hosts = args.gpu_hosts if args.gpu_hosts is not None else (1 if args.hosts else 0)
    demo = Demo(workspace, args.patterns, scratch, args.workers, hosts=args.hosts, gpu_hosts=gpu_hosts)
    try:
        status = demo.run()
    except Exception as e:  # noqa: BLE001 - a cluster that did not start, a Bazel that could not run: report, stop
        print(f"remote execution demo FAILED: {e}")
        status = 1
    except KeyboardInterrupt as e:  # SIGINT, or SIGTERM (above): the cluster and hosts are stopped by now
        print(f"remote execution demo interrupted ({e or 'SIGINT'}); everything it started is stopped")
        status = 130
    if status == 0 and not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(demo.state, ignore_errors=True)
    else:
        print(f"logs in {scratch} and {demo.state}")
    return status


if __name__ == "__main__":
    sys.exit(main())
