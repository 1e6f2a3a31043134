/* O(log n): one million binary searches over an implicit sorted array of n
 * keys (key(i) = 3i + (i >> 4)), so no O(n) set-up and time ~ a + b log n. */
#define SEARCHES 1000000
static inline uint64_t key_at(uint64_t i) { return 3 * i + (i >> 4); }

NOINLINE static uint64_t search_all(uint64_t n) {
    uint64_t s = 7, found = 0, top = key_at(n - 1) + 1;
    for (int q = 0; q < SEARCHES; q++) {
        uint64_t want = qs_mix(&s) % top, lo = 0, hi = n;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (key_at(mid) < want) lo = mid + 1; else hi = mid;
        }
        found += lo;
    }
    return found;
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv);
    qs_done(search_all(n ? n : 1));
    return 0;
}
