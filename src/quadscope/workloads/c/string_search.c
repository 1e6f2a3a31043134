/* O(n·m) with m = n/2, so O(n²): naive search for "aa…ab" (m bytes) in a
 * text of n 'a's, its worst case: every alignment compares m bytes. */
NOINLINE static uint64_t naive_search(const char *text, uint64_t n, const char *pat, uint64_t m) {
    uint64_t compared = 0;
    for (uint64_t i = 0; i + m <= n; i++) {
        uint64_t j = 0;
        while (j < m && text[i + j] == pat[j]) j++;
        compared += j;
        if (j == m) return compared;
    }
    return compared;
}
int main(int argc, char **argv) {
    uint64_t n = qs_arg_n(argc, argv), m = n / 2 ? n / 2 : 1;
    char *text = malloc(n + 1), *pat = malloc(m + 1);
    if (!text || !pat) return 1;
    memset(text, 'a', n);
    memset(pat, 'a', m);
    pat[m - 1] = 'b';
    qs_done(naive_search(text, n, pat, m));
    free(text);
    free(pat);
    return 0;
}
