/*
 * padded: the cure for false sharing, for numasleuth's tests. Each worker
 * thread increments its own counter, padded to 128 bytes (a line and its
 * adjacent-line prefetch partner), so no two threads ever touch one cache
 * line: `hotlines` must find no contended line.
 *
 * Build: gcc -O1 -g -pthread padded.c -o padded
 * Usage: padded [--workers N]   (runs until killed)
 * Prints one line on start: "padded pid=123 workers=N counters=0x..."
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORKERS 64

struct padded {
    volatile uint64_t value;
    char pad[128 - sizeof(uint64_t)];
};

static struct padded counters[MAX_WORKERS] __attribute__((aligned(128)));

static void *work(void *arg) {
    struct padded *mine = arg;
    /* No shared flag: the loop touches only this thread's line and its
     * own stack; the process ends by signal. */
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
        fprintf(stderr, "padded: --workers 1..%d\n", MAX_WORKERS);
        return 2;
    }
    printf("padded pid=%d workers=%d counters=%p\n", (int)getpid(), workers, (void *)counters);
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
