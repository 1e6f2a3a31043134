/* O(n) under a large constant: ~150 ms of fixed start-up work, then a linear
 * pass whose cost reaches the offset only at the top of the suggested range. */
#define STARTUP_STEPS 125000000ULL
NOINLINE static uint64_t startup(void) {
    uint64_t x = 5;
    for (uint64_t i = 0; i < STARTUP_STEPS; i++) x = x * 6364136223846793005ULL + (i ^ (x >> 29));
    return x;
}
NOINLINE static uint64_t linear_pass(uint64_t n, uint64_t x) {
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i ^ (x >> 29));
    return x;
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv);
    qs_done(linear_pass(n, startup()));
    return 0;
}
