/*
 * packed: false sharing, for numasleuth's tests. Each worker thread
 * increments its own counter, but the counters are packed 8 bytes apart,
 * so two workers write different bytes of one cache line and the line
 * moves between their caches on every increment: `hotlines` and
 * `doctor -p` must report false sharing on `counters`. padded.c is its
 * cure: the same program with each counter on its own 128 bytes.
 *
 * Build: gcc -O1 -g -pthread packed.c -o packed
 * Usage: packed [--workers N]   (runs until killed)
 * Prints one line on start: "packed pid=123 workers=N counters=0x..."
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORKERS 8

struct packed {
    volatile uint64_t value;
};

/* 8 counters of 8 bytes: one 64-byte line. */
static struct packed counters[MAX_WORKERS] __attribute__((aligned(64)));

static void *work(void *arg) {
    struct packed *mine = arg;
    for (;;)
        mine->value++;
    return NULL;
}

int main(int argc, char **argv) {
    int workers = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--workers") == 0)
            workers = atoi(argv[i + 1]);
    }
    if (workers < 1 || workers > MAX_WORKERS) {
        fprintf(stderr, "packed: --workers 1..%d\n", MAX_WORKERS);
        return 2;
    }
    printf("packed pid=%d workers=%d counters=%p\n", (int)getpid(), workers, (void *)counters);
    fflush(stdout);
    for (int i = 0; i < workers; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, &counters[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    for (;;)
        pause();
}
