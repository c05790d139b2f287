/*
 * The cost floor of reading a tree's small files, for bench/RESULTS.md
 * (issue 22, item 10): each regular file under DIR (the first N that
 * nftw finds) is opened through its directory's descriptor, read once and
 * closed, as a reader that does nothing else would; then each is
 * fstatat'ed, the check numasleuth makes before opening a file of an
 * untrusted tree (docs/security.md). Directories are opened beforehand and
 * not timed. Five rounds; prints microseconds per file and the total, in
 * CPU time of this process (what perf's task-clock counts of numasleuth),
 * so a busy host's waits do not inflate the floor.
 *
 *   gcc -O2 bench/read-floor.c -o /tmp/read-floor
 *   /tmp/read-floor CAPTURE/sys 2746
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int *dir_fds;
static char **names;
static int files, room;
static char last_dir[4096];
static int last_fd = -1;

static int add(const char *path, const struct stat *st, int type, struct FTW *at) {
    if (type != FTW_F || !S_ISREG(st->st_mode) || at->base >= (int)sizeof last_dir)
        return 0;
    if (strncmp(path, last_dir, at->base) || last_dir[at->base]) {
        memcpy(last_dir, path, at->base);
        last_dir[at->base] = 0;
        last_fd = open(last_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (files == room) {
        room = room ? room * 2 : 1024;
        dir_fds = realloc(dir_fds, room * sizeof *dir_fds);
        names = realloc(names, room * sizeof *names);
        if (!dir_fds || !names)
            exit(1);
    }
    dir_fds[files] = last_fd;
    names[files++] = strdup(path + at->base);
    return 0;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: read-floor DIR [FILES]\n");
        return 2;
    }
    if (nftw(argv[1], add, 4000, FTW_PHYS) != 0 || files == 0) {
        fprintf(stderr, "read-floor: no regular file under %s\n", argv[1]);
        return 1;
    }
    int count = argc > 2 ? atoi(argv[2]) : files;
    if (count <= 0 || count > files)
        count = files;
    char buffer[4096];
    struct stat st;
    for (int round = 0; round < 5; round++) {
        double start = now_us();
        for (int i = 0; i < count; i++) {
            int fd = openat(dir_fds[i], names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd >= 0) {
                if (read(fd, buffer, sizeof buffer) < 0)
                    perror("read");
                close(fd);
            }
        }
        double opened = now_us();
        for (int i = 0; i < count; i++)
            fstatat(dir_fds[i], names[i], &st, AT_SYMLINK_NOFOLLOW);
        double checked = now_us();
        printf("%d files: openat+read+close %.2f us/file (%.1f ms), fstatat %.2f us/file (%.1f ms)\n", count,
               (opened - start) / count, (opened - start) / 1000, (checked - opened) / count,
               (checked - opened) / 1000);
    }
    return 0;
}
