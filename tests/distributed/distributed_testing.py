"""What the modrt.distributed tests share: host kernels, sessions on a local
Ray cluster (real Ray processes on this machine), and a look at the
processes a session leaves behind."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

import modrt
import modrt.distributed as md

WORKERS = 3
KERNELS = r"""
#include <unistd.h>
void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
/* c (m x n) = a (m x k) @ b (k x n), row-major */
void matmul(const float* a, const float* b, float* c, int m, int k, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}
void relu(float* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
/* g = scale * X^T (X w - y): a least-squares gradient over this worker's rows */
void grad(const float* x, const float* y, const float* w, float* g, float scale, int rows, int d) {
  for (int j = 0; j < d; ++j) g[j] = 0.0f;
  for (int i = 0; i < rows; ++i) {
    float r = -y[i];
    for (int j = 0; j < d; ++j) r += x[i * d + j] * w[j];
    for (int j = 0; j < d; ++j) g[j] += scale * r * x[i * d + j];
  }
}
void sgd(float* w, const float* g, float lr, int d) {
  for (int j = 0; j < d; ++j) w[j] -= lr * g[j];
}
/* sleeps `ms` milliseconds where this worker's flag is set */
void nap(const int* flag, int ms) {
  if (flag[0]) usleep((useconds_t)ms * 1000);
}
"""
SIGNATURES = [
    "vadd(float32*, float32*, float32*, int32)",
    "matmul(float32*, float32*, float32*, int32, int32, int32)",
    "relu(float32*, int32)",
    "grad(float32*, float32*, float32*, float32*, float32, int32, int32)",
    "sgd(float32*, float32*, float32, int32)",
    "nap(int32*, int32)",
]


def kernels() -> modrt.Module:
    return modrt.compile(KERNELS, "cpu", SIGNATURES)


def mlp_on_one_device(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(relu(x @ w1), relu(x @ w1) @ w2) by the same kernels on modrt's cpu
    device: what a tensor-parallel run of them across workers must equal."""
    (batch, d_in), hidden, d_out = x.shape, w1.shape[1], w2.shape[1]
    one = kernels()
    h1 = modrt.empty((batch, hidden), "float32")
    one["matmul"](modrt.tensor(x), modrt.tensor(w1), h1, batch, d_in, hidden)
    one["relu"](h1, batch * hidden)
    y1 = modrt.empty((batch, d_out), "float32")
    one["matmul"](h1, modrt.tensor(w2), y1, batch, hidden, d_out)
    return h1.numpy(), y1.numpy()


@pytest.fixture(scope="module")
def session() -> Iterator[md.Session]:
    """WORKERS cpu workers on a local cluster, for every test of a file."""
    with md.Session(devices=WORKERS, timeout=60) as sess:
        yield sess


def processes_mentioning(text: str) -> list[int]:
    """The pids of the processes whose command line contains `text`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(pid))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
