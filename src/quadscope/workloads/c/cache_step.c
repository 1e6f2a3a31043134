/* O(n) with a step: 4·n dependent loads that chase a random cycle through an
 * array of n 8-byte slots. While the array fits in the CPU caches a load costs
 * a few ns; once it leaves the last-level cache (n·8 bytes past a few MiB)
 * each load is a DRAM miss, ~20x dearer: the per-element cost steps up at a
 * size threshold while the class stays linear. */
NOINLINE static uint64_t chase(uint64_t *next, uint64_t n) {
    uint64_t p = 0, sum = 0;
    for (uint64_t i = 0; i < 4 * n; i++) {
        p = next[p];
        sum += p;
    }
    return sum;
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv);
    if (n < 2) n = 2;
    uint64_t *next = malloc(n * sizeof *next);
    uint64_t *order = malloc(n * sizeof *order);
    if (!next || !order) return 1;
    uint64_t s = 42;
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every slot */
        uint64_t j = qs_mix(&s) % i, t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < n; i++) next[order[i]] = order[(i + 1) % n];
    qs_done(chase(next, n));
    free(order);
    free(next);
    return 0;
}
