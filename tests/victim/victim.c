/*
 * victim: the database incident in miniature, for numasleuth's tests and
 * demos. Never used in production.
 *
 * Worker threads each do a small operation on their own local data and
 * write the hot global `nil_root` about 3 times per operation. `nil_root`
 * shares its 64-byte cache line with the read-mostly `log_level`, which
 * every operation reads once: the "innocent load that looks guilty".
 *
 * The main thread can first-touch the globals (and so place their pages)
 * on one CPU before the workers start on others: in a 2-node guest,
 * `--start-cpu 2 --worker-cpus 0-1` puts .bss on node 1 and every worker on
 * node 0, which is the incident.
 *
 * Build: gcc -O1 -g -pthread -fno-toplevel-reorder victim.c -o victim
 * (add -static for QEMU guests). -fno-toplevel-reorder keeps globals in
 * the order written, so the line-sharing is deterministic.
 *
 * Usage: victim [--workers N] [--worker-cpus LIST] [--start-cpu N]
 *               [--seconds N] [--quiet-workers] [--churn-us N]
 * --workers 0: only the main thread, asleep after first-touching the
 *   globals (a service started, then pinned from outside with taskset).
 * --quiet-workers: workers burn CPU without touching any global, so the
 *   NUMA-balancing scanner marks the globals' pages PROT_NONE and nothing
 *   ends those hinting faults (the state move_pages cannot see on 6.1).
 *   They never stop; the process exits on SIGTERM without joining them.
 * --churn-us N: every N microseconds each worker maps, touches and unmaps
 *   256 KiB, as an allocator returning memory does. Unmapping more than 33
 *   pages flushes the process's TLB on every CPU it runs on, so the next
 *   access to each page walks the page tables and sets its accessed bit
 *   again: DAMON (`hotpages`) sees accesses only that way, and in a TCG
 *   guest, without it, a worker alone on its CPU keeps its few pages in
 *   the TLB and they look cold.
 * Compiled with -DLOCAL_LINES=N, each operation works on N of its 64
 * thread-local cache lines (default all 64) before it writes nil_root. On
 * hardware the writes to the shared line are slow and draw the timer's
 * samples; an emulator (QEMU TCG) charges every instruction alike, so
 * with 64 lines nil_root draws about 1% of the sampled accesses, under the
 * 5% a finding needs. With 4 it draws about a third, as the contention
 * does on hardware (the aarch64 guest, crates/testbed/tests/it/arm64_guest.rs).
 * Prints one line on start:
 *   victim pid=123 nil_root=0x... log_level=0x... same_line=yes
 * and at the end "victim ops=N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 256
#define LOCAL_WORDS 512
#ifndef LOCAL_LINES
#define LOCAL_LINES (LOCAL_WORDS / 8)
#endif

/* The hot global and its innocent neighbour: one cache line, in .bss. */
__attribute__((aligned(64))) volatile uintptr_t nil_root;
volatile int log_level;
/* Read by every worker on every batch: on nil_root's page (so the only
 * static page the workers touch while they run is that one, as DAMON-based
 * `hotpages` tests expect), on a line of its own (so it is not part of the
 * line-sharing). */
static __attribute__((aligned(64))) volatile sig_atomic_t stop;
/* More static data, so .bss and .data are not trivially small. */
static uint64_t ops_per_worker[MAX_WORKERS];
static char scratch[3 * 4096];
int op_batch = 16;              /* .data */
const char *victim_name = "victim"; /* .data (pointer) */

static int quiet_workers;
static long churn_us;
#define CHURN_BYTES (256 * 1024)

struct worker {
    int index;
    int cpu; /* -1: not pinned */
};

static void pin_to(int cpu) {
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "victim: cannot pin to CPU %d\n", cpu);
        exit(2);
    }
}

/* One operation: some work on thread-local data, then ~3 writes of the
 * global, as the database wrote its root pointer. */
static uint64_t apply_op(uint64_t *local, uint64_t seed) {
    uint64_t h = seed;
    for (int i = 0; i < LOCAL_LINES * 8; i += 8) {
        h = h * 6364136223846793005ULL + local[i];
        local[i] = h;
    }
    nil_root = (uintptr_t)local;
    if (log_level > 3)
        fprintf(stderr, "op %llu\n", (unsigned long long)h);
    nil_root = (uintptr_t)h;
    nil_root = 0;
    return h;
}

/* Maps, touches and unmaps CHURN_BYTES (see --churn-us). */
static void churn(void) {
    char *p = mmap(NULL, CHURN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (size_t off = 0; off < CHURN_BYTES; off += 4096)
        p[off] = 1;
    munmap(p, CHURN_BYTES);
}

static void *work(void *arg) {
    struct worker *w = arg;
    pin_to(w->cpu);
    uint64_t local[LOCAL_WORDS];
    memset(local, w->index + 1, sizeof(local));
    uint64_t h = (uint64_t)w->index, n = 0;
    /* Read once: no static data but nil_root's page (nil_root, log_level,
     * stop) is touched while the worker runs. */
    const int batch = op_batch;
    const long churn_every_us = churn_us;
    struct timespec last, now;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!stop) {
        for (int i = 0; i < batch; i++)
            h = apply_op(local, h);
        n += (uint64_t)batch;
        if (churn_every_us > 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long us = (now.tv_sec - last.tv_sec) * 1000000L + (now.tv_nsec - last.tv_nsec) / 1000L;
            if (us >= churn_every_us) {
                churn();
                last = now;
            }
        }
    }
    ops_per_worker[w->index] = n + (h & 0); /* keep h alive */
    return NULL;
}

/* Keeps the process runnable (the scanner only scans a running task's
 * memory) while touching nothing but registers and its own stack. */
static void *spin(void *arg) {
    struct worker *w = arg;
    pin_to(w->cpu);
    volatile uint64_t n = 0;
    for (;;)
        n++;
    return NULL;
}

/* "0-1,3" into cpus[]; returns how many, or -1 on bad input. */
static int parse_cpus(const char *text, int *cpus, int max) {
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0)
            return -1;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                return -1;
        }
        for (long c = a; c <= b; c++) {
            if (n == max)
                return -1;
            cpus[n++] = (int)c;
        }
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        p = end;
    }
    return n;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static void usage(void) {
    fprintf(stderr, "usage: victim [--workers N] [--worker-cpus LIST] [--start-cpu N] [--seconds N] [--quiet-workers] [--churn-us N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    int workers = 2, start_cpu = -1, seconds = 0, ncpus = 0;
    int cpus[MAX_WORKERS];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet-workers")) {
            quiet_workers = 1;
            continue;
        }
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value)
            usage();
        if (!strcmp(argv[i], "--workers"))
            workers = atoi(value);
        else if (!strcmp(argv[i], "--worker-cpus")) {
            ncpus = parse_cpus(value, cpus, MAX_WORKERS);
            if (ncpus <= 0)
                usage();
        } else if (!strcmp(argv[i], "--start-cpu"))
            start_cpu = atoi(value);
        else if (!strcmp(argv[i], "--churn-us"))
            churn_us = atol(value);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atoi(value);
        else
            usage();
        i++;
    }
    if (workers < 0 || workers > MAX_WORKERS)
        usage();

    /* First touch: the globals' pages are allocated on this CPU's node.
     * execve itself and the C library's start-up already wrote .data and
     * .bss pages on whatever CPU launched us, so pin, then exec ourselves
     * again: the new image is loaded, and first-touched, on the start CPU,
     * as when a process simply starts on a core of the other socket. */
    if (start_cpu >= 0 && !getenv("VICTIM_ON_START_CPU")) {
        pin_to(start_cpu);
        setenv("VICTIM_ON_START_CPU", "1", 1);
        /* The real path, not /proc/self/exe, so comm stays "victim". */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n > 0) {
            self[n] = '\0';
            execv(self, argv);
        }
        fprintf(stderr, "victim: cannot re-exec on CPU %d; globals may already be placed\n", start_cpu);
    }
    pin_to(start_cpu);
    nil_root = 1;
    log_level = 1;
    memset(scratch, 1, sizeof(scratch));
    memset(ops_per_worker, 0, sizeof(ops_per_worker));
    char *heap = malloc(64 * 4096);
    if (!heap)
        return 2;
    memset(heap, 1, 64 * 4096);

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    int same_line = ((uintptr_t)&nil_root / 64) == ((uintptr_t)&log_level / 64);
    printf("victim pid=%d nil_root=%p log_level=%p heap=%p same_line=%s\n", (int)getpid(), (void *)&nil_root,
           (void *)&log_level, (void *)heap, same_line ? "yes" : "no");
    fflush(stdout);

    pthread_t threads[MAX_WORKERS];
    struct worker args[MAX_WORKERS];
    for (int i = 0; i < workers; i++) {
        args[i].index = i;
        args[i].cpu = ncpus ? cpus[i % ncpus] : -1;
        if (pthread_create(&threads[i], NULL, quiet_workers ? spin : work, &args[i]) != 0)
            return 2;
    }
    /* The main thread only waits: it moves to the workers' CPUs too, so
     * "where the threads run" is where the workers run. */
    if (ncpus) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int i = 0; i < ncpus; i++)
            CPU_SET(cpus[i], &set);
        sched_setaffinity(0, sizeof(set), &set);
    }
    if (seconds > 0) {
        struct timespec until = {seconds, 0};
        while (!stop && nanosleep(&until, &until) != 0)
            ;
        stop = 1;
    } else {
        while (!stop)
            pause();
    }
    if (quiet_workers)
        return 0; /* spinners never stop: exit takes them down */
    uint64_t total = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join(threads[i], NULL);
        total += ops_per_worker[i];
    }
    printf("victim ops=%llu\n", (unsigned long long)total);
    free(heap);
    return 0;
}
