/* O(n): a serial hash chain over n steps (each step needs the previous one,
 * so it neither vectorises nor folds into a closed form). */
NOINLINE static uint64_t linear_sum(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i ^ (x >> 29));
    return x;
}
int main(int argc, char **argv) {
    qs_done(linear_sum(qs_arg_n(argc, argv)));
    return 0;
}
