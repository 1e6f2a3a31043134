/* O(n^2): a "highest free hole" allocator, the analogue of VirtualAlloc with
 * MEM_TOP_DOWN. Every allocation scans every region allocated so far to find
 * the highest hole that fits, so n allocations cost n(n-1)/2 region visits. */
typedef struct { uint64_t base, len; } region;

#define TOP 0x7fff00000000ULL
NOINLINE static uint64_t find_top_hole(const region *r, size_t count, uint64_t len) {
    /* regions are never freed here, so the highest hole that fits is the one
     * right below the lowest region; finding it still takes the full scan */
    uint64_t lowest = TOP;
    for (size_t i = 0; i < count; i++)
        if (r[i].base < lowest) lowest = r[i].base;
    return lowest - len;
}
int main(int argc, char **argv) {
    size_t n = qs_arg_n(argc, argv);
    region *r = malloc((n ? n : 1) * sizeof *r);
    uint64_t s = 9, check = 0;
    if (!r) return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t len = 4096 * (1 + qs_mix(&s) % 16);
        r[i].base = find_top_hole(r, i, len);
        r[i].len = len;
        check ^= r[i].base;
    }
    qs_done(check);
    return 0;
}
