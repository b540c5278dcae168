"""Runs the test files named on the command line under pytest (see modrt_py_test)."""

import os
import sys
from pathlib import Path

import pytest


class Shard:
    """Bazel's test sharding (a test's shard_count): shard `index` of `total`
    runs every total-th collected case from its index on, so the shards
    together run each case once."""

    def __init__(self, index: int, total: int) -> None:
        self.index = index
        self.total = total

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        config.hook.pytest_deselected(items=[item for i, item in enumerate(items) if i % self.total != self.index])
        items[:] = items[self.index :: self.total]


if __name__ == "__main__":
    args = ["-p", "no:cacheprovider", "-q", "-rs"]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append("--junitxml=" + xml)
    plugins = []
    total = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    if total > 1:
        # Tells Bazel that this runner shards.
        Path(os.environ["TEST_SHARD_STATUS_FILE"]).touch()
        plugins.append(Shard(int(os.environ["TEST_SHARD_INDEX"]), total))
    status = pytest.main(args + sys.argv[1:], plugins=plugins)
    # A shard left without a case (more shards than cases) has run its part.
    if total > 1 and status == pytest.ExitCode.NO_TESTS_COLLECTED:
        status = pytest.ExitCode.OK
    sys.exit(status)
