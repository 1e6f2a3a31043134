/* Shared by every quadscope workload (prepended by workloads/__init__.py).
 * Each workload reads n from argv[1], does its growing work in a noinline
 * function (so a sampling profiler can name it), and prints a checksum so
 * the compiler cannot drop the work. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t qs_sink;

/* n from argv[1]: a decimal integer (1e6 style accepted too). */
static uint64_t qs_arg_n(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s N\n", argv[0]);
        exit(2);
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(argv[1], &end, 10);
    if (errno == 0 && end && *end == '\0') return (uint64_t)v;
    double d = strtod(argv[1], &end);
    if (end && *end == '\0' && d >= 0) return (uint64_t)d;
    fprintf(stderr, "%s: not a size: %s\n", argv[0], argv[1]);
    exit(2);
}

/* splitmix64: a cheap deterministic stream for inputs. */
static inline uint64_t qs_mix(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void qs_done(uint64_t checksum) {
    qs_sink = checksum;
    printf("%llu\n", (unsigned long long)checksum);
}
