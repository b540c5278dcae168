"""Counts test results of one `bazel test` run: prints "passed failed skipped".

Each test target that Bazel reports in the log is counted by the pytest cases
in its test.xml (a sharded target: in each shard's); a target that failed
without one counts as one failure, and a target Bazel skipped (incompatible
with the selected runtimes) as one skip.

`count_results.py --junit FILE STATUS` counts one pytest JUnit file instead
(tools/wheel_smoke.sh's); a missing or unreadable file, or a non-zero STATUS
with no failure recorded, counts as one failure.
"""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

LINE = re.compile(
    r"^(//\S+)\s+(?:\(cached\) )?(PASSED|FAILED|SKIPPED|TIMEOUT|FLAKY|NO STATUS|FAILED TO BUILD|INCOMPLETE)\b"
)


def cases(xml_path: Path) -> tuple[int, int, int]:
    root = ET.parse(xml_path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    passed = failed = skipped = 0
    for suite in suites:
        total = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        passed += total - bad - skip
        failed += bad
        skipped += skip
    return passed, failed, skipped


def main(log: str, testlogs: str) -> None:
    passed = failed = skipped = 0
    for line in Path(log).read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if not m:
            continue
        label, result = m.groups()
        if result == "SKIPPED":
            skipped += 1
            continue
        package, _, name = label[2:].partition(":")
        target_logs = Path(testlogs, package, name)
        # A sharded test (shard_count) has one test.xml per shard.
        xml_paths = sorted(target_logs.glob("shard_*_of_*/test.xml")) or [target_logs / "test.xml"]
        try:
            p, f, s = (sum(counts) for counts in zip(*(cases(xml_path) for xml_path in xml_paths)))
        except (OSError, ET.ParseError):
            p, f, s = 0, 1, 0
        if result != "PASSED" and f == 0:
            f = 1  # Bazel saw a failure pytest did not record (crash, timeout)
        passed, failed, skipped = passed + p, failed + f, skipped + s
    print(passed, failed, skipped)


def main_junit(xml: str, status: str) -> None:
    try:
        passed, failed, skipped = cases(Path(xml))
    except (OSError, ET.ParseError):
        passed, failed, skipped = 0, 1, 0
    if status != "0" and failed == 0:
        failed = 1  # the run failed before or beyond its tests
    print(passed, failed, skipped)


if __name__ == "__main__":
    if sys.argv[1] == "--junit":
        main_junit(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
