/* O(n log n): heap sort of n pseudo-random 64-bit keys. */
static void sift(uint64_t *a, uint64_t i, uint64_t n) {
    for (;;) {
        uint64_t l = 2 * i + 1, m = i;
        if (l < n && a[l] > a[m]) m = l;
        if (l + 1 < n && a[l + 1] > a[m]) m = l + 1;
        if (m == i) return;
        uint64_t t = a[i]; a[i] = a[m]; a[m] = t;
        i = m;
    }
}
NOINLINE static void heap_sort(uint64_t *a, uint64_t n) {
    for (uint64_t i = n / 2; i-- > 0;) sift(a, i, n);
    for (uint64_t end = n; end-- > 1;) {
        uint64_t t = a[0]; a[0] = a[end]; a[end] = t;
        sift(a, 0, end);
    }
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv), s = 9;
    uint64_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a) return 1;
    for (uint64_t i = 0; i < n; i++) a[i] = qs_mix(&s);
    heap_sort(a, n);
    qs_done(n ? a[n / 2] ^ a[0] : 0);
    free(a);
    return 0;
}
