/*
 * hotcold: one hot and one cold region of memory, for `numasleuth
 * hotpages` tests and the comparison with damo. Never used in production.
 *
 * It maps two anonymous regions of --mib MiB each (default 64), with an
 * unmapped guard page between them, writes every page of both once (so
 * both are resident), and then, until killed, keeps writing one byte of
 * every page of the hot region and never touches the cold one again. A
 * monitor that samples access bits must find the hot region and leave the
 * cold one out.
 *
 * Build: gcc -O1 -g hotcold.c -o hotcold (add -static for QEMU guests)
 * Usage: hotcold [--mib N (a multiple of 4)] [--cpu N]
 * Prints one line once both are resident:
 *   hotcold pid=123 hot=0x7f...-0x7f... cold=0x7f...-0x7f...
 * and then, about once a second, how fast it went, for the slowdown a
 * monitor causes:
 *   rate pages_per_s=123456
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static void usage(void) {
    fprintf(stderr, "usage: hotcold [--mib N] [--cpu N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    long mib = 64;
    int cpu = -1;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value)
            usage();
        if (!strcmp(argv[i], "--mib"))
            mib = atol(value);
        else if (!strcmp(argv[i], "--cpu"))
            cpu = atoi(value);
        else
            usage();
        i++;
    }
    if (mib < 4 || mib > 4096 || mib % 4 != 0) /* whole 4 MiB slices */
        usage();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0) {
            fprintf(stderr, "hotcold: cannot pin to CPU %d\n", cpu);
            return 2;
        }
    }
    size_t bytes = (size_t)mib << 20;
    /* One mapping, then a page in the middle unmapped: two regions that
     * never merge into one mapping. */
    char *base = mmap(NULL, 2 * bytes + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("hotcold: mmap");
        return 2;
    }
    if (munmap(base + bytes, PAGE) != 0) {
        perror("hotcold: munmap");
        return 2;
    }
    char *hot = base, *cold = base + bytes + PAGE;
    /* No transparent huge pages: the regions stay in 4 KiB pages, as the
     * comparison assumes. */
    madvise(hot, bytes, MADV_NOHUGEPAGE);
    madvise(cold, bytes, MADV_NOHUGEPAGE);
    for (size_t off = 0; off < bytes; off += PAGE) {
        hot[off] = 1;
        cold[off] = 1;
    }
    printf("hotcold pid=%d hot=%p-%p cold=%p-%p\n", (int)getpid(), (void *)hot, (void *)(hot + bytes),
           (void *)cold, (void *)(cold + bytes));
    fflush(stdout);
    struct timespec last, now;
    clock_gettime(CLOCK_MONOTONIC, &last);
    uint64_t pages = 0;
    for (uint64_t round = 0;; round++) {
        /* A slice of 4 MiB at a time, so the clock is read often enough. */
        size_t slice = (round % (bytes / (4u << 20))) * (4u << 20);
        for (size_t off = slice; off < slice + (4u << 20); off += PAGE)
            ((volatile char *)hot)[off + (round & 63)] = (char)round;
        pages += (4u << 20) / PAGE;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double s = (double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9;
        if (s >= 1.0) {
            printf("rate pages_per_s=%.0f\n", (double)pages / s);
            fflush(stdout);
            pages = 0;
            last = now;
        }
    }
    return 0;
}
