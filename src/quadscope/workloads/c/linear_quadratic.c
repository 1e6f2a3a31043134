/* O(n + n^2/1e5): a linear pass, plus n^2/1e5 pairwise steps (a "compare
 * with every bucket" step that is negligible until n reaches ~1e5, then
 * dominates). Asymptotically n^2. */
NOINLINE static uint64_t linear_pass(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + (i ^ (x >> 29));
    return x;
}
NOINLINE static uint64_t pairwise_pass(uint64_t n) {
    /* floor(n^2 / 1e5) steps in all, spread evenly over the n elements */
    uint64_t x = 5, owed = 0;
    for (uint64_t i = 0; i < n; i++) {
        owed += n;
        for (; owed >= 100000; owed -= 100000) x = x * 6364136223846793005ULL + (i ^ owed ^ (x >> 29));
    }
    return x;
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv);
    qs_done(linear_pass(n) ^ pairwise_pass(n));
    return 0;
}
