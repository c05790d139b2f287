/* Memory pressure on one node, for the memwatch guest test.
 *
 * Prefers node NODE (MPOL_PREFERRED, so the kernel falls back to another
 * node once NODE is at its low watermark instead of failing), touches MIB
 * MiB of fresh anonymous memory, holds it for HOLD_MS and exits, which
 * gives the memory back at once.
 *
 * Usage: pressure MIB NODE HOLD_MS
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_PREFERRED 1

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: pressure MIB NODE HOLD_MS\n");
        return 2;
    }
    long mib = atol(argv[1]);
    int node = atoi(argv[2]);
    long hold_ms = atol(argv[3]);
    if (mib <= 0 || node < 0 || node > 63 || hold_ms < 0) {
        fprintf(stderr, "pressure: bad arguments\n");
        return 2;
    }
    unsigned long mask = 1UL << node;
    if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask, 8 * sizeof(mask)) != 0) {
        perror("set_mempolicy");
        return 1;
    }
    size_t bytes = (size_t)mib << 20;
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (size_t i = 0; i < bytes; i += 4096)
        p[i] = 1;
    printf("touched %ld MiB preferring node %d\n", mib, node);
    fflush(stdout);
    usleep(hold_ms * 1000);
    return 0;
}
