#!/usr/bin/env bash
# A fixture of demo_verdicts_test: a test that fails on purpose, so the demo
# must name it as a failing test and still judge remote execution on its own.
echo "demo_fixture_failing_test fails on purpose"
exit 1
