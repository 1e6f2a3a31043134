/* The fix for log_probe: name the new file by time and pid
 * (app.<sec>.<nsec>.<pid>.dat) and create it with one O_CREAT|O_EXCL, so
 * every launch costs the same however many files DIR already holds.
 * usage: log_fixed DIR [LAUNCH_INDEX] (the index is only echoed). */
NOINLINE static int create_unique(const char *dir, char *path, size_t cap) {
    struct timespec ts;
    for (int attempt = 0;; attempt++) {
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(path, cap, "%s/app.%lld.%09ld.%d.%d.dat", dir, (long long)ts.tv_sec,
                 ts.tv_nsec, (int)getpid(), attempt);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) return fd;
        if (errno != EEXIST) { perror(path); exit(1); }
    }
}
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s DIR [INDEX]\n", argv[0]); return 2; }
    char path[4096];
    int fd = create_unique(argv[1], path, sizeof path);
    char line[128];
    int len = snprintf(line, sizeof line, "probe-log v1 probes=0 launch=%s\n",
                       argc > 2 ? argv[2] : "?");
    if (write(fd, line, (size_t)len) != len) { perror(path); return 1; }
    close(fd);
    qs_done(0);
    return 0;
}
