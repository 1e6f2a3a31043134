/* O(n^3): a triple loop over n with a serial dependency, so every (i, j, k)
 * costs the same and memory plays no part. */
NOINLINE static uint64_t triple_loop(uint64_t n) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            for (uint64_t k = 0; k < n; k++) x = x * 6364136223846793005ULL + (i ^ j ^ k);
    return x;
}
int main(int argc, char **argv) {
    qs_done(triple_loop(qs_arg_n(argc, argv)));
    return 0;
}
