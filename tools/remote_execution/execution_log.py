"""Reading Bazel's execution log (--execution_log_json_file): its spawns and
the digests that name an action and its outputs."""

from __future__ import annotations

import json
from pathlib import Path


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


def output_digests(spawn: dict) -> list[tuple[str, str]]:
    """(path, content digest) of each file the action produced."""
    return sorted((o.get("path", "?"), digest_key(o)) for o in spawn.get("actualOutputs", []))
