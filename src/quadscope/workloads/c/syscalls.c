/* O(n) in the kernel: n getppid() calls and n one-byte writes to /dev/null,
 * so sys_s grows as n while user time stays small. */
NOINLINE static uint64_t make_syscalls(uint64_t n) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) { perror("/dev/null"); exit(1); }
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)getppid();
        if (write(fd, "x", 1) != 1) { perror("write"); exit(1); }
    }
    close(fd);
    return acc;
}
int main(int argc, char **argv) {
    qs_done(make_syscalls(qs_arg_n(argc, argv)));
    return 0;
}
