/* O(n) memory: touches n fresh 4 KiB pages, so max_rss_bytes and
 * minor_faults grow as n (and wall and sys time with them). */
#include <sys/mman.h>
NOINLINE static uint64_t touch_pages(uint64_t n) {
    size_t page = 4096, len = n * page;
    volatile char *p = mmap(NULL, len ? len : page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    for (size_t i = 0; i < n; i++) p[i * page] = (char)i;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += p[i * page];
    return sum;
}
int main(int argc, char **argv) {
    qs_done(touch_pages(qs_arg_n(argc, argv)));
    return 0;
}
