"""Builds and tests modrt on a BuildGrid cluster of two buildbox workers.

    tools/bazel run //tools/remote_execution:demo [-- TARGET_PATTERN...]   (default //...)

1. starts a cluster on 127.0.0.1 (cluster.py): BuildGrid and 2 workers;
2. `bazel test PATTERNS --config=cpu-runtimes --config=remote-exec` from a clean
   output base (disk cache off): prints Bazel's process summary, the actions by
   kind and where they ran, the workers that ran them, and the test results;
   compiles, links and tests must have run remotely;
3. `bazel clean`, the same again: every action that may run remotely must come
   from the remote action cache (tests tagged "local", which run nested Bazel
   builds here and never use the cluster, are left out of this run and the next);
4. `bazel clean`, the same again with --noremote_accept_cached, and worker 0 is
   killed (SIGKILL to its whole process tree) while it runs an action: the build
   must still succeed, the lost actions run again on worker 1;
5. stops the cluster.

The verdicts are told apart (verdicts.py): remote execution's own checks, each
build's outcome, and the tests that failed, by name. A failing test is a test
failure, not a remote-execution one: it is left out of the cache-hit count
(BuildGrid does not cache a failed action) and named on its own. Exits 0 only
if all of that held and every test passed.
"""

from __future__ import annotations

import argparse
import json
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
from verdicts import BUILD, REMOTE_EXECUTION, RESULT, Verdicts, count_cache_hits

SUMMARY = re.compile(r"^INFO: \d+ process(?:es)?: .*$", re.M)
EXECUTED = re.compile(r"^(?:Executed \d+ out of \d+ tests?.*|There were tests whose specified size.*)$", re.M)


# Tests tagged "local" (nested Bazel builds) never use the cluster: they run
# in the first build and are left out of the second and third.
LOCAL_ONLY_LEFT_OUT = ["--test_tag_filters=-local"]


def read_execution_log(path: Path) -> list[dict]:
    """Bazel's --execution_log_json_file: a stream of SpawnExec JSON objects."""
    text = path.read_text()
    decoder = json.JSONDecoder()
    spawns, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return spawns
        obj, i = decoder.raw_decode(text, i)
        spawns.append(obj)


def digest_key(spawn: dict) -> str:
    d = spawn.get("digest") or {}
    return f"{d.get('hash')}/{d.get('sizeBytes')}"


class Demo:
    def __init__(
        self, workspace: Path, patterns: list[str], scratch: Path, workers: int, env: dict[str, str] | None = None
    ) -> None:
        self.workspace = workspace
        self.patterns = patterns
        self.scratch = scratch
        # Not under /tmp, like every cluster's state (see cluster.Cluster).
        self.cluster = cl.Cluster(cl.new_state_dir(), workers=workers, port=0)
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
            rc = subprocess.run(argv, cwd=self.workspace, env=self.env, stdout=out, stderr=subprocess.STDOUT).returncode
        wall = time.monotonic() - start
        output = out_log.read_text(errors="replace")
        spawns = read_execution_log(exec_log) if exec_log.exists() else []
        print(f"   exit {rc} after {wall:.0f} s (log {out_log})", flush=True)
        for line in SUMMARY.findall(output)[-1:]:
            print(f"   {line}")
        return rc, output, spawns, wall

    def clean(self) -> None:
        subprocess.run(
            [*self.bazel, "clean", self.symlinks],
            cwd=self.workspace,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def show_spawns(self, spawns: list[dict]) -> Counter:
        by_kind = Counter((s.get("mnemonic", "?"), s.get("runner", "?")) for s in spawns)
        print("   actions by kind and where they ran:")
        for (mnemonic, runner), n in sorted(by_kind.items()):
            print(f"     {mnemonic:<24} {runner:<18} {n:>5}")
        return by_kind

    def show_workers(self, spawns: list[dict], since: float) -> dict[str, str]:
        """Which worker ran each remotely executed action of this build (BuildGrid's record)."""
        jobs = {digest: worker for digest, worker, _, _ in self.cluster.jobs(since)}
        ran = {digest_key(s): jobs.get(digest_key(s), "?") for s in spawns if s.get("runner") == "remote"}
        for worker, n in sorted(Counter(ran.values()).items()):
            print(f"     on {worker}: {n} actions")
        return ran

    def workspace_links(self) -> dict[str, str]:
        """The workspace's convenience links (bazel-bin, bazel-out, ...) and their targets."""
        return {p.name: os.readlink(p) for p in self.workspace.glob("bazel-*") if p.is_symlink()}

    def run(self) -> int:
        t0 = time.monotonic()
        links = self.workspace_links()
        print(f"== starting a cluster: BuildGrid and {self.cluster.workers} buildbox workers on 127.0.0.1", flush=True)
        with self.cluster:
            print(f"   remote executor {self.cluster.endpoint}, instance {cl.INSTANCE}")
            self.first()
            self.second()
            self.third()
            print("== stopping the cluster", flush=True)
        self.shutdown()
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
        print(
            "remote execution demo FAILED: "
            + ("remote execution failed its checks" if remote else "remote execution held all its checks")
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
        self.show_workers(spawns, since)
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
        print(
            f"== 3. bazel clean; the same build with --noremote_accept_cached (every action executes"
            f" again); {victim.name} is killed while it runs an action",
            flush=True,
        )
        self.clean()
        killed: dict[str, float | int] = {}
        done = threading.Event()
        start = time.monotonic()
        since = time.time()

        def killer() -> None:
            # Let the build get going, then kill the worker the moment it is running an action.
            while not done.is_set():
                running = victim.running_actions()
                if running and time.monotonic() - start > 20:
                    killed.update(at=time.monotonic() - start, actions=len(running))
                    self.cluster.kill_worker(victim)
                    print(
                        f"   killed {victim.name} (SIGKILL to its process tree, pid {victim.proc.pid}) at"
                        f" {killed['at']:.0f} s, {len(running)} action(s) in flight",
                        flush=True,
                    )
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
        self.check(bool(killed), f"{victim.name} was killed with an action in flight")
        self.verdicts.build("build 3", rc, output)
        retried = [(d, w, n) for d, w, n, _ in self.cluster.jobs(since) if n > 1 and d in ran]
        for digest, worker, tries in retried[:10]:
            print(f"     action {digest[:16]}... ran {tries} times, finished on {worker}")
        self.check(
            bool(retried) and all(w != victim.name for _, w, _ in retried),
            f"{len(retried)} action(s) lost with {victim.name} were retried and finished elsewhere",
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns", nargs="*", default=["//..."], help="target patterns (default //...)")
    ap.add_argument("--workers", type=int, default=2)
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
    demo = Demo(workspace, args.patterns, scratch, args.workers)
    try:
        status = demo.run()
    except Exception as e:  # noqa: BLE001 - a cluster that did not start, a Bazel that could not run: report, stop
        print(f"remote execution demo FAILED: {e}")
        status = 1
    if status == 0 and not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(demo.cluster.directory, ignore_errors=True)
    else:
        print(f"logs in {scratch} and {demo.cluster.directory}")
    return status


if __name__ == "__main__":
    sys.exit(main())
