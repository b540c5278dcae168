"""The SHA-256 recorded for a runtime DSO, checked before it is loaded.

The record is the build's manifest (modrt/_dso_sha256.py, written by
//python:dso_manifest) for DSOs in the tree modrt runs from, or the RECORD of
the wheel that installed the DSO. The core hashes the file with libsodium and
refuses it (ImportError) when it differs, so a damaged DSO is never dlopen'ed:
structural ELF checks cannot see every damaged byte. A verified file is
remembered by identity (device, inode, size, mtime, ctime) in the user's cache
directory, so an import hashes each DSO once. A DSO with no record (one found
through MODRT_LIBRARY_PATH) is loaded unchecked.
"""

from __future__ import annotations

import os

from . import _ffi
from ._locate import PACKAGE_DIR, package_root

# Key prefix of the package's own files in the build manifest.
_PACKAGE_PREFIX = "python/modrt/"
_records: dict[str, tuple[str, str]] | None = None
_scanned_sites: set[str] = set()


def _build_manifest() -> dict[str, tuple[str, str]]:
    try:
        from ._dso_sha256 import SHA256
    except ImportError:
        return {}
    found = {}
    for relative, digest in SHA256.items():
        if relative.startswith(_PACKAGE_PREFIX):
            path = os.path.join(PACKAGE_DIR, relative[len(_PACKAGE_PREFIX) :])
        else:
            path = os.path.join(package_root(), relative)
        found[os.path.normpath(path)] = (digest, "the build's manifest (modrt/_dso_sha256.py)")
    return found


def _scan_wheel_records(site: str, records: dict[str, tuple[str, str]]) -> None:
    """Adds the .so files listed in the RECORD of modrt distributions in `site`."""
    import base64
    import csv

    try:
        entries = [e for e in os.listdir(site) if e.startswith("modrt") and e.endswith(".dist-info")]
    except OSError:
        return
    for entry in entries:
        record = os.path.join(site, entry, "RECORD")
        try:
            with open(record, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
        except OSError:
            continue
        for row in rows:
            if len(row) < 2 or not row[0].endswith(".so"):
                continue
            algorithm, _, value = row[1].partition("=")
            if algorithm != "sha256" or not value:
                continue
            digest = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
            records[os.path.normpath(os.path.join(site, row[0]))] = (digest, f"{entry}/RECORD")


def recorded_sha256(path: str) -> tuple[str, str] | None:
    """(hex digest, where it is recorded) for the DSO at `path`, or None."""
    global _records
    if _records is None:
        _records = _build_manifest()
    path = os.path.normpath(os.path.abspath(path))
    if path not in _records:
        # A wheel's files lie at most a few directories below its site directory.
        directory = os.path.dirname(path)
        for _ in range(4):
            if directory not in _scanned_sites:
                _scanned_sites.add(directory)
                _scan_wheel_records(directory, _records)
            if path in _records:
                break
            directory = os.path.dirname(directory)
    return _records.get(path)


def check(path: str) -> None:
    """Raises ImportError unless the DSO at `path` matches its recorded SHA-256."""
    recorded = recorded_sha256(path)
    if recorded is not None:
        _ffi.call("plugin.verify_sha256", path, recorded[0], recorded[1])
