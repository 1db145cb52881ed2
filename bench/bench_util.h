/* bench_util.h - timing helpers shared by the bench programs (bench only). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_UNUSED __attribute__((unused))
#else
#define BENCH_UNUSED
#endif

static BENCH_UNUSED uint64_t bench_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static BENCH_UNUSED int bench_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static BENCH_UNUSED double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
    return (n & 1) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static BENCH_UNUSED int bench_reps(void) {
    const char *s = getenv("BENCH_REPS");
    int r = s ? atoi(s) : 0;
    return r >= 1 && r <= 99 ? r : 7;
}

/* stop the compiler from proving anything about p (hoisting, folding) */
#if defined(__GNUC__) || defined(__clang__)
#define BENCH_OPAQUE(p) __asm__ volatile("" : "+r"(p))
#define BENCH_KEEP(v)   __asm__ volatile("" : : "r"(v) : "memory")
#else
#define BENCH_OPAQUE(p) ((void)0)
#define BENCH_KEEP(v)   ((void)(v))
#endif

#endif
