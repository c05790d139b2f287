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
 * Usage: hotcold [--mib N] [--cpu N]
 * Prints one line once both are resident:
 *   hotcold pid=123 hot=0x7f...-0x7f... cold=0x7f...-0x7f...
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    if (mib < 1 || mib > 4096)
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
    for (uint64_t round = 0;; round++)
        for (size_t off = 0; off < bytes; off += PAGE)
            ((volatile char *)hot)[off + (round & 63)] = (char)round;
    return 0;
}
