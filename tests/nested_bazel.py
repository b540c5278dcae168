"""A Bazel inside a test (the integration tests that build a scratch tree the
way a user would): the scratch tree, mirrored from this checkout with
symlinks, and a Bazel on it with its own output root, offline like the main
build, that sees nothing of the outer test's environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def scratch_dir(prefix: str) -> Path:
    """A folder under Bazel's per-test tmpdir: a nested output base is large,
    and Bazel clears that tmpdir."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_TMPDIR")))


def mirror_checkout(root: Path, tree: Path, own: str) -> None:
    """`tree` links to every top-level entry of the checkout `root` but `own`
    (which the caller lays out itself), .git and the bazel-* output links."""
    tree.mkdir(parents=True, exist_ok=True)
    for entry in root.iterdir():
        if entry.name not in (own, ".git") and not entry.name.startswith("bazel-"):
            os.symlink(entry, tree / entry.name)


class NestedBazel:
    """Bazel on one workspace, with its own output root and home in `scratch`."""

    def __init__(self, workspace: Path, scratch: Path) -> None:
        binary = shutil.which("bazel")
        if binary is None:
            pytest.fail("no `bazel` on PATH: run this test through tools/bazel")
        home = scratch / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.workspace = workspace
        self.startup = [binary, f"--output_user_root={scratch / 'bazel-root'}", "--max_idle_secs=120"]
        # Nothing of the outer test's environment (runfiles, PYTHONPATH) leaks in.
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.startup, *args, "--color=no", "--curses=no"],
            cwd=self.workspace,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=1500,
        )

    def check(self, *args: str) -> str:
        """The output of a Bazel command that must succeed."""
        proc = self(*args)
        assert proc.returncode == 0, f"bazel {' '.join(args)} failed:\n{proc.stdout[-6000:]}"
        return proc.stdout

    def shutdown(self) -> None:
        subprocess.run([*self.startup, "shutdown"], cwd=self.workspace, env=self.env, capture_output=True, timeout=120)
