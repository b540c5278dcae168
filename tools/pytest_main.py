"""Runs the test files named on the command line under pytest (see modrt_py_test)."""

import os
import sys

import pytest

if __name__ == "__main__":
    args = ["-p", "no:cacheprovider", "-q", "-rs"]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append("--junitxml=" + xml)
    sys.exit(pytest.main(args + sys.argv[1:]))
