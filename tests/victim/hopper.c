/*
 * hopper: a thread to move between nodes, for numasleuth's migrations
 * test in the 2-node QEMU guest. The main thread spins (the test flips its
 * affinity from outside with taskset); a second thread pins itself to one
 * CPU and spins, so it must show no move at all.
 *
 * Build: gcc -O1 -static -pthread hopper.c -o hopper
 * Usage: hopper [--pinned-cpu N]   (default 1; runs until killed)
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
#include <unistd.h>

static int pinned_cpu = 1;
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
    for (;;)
        spins++;
}
