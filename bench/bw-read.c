/*
 * A bare OpenMP read kernel: the median of 9 timings of summing BYTES of
 * doubles across every thread, used in bench/RESULTS.md to show where a
 * server's read bandwidth stops depending on the buffer size (on a machine
 * no numasleuth build could be copied to). Not part of the tool.
 *
 * usage: OMP_NUM_THREADS=16 OMP_PROC_BIND=close OMP_PLACES=cores bw-read BYTES
 * build: gcc -O3 -march=native -fopenmp -o bw-read bench/bw-read.c
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], 0, 10) : 0, n = bytes / 8;
    double *a = n ? aligned_alloc(4096, n * 8) : NULL;
    if (!a) {
        fprintf(stderr, "usage: %s BYTES (a multiple of 4096)\n", argv[0]);
        return 2;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = 1.0;
    /* At least 2 GiB read per timing, so small buffers are timed long enough. */
    int passes = bytes > (1ul << 31) ? 1 : (int)((1ul << 31) / bytes);
    double gbs[9], sum = 0;
    for (int r = 0; r < 9; r++) {
        double start = omp_get_wtime();
        for (int p = 0; p < passes; p++) {
#pragma omp parallel for schedule(static) reduction(+ : sum)
            for (size_t i = 0; i < n; i++)
                sum += a[i];
        }
        gbs[r] = (double)bytes * passes / (omp_get_wtime() - start) / 1e9;
    }
    qsort(gbs, 9, sizeof *gbs, by_value);
    printf("%zu MiB: median %.1f GB/s [%.1f-%.1f] (%g)\n", bytes >> 20, gbs[4], gbs[1], gbs[7], sum > 0 ? 0.0 : 1.0);
    return 0;
}
