/*
 * bimodal: the incident's bimodal throughput, made deterministic for
 * `numasleuth runs` tests in QEMU guests. Never used in production.
 *
 * The process first-touches its hot global `hot_counter` (.bss) on the CPU
 * it was started on, so the page lands on that CPU's node. It then waits
 * until its affinity is widened from outside (`runs --release-after`),
 * and moves its work to --work-cpu (default 0, node 0 in the 2-node
 * guest), as a service that starts anywhere and then serves from the
 * socket its clients are on. It asks the kernel where the hot page is
 * (get_mempolicy MPOL_F_NODE|MPOL_F_ADDR) and which node it runs on
 * (getcpu), and when the page is remote it does the extra work a remote
 * line costs (3 times the writes) and reports the incident's slow rate.
 *
 * Timing under QEMU TCG means nothing, so the printed rate is modelled
 * from what the kernel says, not measured: 100000 ops/s local, 48000 ops/s
 * remote (the incident's ratio), with ±1% spread derived from the PID so
 * the runs are not identical.
 *
 * Build: gcc -O1 -g -static bimodal.c -o bimodal
 * Usage: bimodal [--work-cpu N] [--seconds S]
 * Prints:
 *   bimodal start_cpu=2 page_node=1 work_cpu=0 work_node=0 released=yes remote=yes
 *   ops/s: 48123
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

/* Alone on its page, so its node is the node of exactly this global. */
__attribute__((aligned(4096))) volatile uint64_t hot_counter;
static char pad_after[4096 - sizeof(uint64_t)] __attribute__((used));

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int allowed_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    return CPU_COUNT(&set);
}

static int page_node(volatile void *addr) {
    int node = -1;
    if (syscall(SYS_get_mempolicy, &node, NULL, 0, (void *)addr, MPOL_F_NODE | MPOL_F_ADDR) != 0)
        return -1;
    return node;
}

static void cpu_and_node(unsigned *cpu, unsigned *node) {
    if (syscall(SYS_getcpu, cpu, node, NULL) != 0)
        *cpu = *node = ~0u;
}

int main(int argc, char **argv) {
    int work_cpu = 0;
    double seconds = 1.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--work-cpu"))
            work_cpu = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
    }
    unsigned start_cpu, start_node;
    cpu_and_node(&start_cpu, &start_node);
    /* First touch, on the start CPU. */
    hot_counter = 1;
    int node = page_node(&hot_counter);

    /* Wait (at most 5 s) for the release from outside. */
    double t0 = now_s();
    int released = 0;
    while (now_s() - t0 < 5.0) {
        if (allowed_cpus() > 1) {
            released = 1;
            break;
        }
        usleep(10000);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(work_cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("bimodal: sched_setaffinity");
        return 1;
    }
    unsigned cpu, cpu_node;
    cpu_and_node(&cpu, &cpu_node);
    int remote = node >= 0 && (unsigned)node != cpu_node;
    printf("bimodal start_cpu=%u start_node=%u page_node=%d work_cpu=%u work_node=%u released=%s remote=%s\n",
           start_cpu, start_node, node, cpu, cpu_node, released ? "yes" : "no", remote ? "yes" : "no");
    fflush(stdout);

    /* The work: writes to the hot global, three times as many when each
     * write is a remote invalidation, until the time is up. */
    uint64_t ops = 0;
    int writes = remote ? 9 : 3;
    double start = now_s();
    while (now_s() - start < seconds) {
        for (int k = 0; k < 1000; k++) {
            for (int w = 0; w < writes; w++)
                hot_counter++;
            ops++;
        }
    }
    double jitter = 1.0 + 0.005 * (double)((getpid() % 5) - 2);
    double modelled = (remote ? 48000.0 : 100000.0) * jitter;
    printf("ops done: %llu\n", (unsigned long long)ops);
    printf("ops/s: %.0f\n", modelled);
    return 0;
}
