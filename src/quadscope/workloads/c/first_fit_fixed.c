/* The fix for first_fit: the allocator remembers its lowest region, so
 * finding the highest hole is O(1) and n allocations cost O(n). */
typedef struct { uint64_t base, len; } region;

#define TOP 0x7fff00000000ULL
typedef struct { region *r; size_t count; uint64_t lowest; } space;

NOINLINE static uint64_t place_below_lowest(space *s, uint64_t len) {
    uint64_t base = s->lowest - len;
    s->r[s->count].base = base;
    s->r[s->count].len = len;
    s->count++;
    s->lowest = base;
    return base;
}
int main(int argc, char **argv) {
    size_t n = qs_arg_n(argc, argv);
    space s = {malloc((n ? n : 1) * sizeof(region)), 0, TOP};
    uint64_t seed = 9, check = 0;
    if (!s.r) return 1;
    for (size_t i = 0; i < n; i++) check ^= place_below_lowest(&s, 4096 * (1 + qs_mix(&seed) % 16));
    qs_done(check);
    return 0;
}
