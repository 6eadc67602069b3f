/* thread-time.h: what the one-thread decode benches (jpeg-luma-decode,
 * png-decode-bench) time with: the calling thread's CPU time, which other
 * processes on a shared host do not inflate, and the median of the runs. */
#ifndef LH_BENCH_THREAD_TIME_H
#define LH_BENCH_THREAD_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double thread_cpu_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static inline int compare_ms(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v and returns its median. */
static inline double median_ms(double *v, int n)
{
  qsort(v, n, sizeof *v, compare_ms);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
