"""Prints, as JSON, the import roots of the modrt tree this binary was built
with (its runfiles), for the bench to put on its interpreters' PYTHONPATH."""

import json
import sys

import modrt  # noqa: F401 - fails here, not later, if the tree is broken

print(json.dumps([p for p in sys.path if ".runfiles" in p]))
