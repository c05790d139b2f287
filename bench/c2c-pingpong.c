/*
 * A bare core-to-core ping-pong, used to capture the 16-vCPU matrices in
 * crates/analyze/src/fixtures/c2c_vm16_order_*.txt on a machine where no
 * numasleuth build could be copied. Not part of the tool.
 *
 * The calling thread pins itself to CPU a, a fresh thread pins itself to
 * CPU b, and the two CAS one 128-byte-aligned word between even and odd
 * values ROUNDS times; a pair's figure is the elapsed time / ROUNDS / 2
 * (one way). One pass, no warm-up: which is why the first pair after the
 * calling thread moves to a new CPU can come out fast (see the fixtures).
 *
 * usage: c2c-pingpong CPUS [reverse]
 * prints: the CPUS×CPUS matrix in ns, '-' on the diagonal
 * build:  gcc -O2 -pthread -o c2c-pingpong bench/c2c-pingpong.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 20000
#define MAX_CPUS 256

static _Atomic long line __attribute__((aligned(128)));

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void *pong(void *arg) {
    pin((int)(long)arg);
    for (long i = 0; i < ROUNDS; i++) {
        long expected = 2 * i + 1;
        while (!atomic_compare_exchange_weak(&line, &expected, expected + 1))
            expected = 2 * i + 1;
    }
    return NULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static double pair(int a, int b) {
    atomic_store(&line, 0);
    pthread_t thread;
    pthread_create(&thread, NULL, pong, (void *)(long)b);
    pin(a);
    double start = now_ns();
    for (long i = 0; i < ROUNDS; i++) {
        long expected = 2 * i;
        while (!atomic_compare_exchange_weak(&line, &expected, expected + 1))
            expected = 2 * i;
    }
    double elapsed = now_ns() - start;
    pthread_join(thread, NULL);
    return elapsed / ROUNDS / 2;
}

static double m[MAX_CPUS][MAX_CPUS];

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int reverse = argc > 2 && !strcmp(argv[2], "reverse");
    if (n < 2 || n > MAX_CPUS) {
        fprintf(stderr, "usage: %s CPUS [reverse]  (2 to %d CPUs)\n", argv[0], MAX_CPUS);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        int a = reverse ? n - 1 - i : i;
        for (int j = 0; j < n; j++) {
            int b = reverse ? n - 1 - j : j;
            if (b > a)
                m[a][b] = m[b][a] = pair(a, b);
        }
    }
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++)
            a == b ? printf("- ") : printf("%.1f ", m[a][b]);
        printf("\n");
    }
    return 0;
}
