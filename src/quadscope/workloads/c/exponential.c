/* O(2^n): naive recursive subset-sum counting over n weights (every subset is visited). */
static uint64_t weights[64];
NOINLINE static uint64_t count_subsets(int i, int n, uint64_t sum, uint64_t target) {
    if (i == n) return sum % 1024 == target;
    return count_subsets(i + 1, n, sum + weights[i], target) +
           count_subsets(i + 1, n, sum, target);
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv), s = 3;
    if (n > 62) { fprintf(stderr, "n must be at most 62\n"); return 2; }
    for (int i = 0; i < 64; i++) weights[i] = qs_mix(&s) % 1000;
    qs_done(count_subsets(0, (int)n, 0, 17));
    return 0;
}
