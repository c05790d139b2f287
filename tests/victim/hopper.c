/*
 * hopper: a thread to move between nodes, for numasleuth's migrations
 * test in the 2-node QEMU guest. The main thread spins (the test flips its
 * affinity from outside with taskset); a second thread pins itself to one
 * CPU and spins, so it must show no move at all.
 *
 * With --self-hop-ms N the main thread moves itself instead, between
 * CPUs 0 and 2 (nodes 0 and 1 in the guest) every N ms, spinning in
 * between: a steady rate of node changes that a starved emulator cannot
 * slow to nothing, as it can the fork and exec of each outside `taskset`.
 *
 * Build: gcc -O1 -static -pthread hopper.c -o hopper
 * Usage: hopper [--pinned-cpu N] [--self-hop-ms N]   (runs until killed)
 * Prints one line once both threads run:
 *   hopper pid=123 pinned_tid=124
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pinned_cpu = 1;
static int self_hop_ms;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void move_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        perror("hopper: hop");
        exit(2);
    }
}
static volatile pid_t pinned_tid;

static void *pinned(void *arg) {
    (void)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pinned_cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        perror("hopper: pin");
        exit(2);
    }
    pinned_tid = (pid_t)syscall(SYS_gettid);
    volatile unsigned long spins = 0;
    for (;;)
        spins++;
    return NULL;
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--pinned-cpu") == 0)
            pinned_cpu = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--self-hop-ms") == 0)
            self_hop_ms = atoi(argv[i + 1]);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, pinned, NULL) != 0) {
        perror("hopper: pthread_create");
        return 1;
    }
    while (pinned_tid == 0)
        sched_yield();
    printf("hopper pid=%d pinned_tid=%d\n", (int)getpid(), (int)pinned_tid);
    fflush(stdout);
    volatile unsigned long spins = 0;
    /* Spinning between hops (not sleeping) keeps the thread's stack line
     * hot from both nodes, as a thread that hops while it works does. */
    for (int cpu = 0; self_hop_ms > 0; cpu = 2 - cpu) {
        move_to(cpu);
        double until = now_ms() + self_hop_ms;
        while (now_ms() < until)
            spins++;
    }
    for (;;)
        spins++;
}
