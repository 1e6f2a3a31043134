/* Accumulating cost: each launch picks the first free name app.0.dat,
 * app.1.dat, ... in DIR by probing them in order (like GetTempFileName with
 * uUnique = 0, or a logger that never rotates old files away), reading each
 * existing file's header on the way, then creates the free one with
 * O_CREAT|O_EXCL and writes the number of names it probed into it. Launch k in
 * a fresh DIR therefore probes k taken names: per-launch cost grows linearly
 * with the launch index and the total over K launches as K^2.
 * usage: log_probe DIR [LAUNCH_INDEX] (the index is only echoed). */
NOINLINE static int header_ok(const char *path) {
    char buf[64];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t got = read(fd, buf, sizeof buf);
    close(fd);
    return got > 5 && memcmp(buf, "probe", 5) == 0;
}
NOINLINE static long probe_free_name(const char *dir, char *path, size_t cap, int *fd_out) {
    for (long k = 0;; k++) {
        snprintf(path, cap, "%s/app.%ld.dat", dir, k);
        if (access(path, F_OK) == 0) {
            struct stat st;
            if (stat(path, &st) == 0) qs_sink += (uint64_t)st.st_size + (uint64_t)header_ok(path);
            continue;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) { *fd_out = fd; return k; }
        if (errno != EEXIST) { perror(path); exit(1); }
    }
}
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s DIR [INDEX]\n", argv[0]); return 2; }
    char path[4096];
    int fd = -1;
    long probes = probe_free_name(argv[1], path, sizeof path, &fd);
    char line[128];
    int len = snprintf(line, sizeof line, "probe-log v1 probes=%ld launch=%s\n", probes,
                       argc > 2 ? argv[2] : "?");
    if (write(fd, line, (size_t)len) != len) { perror(path); return 1; }
    close(fd);
    qs_done((uint64_t)probes);
    return 0;
}
