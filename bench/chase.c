/*
 * A deliberately small, independent pointer chase: the "trusted" reference
 * that bench/run.sh compares numasleuth's idle latency against at the same
 * buffer size, CPU and page kind. Not part of the tool.
 *
 * usage: chase BYTES CPU SAMPLES SAMPLE_MS
 * prints: median ns per dependent load, then every sample
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xorshift64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void **walk(void **p, size_t loads) {
    for (size_t i = 0; i < loads; i++) p = (void **)*p;
    return p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: chase BYTES CPU SAMPLES SAMPLE_MS\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], 0, 10);
    int cpu = atoi(argv[2]), samples = atoi(argv[3]);
    double sample_ns = atof(argv[4]) * 1e6;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
    char *buf = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) { perror("mmap"); return 1; }
    madvise(buf, bytes, MADV_HUGEPAGE);
    memset(buf, 1, bytes);
    size_t lines = bytes / LINE;
    /* order[] is a random permutation (Fisher-Yates); line order[k] points to order[k+1]. */
    size_t *order = malloc(lines * sizeof *order);
    for (size_t i = 0; i < lines; i++) order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = xorshift64() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t k = 0; k < lines; k++)
        *(void **)(buf + order[k] * LINE) = buf + order[(k + 1) % lines] * LINE;
    free(order);
    void **p = (void **)buf;
    p = walk(p, lines < (1u << 21) ? lines : (1u << 21));
    double t0 = now_ns();
    p = walk(p, 4096);
    size_t loads = (size_t)(sample_ns / ((now_ns() - t0) / 4096));
    if (loads < 4096) loads = 4096;
    double *ns = malloc(samples * sizeof *ns);
    for (int s = -1; s < samples; s++) {
        t0 = now_ns();
        p = walk(p, loads);
        double per = (now_ns() - t0) / loads;
        if (s >= 0) ns[s] = per;
    }
    double *sorted = malloc(samples * sizeof *sorted);
    memcpy(sorted, ns, samples * sizeof *ns);
    qsort(sorted, samples, sizeof *sorted, cmp);
    printf("%.3f", sorted[samples / 2]);
    for (int s = 0; s < samples; s++) printf(" %.3f", ns[s]);
    printf("\n");
    return p == 0;
}
