"""Prints, as JSON, where the modrt tree this binary was built with lies: the
root of its runfiles and the import roots under it, for the bench to copy and
put on its interpreters' PYTHONPATH."""

import json
import sys

import modrt._ffi

root = str(modrt._ffi.package_root())
print(json.dumps({"root": root, "paths": [p for p in sys.path if p.startswith(root)]}))
