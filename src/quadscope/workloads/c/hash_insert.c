/* O(n) expected: n inserts of pseudo-random keys into an open-addressing hash
 * table kept at most half full (linear probing, doubling when needed). */
static uint64_t *table;
static uint64_t cap, used;
static void put(uint64_t key);
NOINLINE static void grow(void) {
    uint64_t *old = table, old_cap = cap;
    cap = cap ? 2 * cap : 1024;
    table = calloc(cap, sizeof *table);
    if (!table) exit(1);
    used = 0;
    for (uint64_t i = 0; i < old_cap; i++)
        if (old[i]) put(old[i]);
    free(old);
}
static void put(uint64_t key) {
    if (2 * (used + 1) > cap) grow();
    uint64_t h = (key * 0x9e3779b97f4a7c15ULL) & (cap - 1);
    while (table[h] && table[h] != key) h = (h + 1) & (cap - 1);
    if (!table[h]) { table[h] = key; used++; }
}
NOINLINE static uint64_t insert_all(uint64_t n) {
    uint64_t s = 1;
    for (uint64_t i = 0; i < n; i++) put(qs_mix(&s) | 1);
    return used;
}
int main(int argc, char **argv) {
    qs_done(insert_all(qs_arg_n(argc, argv)));
    return 0;
}
