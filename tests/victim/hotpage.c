/*
 * hotpage: a service whose rate depends on where one page of its .bss
 * lives, for `numasleuth bisect` tests in QEMU guests. Never used in
 * production.
 *
 * It pins itself to --work-cpu (default 0, node 0 in the 2-node guest),
 * first-touches a dozen .bss pages there, and then, every 20 ms, asks the
 * kernel where the page of its hot global `hot_counter` is
 * (get_mempolicy MPOL_F_NODE|MPOL_F_ADDR) and which node it runs on, and
 * writes its rate to --rate-file: 100000 ops/s while the page is local,
 * 48000 while it is remote (the incident's ratio). The other pages do not
 * matter, so a bisection over .bss must end on hot_counter's page.
 *
 * Timing under QEMU TCG means nothing, so the rate is modelled from what
 * the kernel says, not measured.
 *
 * Build: gcc -O1 -g -static hotpage.c -o hotpage
 * With --touch-cpu N the pages are first touched on CPU N and the work
 * then moves to --work-cpu: the incident's service that started on one
 * socket and serves from the other, with its .bss left behind.
 *
 * Usage: hotpage [--work-cpu N] [--touch-cpu N] [--seconds S] [--rate-file PATH]
 * Prints: hotpage pid=123 hot=0x4c7000
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_F_NODE (1 << 0)
#define MPOL_F_ADDR (1 << 1)
#define PAGE 4096

/* Cold pages on both sides of the hot one, so the search has to halve. */
__attribute__((aligned(PAGE))) static volatile char cold_before[6][PAGE];
__attribute__((aligned(PAGE))) volatile uint64_t hot_counter;
static char pad_after_hot[PAGE - sizeof(uint64_t)] __attribute__((used));
__attribute__((aligned(PAGE))) static volatile char cold_after[5][PAGE];

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int page_node(volatile void *addr) {
    int node = -1;
    if (syscall(SYS_get_mempolicy, &node, NULL, 0, (void *)addr, MPOL_F_NODE | MPOL_F_ADDR) != 0)
        return -1;
    return node;
}

static unsigned cpu_node(void) {
    unsigned cpu, node;
    if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0)
        return ~0u;
    return node;
}

/* Written whole and renamed, so a reader never sees half a line. */
static void write_rate(const char *path, double rate) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "ops/s: %.0f\n", rate);
    fclose(f);
    rename(tmp, path);
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("hotpage: sched_setaffinity");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    int work_cpu = 0, touch_cpu = -1;
    double seconds = 600;
    const char *rate_file = "/tmp/rate";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--work-cpu"))
            work_cpu = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--touch-cpu"))
            touch_cpu = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate-file"))
            rate_file = argv[i + 1];
    }
    /* First touch of every page, on the touch CPU's node. */
    if (pin(touch_cpu >= 0 ? touch_cpu : work_cpu) != 0)
        return 1;
    for (int p = 0; p < 6; p++)
        cold_before[p][0] = 1;
    for (int p = 0; p < 5; p++)
        cold_after[p][0] = 1;
    hot_counter = 1;
    if (pin(work_cpu) != 0)
        return 1;
    printf("hotpage pid=%d hot=%p\n", getpid(), (void *)&hot_counter);
    fflush(stdout);
    double start = now_s();
    while (now_s() - start < seconds) {
        for (int k = 0; k < 1000; k++)
            hot_counter++;
        int remote = page_node(&hot_counter) != (int)cpu_node();
        write_rate(rate_file, remote ? 48000.0 : 100000.0);
        usleep(20000);
    }
    return 0;
}
