// Shared by the C floors: timing and the output protocol.
//
// Every floor is run as `floor N BATCHES [args]`: it sets up, runs one
// discarded warm-up batch, then BATCHES batches of N repetitions, and prints
// the seconds per repetition of its fastest batch as its last line (the
// batch other processes on the machine disturbed least; the bench's Python
// workers do the same). A floor that cannot run
// here prints `unavailable: REASON` and exits 3.
#ifndef MODRT_BENCH_FLOOR_COMMON_H_
#define MODRT_BENCH_FLOOR_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double floor_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double floor_best(const double* v, int n) {
  double best = v[0];
  for (int i = 1; i < n; ++i) best = v[i] < best ? v[i] : best;
  return best;
}

static void floor_unavailable(const char* why) {
  printf("unavailable: %s\n", why);
  fflush(stdout);
  exit(3);
}

static void floor_fail(const char* what, long code) {
  fprintf(stderr, "%s failed (%ld)\n", what, code);
  exit(1);
}

static void floor_args(int argc, char** argv, long* n, int* batches) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s N BATCHES [args]\n", argv[0]);
    exit(2);
  }
  *n = atol(argv[1]);
  *batches = atoi(argv[2]);
  if (*n <= 0 || *batches <= 0 || *batches > 1000) {
    fprintf(stderr, "bad N or BATCHES\n");
    exit(2);
  }
}

#endif  // MODRT_BENCH_FLOOR_COMMON_H_
