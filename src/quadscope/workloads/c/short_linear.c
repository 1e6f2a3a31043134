/* O(n), short: a serial hash chain whose largest run takes ~20 ms, so
 * user_s (read from rusage, accounted at the scheduler's tick) is coarse. */
NOINLINE static uint64_t short_chain(uint64_t n) {
    uint64_t x = 7;
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i ^ (x >> 29));
    return x;
}
int main(int argc, char **argv) {
    qs_done(short_chain(qs_arg_n(argc, argv)));
    return 0;
}
