/* O(n²): bubble sort of n pseudo-random keys (no early exit). */
NOINLINE static void bubble_sort(uint32_t *a, uint64_t n) {
    for (uint64_t i = 0; i + 1 < n; i++)
        for (uint64_t j = 0; j + 1 < n - i; j++)
            if (a[j] > a[j + 1]) { uint32_t t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; }
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv), s = 11;
    uint32_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a) return 1;
    for (uint64_t i = 0; i < n; i++) a[i] = (uint32_t)qs_mix(&s);
    bubble_sort(a, n);
    qs_done(n ? a[0] ^ a[n - 1] : 0);
    free(a);
    return 0;
}
