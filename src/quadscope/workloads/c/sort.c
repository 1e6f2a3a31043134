/* O(n log n): top-down merge sort of n pseudo-random 64-bit keys. */
NOINLINE static void merge_sort(uint64_t *a, uint64_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}
int main(int argc, char **argv) {
    size_t n = qs_arg_n(argc, argv);
    if (n == 0) n = 1;
    uint64_t *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *a), s = 11;
    if (!a || !tmp) return 1;
    for (size_t i = 0; i < n; i++) a[i] = qs_mix(&s);
    merge_sort(a, tmp, n);
    qs_done(a[0] ^ a[n / 2] ^ a[n - 1]);
    return 0;
}
