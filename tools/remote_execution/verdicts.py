"""The demo's verdicts, told apart by what they judge.

A build on the cluster can go wrong in three unrelated ways: Bazel could not
build (a compile error, or an action the cluster could not run), a test ran
and failed, or remote execution itself misbehaved (actions ran here instead
of remotely, a second build missed the remote action cache, a worker died).
Each is judged and reported on its own, so a failing test is named as a
failing test and never reads as a cache failure: BuildGrid does not cache a
failed action, so a failing test runs again in every build, and the cache hits
are counted over the actions that succeeded.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

REMOTE_EXECUTION = "remote execution"
GPU_ROUTING = "gpu routing"
BUILD = "build"

# One line per test in Bazel's summary: "//pkg:name   (cached) PASSED in 0.4s".
RESULT = re.compile(
    r"^(//\S+)\s+(?:\(cached\)\s+)?(FAILED TO BUILD|PASSED|FAILED|FLAKY|TIMEOUT|NO STATUS|SKIPPED|INCOMPLETE)\b.*$",
    re.M,
)
ERROR = re.compile(r"^ERROR: .*$", re.M)
# Statuses of a test that did not pass. FLAKY passed on a retry; SKIPPED was
# not asked for (incompatible); both are shown, neither is a failure.
NOT_PASSED = {"FAILED", "TIMEOUT", "NO STATUS", "INCOMPLETE", "FAILED TO BUILD"}

# Bazel's exit codes: 0 everything passed, 3 built but some test failed,
# 4 built but no test ran. Anything else: the build itself failed.
BUILT = {0: "built, every test passed", 3: "built, some test failed", 4: "built, no test ran"}


def test_results(output: str) -> dict[str, str]:
    """{test label: status} from Bazel's summary of a `bazel test`."""
    return {m.group(1): m.group(2) for m in RESULT.finditer(output)}


def succeeded(spawn: dict) -> bool:
    """A spawn of --execution_log_json_file that exited 0 (proto3 JSON may
    leave out a field at its default value, exitCode 0 among them)."""
    return int(spawn.get("exitCode", 0)) == 0


def remotely_cacheable(spawns: list[dict]) -> list[dict]:
    return [s for s in spawns if s.get("remotable") and s.get("remoteCacheable")]


@dataclass
class CacheCount:
    """The remote action cache's part of a build that should be fully cached."""

    hits: int  # remote cache hits
    counted: int  # remotely cacheable actions that succeeded: each must be a hit
    failed: list[str]  # labels of the cacheable actions that failed (never cached)

    @property
    def held(self) -> bool:
        return self.counted > 0 and self.hits == self.counted

    def describe(self) -> str:
        return f"{self.hits} of {self.counted} remotely cacheable actions that succeeded were remote cache hits"


def count_cache_hits(spawns: list[dict]) -> CacheCount:
    cacheable = remotely_cacheable(spawns)
    passed = [s for s in cacheable if succeeded(s)]
    return CacheCount(
        hits=sum(1 for s in passed if s.get("runner") == "remote cache hit"),
        counted=len(passed),
        failed=sorted({s.get("targetLabel", "?") for s in cacheable if not succeeded(s)}),
    )


@dataclass
class Verdicts:
    """Checks by part (remote execution, build), and the tests that did not pass."""

    checks: list[tuple[str, bool, str]] = field(default_factory=list)
    # {label: ["FAILED in build 1", ...]}
    failed_tests: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def check(self, part: str, ok: bool, what: str) -> bool:
        print(f"   [{'ok' if ok else 'FAILED'}] {what}", flush=True)
        self.checks.append((part, ok, what))
        return ok

    def build(self, name: str, rc: int, output: str) -> dict[str, str]:
        """Judges one `bazel test`: did it build (its own check), which tests did
        not pass (recorded, named). Returns the test results."""
        errors = ERROR.findall(output)
        self.check(
            BUILD,
            rc in BUILT,
            f"{name}: Bazel exit {rc}, "
            + (BUILT[rc] if rc in BUILT else "the build failed: " + " | ".join(errors[:3] or ["no ERROR line"])),
        )
        results = test_results(output)
        for label, status in results.items():
            if status in NOT_PASSED:
                self.failed_tests[label].append(f"{status} in {name}")
        return results

    def failures(self, part: str) -> list[str]:
        return [what for p, ok, what in self.checks if p == part and not ok]

    def summary(self) -> tuple[bool, list[str]]:
        """(everything held, the lines that say so part by part)."""
        lines = []
        for part in (REMOTE_EXECUTION, GPU_ROUTING, BUILD):
            checks = [c for c in self.checks if c[0] == part]
            if not checks:
                if part != GPU_ROUTING:  # no test asked for a GPU: nothing to say
                    lines.append(f"{part}: not checked (no build ran)")
                continue
            failed = self.failures(part)
            if failed:
                lines.append(f"{part}: {len(failed)} of {len(checks)} checks FAILED: " + "; ".join(failed))
            else:
                lines.append(f"{part}: all {len(checks)} checks held")
        if self.failed_tests:
            named = "; ".join(f"{label} ({', '.join(where)})" for label, where in sorted(self.failed_tests.items()))
            lines.append(f"tests: {len(self.failed_tests)} test(s) FAILED: {named}")
        else:
            lines.append("tests: every test that ran passed")
        ok = not self.failed_tests and all(ok for _, ok, _ in self.checks)
        return ok, lines
