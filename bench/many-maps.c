/*
 * many-maps: a synthetic process with N separate mappings, for timing
 * `numasleuth inspect` against `numastat -p` (bench/inspect-50k.sh).
 *
 * One big anonymous reservation is split into N one-page mappings by
 * giving neighbours different protections (read-write, read-only), so the
 * kernel cannot merge them; every page is touched first, so numa_maps has
 * a resident page per mapping. Prints its PID, then sleeps until killed.
 *
 * Build: gcc -O2 many-maps.c -o many-maps; run: many-maps 50000
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 50000;
    long page = sysconf(_SC_PAGESIZE);
    if (n < 1)
        return 2;
    char *base = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("many-maps: mmap");
        return 2;
    }
    for (long i = 0; i < n; i++)
        base[i * page] = 1;
    for (long i = 1; i < n; i += 2)
        if (mprotect(base + i * page, (size_t)page, PROT_READ) != 0) {
            perror("many-maps: mprotect (vm.max_map_count too low?)");
            return 2;
        }
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}
