#!/usr/bin/env bash
# The runner every worker of cluster.py uses: buildbox-run-hosttools in a mount
# namespace of its own with a fresh tmpfs on /tmp, so each action has a /tmp
# of its own, as Bazel gives each local sandboxed action. With one /tmp shared
# by concurrent actions, tests race (pytest prunes the numbered base
# directories of other pytest processes under /tmp/pytest-of-root).
# The worker's state (its cache, where inputs are staged, its sockets) lies
# outside /tmp, so the runner still sees it.
exec unshare --mount --propagation unchanged -- /bin/bash -c \
  'mount -t tmpfs -o mode=1777 modrt-action-tmp /tmp && exec /usr/bin/buildbox-run-hosttools "$@"' \
  buildbox-run "$@"
