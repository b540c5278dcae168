"""Runs tinygrad's own test/test_tiny.py, unchanged, on the device in $DEV.

The file comes from the pinned tinygrad sdist at test time (.ci/run fetches it:
tools/tinygrad_tests.sh) and is named by $MODRT_TINYGRAD_TEST_TINY; it is never
copied into this repository. Results go to Bazel's XML_OUTPUT_FILE.
"""

import os
import sys

import pytest
import tinygrad_testing

if __name__ == "__main__":
    test_file = os.environ.get("MODRT_TINYGRAD_TEST_TINY")
    if not test_file or not os.path.isfile(test_file):
        sys.exit(
            "MODRT_TINYGRAD_TEST_TINY names no file: fetch tinygrad's tests with "
            "tools/tinygrad_tests.sh and pass --test_env=MODRT_TINYGRAD_TEST_TINY=<its test_tiny.py>"
        )
    tinygrad_testing.setup()
    args = ["-p", "no:cacheprovider", "-q", "-rs", "--rootdir", os.path.dirname(test_file)]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append("--junitxml=" + xml)
    sys.exit(pytest.main(args + [test_file]))
