/* O(sqrt n): count the divisors of n by trial division up to sqrt(n). */
NOINLINE static uint64_t count_divisors(uint64_t n) {
    uint64_t count = 0;
    for (uint64_t d = 1; d * d <= n; d++)
        if (n % d == 0) count += (d * d == n) ? 1 : 2;
    return count;
}
int main(int argc, char **argv) {
    qs_done(count_divisors(qs_arg_n(argc, argv)));
    return 0;
}
