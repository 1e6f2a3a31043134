/* O(n^2): insertion sort of a reversed array (its worst case). */
NOINLINE static void insertion_sort(uint32_t *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint32_t v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) { a[j] = a[j - 1]; j--; }
        a[j] = v;
    }
}
int main(int argc, char **argv) {
    size_t n = qs_arg_n(argc, argv);
    if (n == 0) n = 1;
    uint32_t *a = malloc(n * sizeof *a);
    if (!a) return 1;
    for (size_t i = 0; i < n; i++) a[i] = (uint32_t)(n - i);
    insertion_sort(a, n);
    qs_done(a[0] + a[n - 1]);
    return 0;
}
