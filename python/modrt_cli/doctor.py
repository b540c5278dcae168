"""modrt doctor: are the DSOs modrt would load the ones that were built?

usage: modrt doctor [--json]

Hashes every DSO `import modrt` would load (the core, the compiler, the CPython
extension, the extra DSO, the selected backend runtimes, found where modrt looks
for them) and compares each with the SHA-256 the build recorded in
modrt/_dso_sha256.py; where modrt was installed from a wheel, also every DSO in
the wheel's RECORD. Lists what is modified, missing or unexpected (a DSO in
modrt/lib/ that neither records). Exit status 1 if anything is, 0 if all is as
built. Nothing is loaded: modrt itself is not imported, so a damaged file cannot
take this command down.
"""

from __future__ import annotations

import base64
import csv
import glob
import hashlib
import importlib.util
import json
import os
import sys
from types import ModuleType

from . import _common
from ._flags import FLAGS, define

# The build tree's path of the CPython extension; in a package it sits in the package directory.
PACKAGE_PREFIX = "python/modrt/"


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_bool, "json", False, "Print the findings as JSON.")


def _package_dir() -> str | None:
    """Where `import modrt` would come from, without importing it."""
    spec = importlib.util.find_spec("modrt")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _load_file(name: str, path: str) -> ModuleType:
    """A module of the package run on its own (its package is not imported)."""
    spec = importlib.util.spec_from_file_location(f"_modrt_doctor_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Findings:
    def __init__(self) -> None:
        self.rows: list[dict[str, str]] = []

    def add(self, state: str, path: str, source: str, detail: str = "") -> None:
        self.rows.append({"state": state, "path": path, "recorded_in": source, "detail": detail})

    def problems(self) -> list[dict[str, str]]:
        return [r for r in self.rows if r["state"] != "ok"]


def check_build_manifest(package: str, findings: Findings) -> set[str]:
    """Checks the DSOs the build recorded; returns the real paths it checked."""
    locate = _load_file("locate", os.path.join(package, "_locate.py"))
    manifest_path = os.path.join(package, "_dso_sha256.py")
    if not os.path.isfile(manifest_path):
        findings.add("missing", manifest_path, "build", "no DSO manifest: this modrt was not built by //python:modrt")
        return set()
    recorded: dict[str, str] = _load_file("dso_sha256", manifest_path).SHA256
    checked = set()
    for relative, digest in recorded.items():
        if relative.startswith(PACKAGE_PREFIX):
            candidate = os.path.join(package, relative[len(PACKAGE_PREFIX) :])
            path = candidate if os.path.isfile(candidate) else None
        else:
            path = locate.find_library(relative)
        if path is None:
            findings.add("missing", relative, "build", "not found where modrt looks for it")
            continue
        checked.add(os.path.realpath(path))
        actual = _sha256(path)
        if actual == digest:
            findings.add("ok", path, "build")
        else:
            findings.add("modified", path, "build", f"sha256 {actual}, built as {digest}")
    return checked


def _record_digest(digest: str) -> str | None:
    algorithm, _, value = digest.partition("=")
    if algorithm != "sha256" or not value:
        return None
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


def check_records(package: str, findings: Findings) -> set[str]:
    """Checks every DSO listed in the RECORD of the modrt distributions installed
    beside the package (modrt and its backend wheels); returns their real paths."""
    site = os.path.dirname(package)
    listed = set()
    for record in sorted(glob.glob(os.path.join(site, "modrt*.dist-info", "RECORD"))):
        source = os.path.basename(os.path.dirname(record)) + "/RECORD"
        with open(record, newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                if len(row) < 2 or not row[0].endswith(".so"):
                    continue
                path = os.path.normpath(os.path.join(site, row[0]))
                listed.add(os.path.realpath(path))
                expected = _record_digest(row[1])
                if not os.path.isfile(path):
                    findings.add("missing", path, source, "listed in RECORD, not on disk")
                elif expected is None:
                    findings.add("modified", path, source, f"RECORD has no sha256 for it ({row[1]!r})")
                else:
                    actual = _sha256(path)
                    if actual == expected:
                        findings.add("ok", path, source)
                    else:
                        findings.add("modified", path, source, f"sha256 {actual}, installed as {expected}")
    return listed


def check_unexpected(package: str, known: set[str], findings: Findings) -> None:
    """DSOs in the package's lib/ that nothing recorded: modrt may load them."""
    for path in sorted(glob.glob(os.path.join(package, "lib", "*.so*"))):
        if os.path.realpath(path) not in known:
            findings.add("unexpected", path, "-", "in modrt/lib/ but in no manifest or RECORD")


def collect() -> Findings:
    findings = Findings()
    package = _package_dir()
    if package is None:
        findings.add("missing", "modrt", "-", "the modrt package is not importable")
        return findings
    known = check_build_manifest(package, findings)
    known |= check_records(package, findings)
    check_unexpected(package, known, findings)
    return findings


def main(argv: list[str]) -> int:
    if argv:
        return _common.fail("doctor takes no arguments", 2)
    findings = collect()
    problems = findings.problems()
    if FLAGS.json:
        print(json.dumps({"ok": not problems, "files": findings.rows}, indent=2))
    else:
        rows = [(r["state"], r["path"], r["recorded_in"], r["detail"]) for r in findings.rows]
        print(_common.table(["state", "file", "recorded in", "detail"], rows))
        checked = sum(1 for r in findings.rows if r["state"] == "ok")
        print(f"\n{checked} DSOs as built" + (f"; {len(problems)} problems" if problems else "; no problems"))
    if problems:
        print("modrt: some DSOs are not as built; reinstall modrt (or rebuild)", file=sys.stderr)
    return 1 if problems else 0
