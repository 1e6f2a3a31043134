/* quadscope's instruction counter for QEMU user-mode emulation (a TCG plugin).
 *
 * Usage:   qemu-x86_64 -plugin PATH_TO_THIS.so,out=FILE  PROGRAM ARGS...
 *
 * Counts every guest instruction the program executes: each translated block adds its
 * length to one counter each time it runs (an inline add, no callback), so a
 * `rep movsb` counts once per iteration, as Valgrind counts it. At exit it appends one
 * line to FILE:
 *
 *     PID INSTRUCTIONS STARTED
 *
 * STARTED is 1 when the program made a clone, fork, vfork, execve, execveat or clone3
 * system call: a child program exec'd runs natively, uncounted, and threads would add
 * to the one counter without holding each other off, so the count is not the whole
 * command's and quadscope counts it under Valgrind instead (measure/qemu.py). A fork
 * that never execs writes a line of its own (its counter starts from the parent's).
 *
 * Written against QEMU's documented plugin API (docs/devel/tcg-plugins.rst), version 1,
 * declaring only what it uses: Debian ships plugin support in qemu-user but no header.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
    const char *target_name;
    struct { int min; int cur; } version;
    _Bool system_emulation;
    union { struct { int smp_vcpus; int max_vcpus; } system; };
} qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
typedef void (*syscall_cb)(qemu_plugin_id_t, unsigned int, int64_t, uint64_t, uint64_t,
                           uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *,
                                                     enum qemu_plugin_op, void *, uint64_t);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);
extern void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t, syscall_cb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t count;
static int started;
static char out[4096];

static void on_block(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &count,
                                             qemu_plugin_tb_n_insns(tb));
}

static int starts_another(int64_t num) {
#if defined(__x86_64__)
    return num == 56 || num == 57 || num == 58 || num == 59 || num == 322 || num == 435;
#elif defined(__aarch64__)
    return num == 220 || num == 221 || num == 281 || num == 435;
#else
    (void)num;
    return 1;  /* unknown numbering: never claim the whole command */
#endif
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8) {
    (void)id; (void)vcpu; (void)a1; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6;
    (void)a7; (void)a8;
    if (starts_another(num))
        started = 1;
}

static void on_exit(qemu_plugin_id_t id, void *unused) {
    (void)id; (void)unused;
    char line[96];
    int len = snprintf(line, sizeof line, "%ld %llu %d\n", (long)getpid(),
                       (unsigned long long)count, started);
    int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, line, (size_t)len) != len) { /* a short line reads as no count */ }
        close(fd);
    }
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0)
            snprintf(out, sizeof out, "%s", argv[i] + 4);
    if (!out[0])
        return -1;  /* QEMU refuses to start: nothing to write the count to */
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_block);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, on_exit, NULL);
    return 0;
}
