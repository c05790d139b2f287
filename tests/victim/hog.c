/*
 * hog: fills one node's memory in paced chunks, preferring that node
 * (MPOL_PREFERRED), so that in a QEMU guest the node sinks to its low
 * watermark, kswapd wakes and later allocations fall back to the other
 * node (numa_miss / numa_foreign): the memory story `probe-latency` lines
 * its spikes up against. Never used in production.
 *
 * Build: gcc -O1 -g -static hog.c -o hog
 * Usage: hog NODE MIB [CHUNK_PAUSE_MS]
 * Touches MIB MiB in 8 MiB chunks, pausing between chunks, prints
 * "hog done MIB", then holds the memory until killed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_PREFERRED 1
#define CHUNK_BYTES (8UL << 20)

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: hog NODE MIB [CHUNK_PAUSE_MS]\n");
        return 2;
    }
    unsigned long node = strtoul(argv[1], NULL, 10);
    unsigned long mib = strtoul(argv[2], NULL, 10);
    unsigned long pause_ms = argc > 3 ? strtoul(argv[3], NULL, 10) : 20;
    if (node >= 64 || mib == 0 || mib > 65536) {
        fprintf(stderr, "hog: NODE must be < 64 and MIB 1..65536\n");
        return 2;
    }
    unsigned long mask = 1UL << node;
    if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask, 65UL) != 0) {
        perror("hog: set_mempolicy");
        return 1;
    }
    unsigned long chunks = (mib << 20) / CHUNK_BYTES;
    for (unsigned long i = 0; i < chunks; i++) {
        char *p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("hog: mmap");
            return 1;
        }
        memset(p, 0x5a, CHUNK_BYTES);
        usleep(pause_ms * 1000);
    }
    printf("hog done %lu\n", mib);
    fflush(stdout);
    for (;;)
        pause();
}
