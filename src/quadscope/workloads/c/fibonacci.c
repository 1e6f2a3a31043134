/* O(φⁿ), φ ≈ 1.618: naive recursive Fibonacci. Each extra unit of n
 * multiplies the work by φ: an exponential whose base is not 2. */
NOINLINE static uint64_t fib(uint64_t n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
int main(int argc, char **argv) {
    qs_done(fib(qs_arg_n(argc, argv)));
    return 0;
}
