/* quadscope's resident launcher: one process per executor that spawns and measures every run.
 *
 * Usage:   quadscope-launcher [-t TAIL_BYTES] [-c CPU,CPU,...] [-r RESCUE_PATH] [EVENT ...]
 *          TAIL_BYTES: how much of the end of each run's stderr its reply carries (0).
 *          RESCUE_PATH: where the last replies go when quadscope dies (below).
 *          EVENT = TYPE:CONFIG, a perf_event_attr type and config (e.g. 1:2 = page faults).
 *          Hardware events (TYPE 0: instructions, cycles) count user space only, as perf's
 *          instructions:u: the kernel's share is another program's work (page zeroing,
 *          I/O) that varies from run to run and with kernel.perf_event_paranoid, and
 *          Valgrind, the exact meter's other counter, counts user space too. Software
 *          events (page faults, context switches) count the kernel's side as well, unless
 *          perf_event_paranoid forbids it (then they fall back to user space, as perf does).
 * File descriptors, set up by quadscope (measure/resident.py):
 *   0  requests, one per run, from quadscope        1  replies, one per request
 *   2  the launcher's own complaints                3  the file each run's stderr goes to:
 *                                                      emptied after every run
 * Requests are served in order, one run at a time; quadscope may write a batch of them
 * ahead, and each is read only when the run before it has been replied to.
 * EOF on fd 0 ends the launcher (exit 0); a hang-up of fd 0 during a run (quadscope
 * closed it or died, whatever requests are still unread) also aborts the run (below).
 *
 * Hello:    "hello CLEANUP\n", written once at start: CLEANUP is "cgroup" when every run
 *           goes into a cgroup of ours (below), else "subreaper" when every process a run
 *           starts is ours to kill (PR_SET_CHILD_SUBREAPER took), else "group" (only the
 *           run's process group is killed).
 *
 * Goodbye:  "bye\n" in place of a request: quadscope is done and has every reply; we exit 0.
 * Request:  "run TIMEOUT_NS ARGC ENVC NBYTES\n" followed by NBYTES bytes holding
 *           ARGC + ENVC + 1 NUL-terminated strings: PATH, ARGV[0..ARGC-1], ENV[0..ENVC-1].
 *           The run's environment is the launcher's own (inherited when it started) followed
 *           by ENV's "NAME=VALUE" entries. TIMEOUT_NS is -1 for no limit.
 * Reply:    "done WALL_NS TIMED_OUT STATUS ERRNO UTIME_US STIME_US MAXRSS_KB MINFLT MAJFLT
 *            NVCSW NIVCSW C1 .. Ck TAIL\n" and then TAIL bytes, the end of what the run
 *           wrote to stderr (at most TAIL_BYTES). One Ci per EVENT in the order given: the count, "-"
 *           when the event was opened but never ran, "!E" when opening it failed with errno E.
 *           ERRNO is non-zero when the program could not be executed (nothing ran).
 *
 * Rescue (-r): in a batch, replies wait in the reply pipe, and then in quadscope's
 * buffer, until it stores them; a kill of quadscope, or of its whole process group
 * (a CI job cancelled, `timeout -s KILL`, the OOM killer), would lose the runs that
 * had ended since its last look. So each reply also goes, with one write(2) before
 * it goes to the pipe, to a log beside RESCUE_PATH: RESCUE_PATH.0 and RESCUE_PATH.1
 * in turn, each "replies FIRST\n" and then whole replies, FIRST being the number of
 * the first reply in it (replies are numbered from 1, as requests are). A log that
 * holds RESCUE_RING replies hands over to the other, which starts anew: together
 * they hold at least the last RESCUE_RING replies (more than quadscope may have taken
 * and not stored: it runs at most 64 ahead), whatever moment we die at, SIGKILL
 * included: a reply is in the page cache once its write(2) returns (not fsync-ed: an
 * operating-system crash may lose it, as it may lose the store's last commits). On
 * quadscope's goodbye ("bye\n" in place of a request: it closed us on purpose, every
 * reply stored) we remove both logs; otherwise they stay, and quadscope stores the
 * replies it lacks at its next start (run/rescue.py). Cost: one write(2) of ~100
 * bytes to the page cache a run, a few microseconds.
 *
 * How a run goes: the clock starts, then the child is spawned with CLONE_VM | CLONE_VFORK
 * as posix_spawn does (no page tables copied for a child that only execs): by
 * clone3 straight into our cgroup (CLONE_INTO_CGROUP, with a pidfd) where the
 * kernel allows it, else by clone, the child then joining the cgroup itself. The
 * child sets up its process group, parent-death signal, signals and descriptors,
 * and execs. The wait polls the pidfd (for the timeout) and fd 0; on timeout the
 * run's process group is killed.
 *
 * Counting: each EVENT is opened once, at start, on the launcher itself (pid 0,
 * disabled, enable_on_exec, inherit, close-on-exec), as `perf stat` opens its
 * counters on the workload it forks. Every run's child inherits a disabled copy
 * at the clone; the kernel enables it at the child's exec, copies it into every
 * descendant, and adds each copy's count back to our event when its process
 * exits. Our own copy is never enabled (we never exec), so a run's count is our
 * event's reading once the run's leader is reaped, less its reading before the
 * spawn: the run's program from its exec on, with every descendant that ended
 * before it (what it waited for). What it left running is killed after the
 * reading and not counted, as wait4's rusage does not count it either.
 * No perf_event_open per run: creating and freeing a software event flips a
 * kernel static key each time, which patches kernel text on every CPU (~100 µs
 * of IPIs on a 2-core VM).
 *
 * What WALL_NS is: from just before the spawn to wait4's return in the launcher,
 * hyperfine -N's window (it times Command::spawn to waitpid): creating the
 * process and its set-up above, loading the program (execve, the dynamic loader),
 * running it, its exit (tearing down its memory, and counters when counting)
 * and the reap. Left out: reading the counters and cleaning up after the reap,
 * and, without clone3, the child's write to cgroup.procs (timed by the child and
 * taken off: the cgroup lock's wait, milliseconds at times, is not the program's). bench/overhead.py compares it with hyperfine's on /bin/true, and
 * bench/overhead_split.py splits both windows at the exec with a probe program.
 *
 * No orphans, first line: a cgroup v2 of our own, quadscope-launcher-PID beside our own
 * cgroup, where the hierarchy lets us make one and move a process into it (checked at
 * start with a throwaway child). Each run's child moves itself into it before exec, so
 * every process the run starts is in it whatever it does (setsid, double fork, a
 * subreaper of its own). After each run, when cgroup.events says it is still populated,
 * cgroup.kill (or SIGKILL to each pid in cgroup.procs before Linux 5.14) kills them all.
 * A launcher that was itself SIGKILLed (with its whole process group, say) would leave
 * its cgroup behind, and in it what the run in flight had started in the background
 * (a setsid daemon): so a watchdog, forked at start into a session of its own (no
 * group kill reaches it) and holding no descriptor of ours, waits on our pidfd; when
 * we are gone it kills whatever is left in our cgroup and removes it, then exits.
 * As a second line the next launcher to start kills what is left in every
 * quadscope-launcher-PID whose PID is gone, and removes it. We remove our own at exit. Cost: with clone3 (Linux 5.7, x86-64), none
 * to speak of: the child is forked into the cgroup. Writing cgroup.procs instead (the
 * fallback, and the start-up check without clone3) takes the cgroup write lock:
 * ~10 ms for the first move after an idle spell (an RCU grace period), ~50 µs after.
 *
 * No orphans, second line: we are a child subreaper, so every process a run starts that outlives
 * its parent (a background child, one that called setsid) becomes our child. After
 * each run, before replying, we SIGKILL our remaining children (read from
 * /proc/self/task/PID/children), reap them, and repeat until none is left: each
 * death hands us its own children. quadscope going away aborts the run in flight:
 * fd 0 reads EOF when quadscope closes it (Ctrl-C, SIGTERM) or dies (even by
 * SIGKILL), and PR_SET_PDEATHSIG sends us SIGTERM when quadscope's thread is gone
 * (in case a forked copy of quadscope holds fd 0's pipe); either way we kill the run
 * and every descendant, then exit without replying. SIGTERM rather than SIGKILL so
 * that we live long enough to kill them. If we are SIGKILLed ourselves, the run's
 * leader still dies (its own parent-death signal); its descendants may not.
 * SIGINT and SIGHUP are ignored: they reach us with quadscope's process group from
 * the terminal, and quadscope turns them into an abort through fd 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REQ_FD 0
#define REPLY_FD 1
#define RUN_STDERR_FD 3
#define MAX_EVENTS 16
#define RESCUE_RING 128

static const char *rescue_path;      /* -r: the stem of the reply logs (see "Rescue") */
static int said_bye;                 /* quadscope closed us on purpose: nothing to rescue */
static unsigned long long replies_written; /* whole replies, since start */
static struct { int fd, now; unsigned long long held; } rlog = {-1, 0, 0}; /* the log in use */
static struct { char *buf; size_t len, cap; } out; /* the reply being written */

static volatile sig_atomic_t parent_gone; /* SIGTERM came (quadscope died or asked) */

static void on_term(int sig) { (void)sig; parent_gone = 1; }

struct event { uint32_t type; uint64_t config; };

/* What the vforked child and the launcher share (CLONE_VM): written by the child only. */
struct spawn {
    const char *path;
    char **argv, **envp;
    int nev;
    const int *fd, *open_errno; /* the counters, open on the launcher for its life */
    int exec_errno;
    int cgroup_errno; /* joining our cgroup failed: the subreaper alone cleans up this run */
    int join_cgroup;  /* the child writes itself into cgroup.procs (no CLONE_INTO_CGROUP) */
    long long join_ns; /* how long that write took: left out of WALL_NS */
    int devnull;
    const cpu_set_t *cpus;
    size_t tail_bytes; /* how much of each run's stderr the reply carries, at most */
    sigset_t mask;
};

/* clone3(2) with a stack of the caller's, as glibc's posix_spawn does it, but with
 * CLONE_INTO_CGROUP: glibc's clone() cannot pass that, and joining a cgroup by
 * writing cgroup.procs takes the cgroup write lock, whose RCU grace period costs
 * ~10 ms whenever no move happened in the last few ms (the first run of a sweep)
 * and ~50 µs otherwise; a fork into the cgroup takes neither. The child runs
 * fn(arg) on the new stack and exits with its return value; the parent gets the
 * child's pid or -errno. x86-64 only (the syscall instruction and its registers);
 * elsewhere the child writes cgroup.procs. */
#if defined(__x86_64__) && defined(SYS_clone3)
#define HAVE_SPAWN_CLONE3 1
__asm__(".text\n"
        ".type qs_spawn_clone3,@function\n"
        "qs_spawn_clone3:\n"
        "  mov %rdx, %r8\n"   /* fn and arg outlive the syscall (it clobbers rcx, r11) */
        "  mov %rcx, %r9\n"
        "  mov $435, %eax\n"  /* SYS_clone3 */
        "  syscall\n"
        "  test %rax, %rax\n"
        "  jnz 1f\n"
        "  xor %ebp, %ebp\n"  /* the child, on its own stack: the outermost frame */
        "  mov %r9, %rdi\n"
        "  call *%r8\n"
        "  mov %eax, %edi\n"
        "  mov $60, %eax\n"   /* SYS_exit */
        "  syscall\n"
        "  hlt\n"
        "1: ret\n"
        ".size qs_spawn_clone3, .-qs_spawn_clone3\n");
long qs_spawn_clone3(void *args, size_t size, int (*fn)(void *), void *arg);
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

/* struct clone_args of linux/sched.h up to `cgroup` (CLONE_ARGS_SIZE_VER2). */
struct qs_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
             set_tid, set_tid_size, cgroup;
};

static long long ns_between(const struct timespec *a, const struct timespec *b) {
    return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

/* Our cgroup for the runs (see "No orphans"): its directory and open files, or procs -1. */
static struct { int procs, kill, events, dirfd, clone3; char dir[4096]; } cg =
    {-1, -1, -1, -1, 0, ""};

#define CG_PREFIX "quadscope-launcher-"

/* Where our own cgroup v2 is in the file system, into out: 0, or -1 when there is none
 * we can name (no cgroup2 mount, or a mount whose root is not above our cgroup). */
static int own_cgroup_dir(char *out, size_t size) {
    char line[4096], own[4096] = "", mount[4096] = "", root[4096] = "";
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(own, sizeof own, "%s", line + 3);
        }
    fclose(f);
    if (!*own || !(f = fopen("/proc/self/mountinfo", "re"))) return -1;
    while (fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPEROPTIONS */
        char r[4096], m[4096];
        const char *dash = strstr(line, " - ");
        if (dash && strncmp(dash + 3, "cgroup2 ", 8) == 0
            && sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) == 2) {
            snprintf(root, sizeof root, "%s", r);
            snprintf(mount, sizeof mount, "%s", m);
            break;
        }
    }
    fclose(f);
    size_t rl = strlen(root);
    if (!*mount || strchr(mount, '\\')) return -1; /* none, or an escaped (odd) path */
    if (strcmp(root, "/") == 0) rl = 0;
    else if (strncmp(own, root, rl) != 0 || (own[rl] && own[rl] != '/')) return -1;
    int n = snprintf(out, size, "%s%s", mount, own + rl);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* 1 when the cgroup whose cgroup.events is open on fd still holds a process. */
static int populated(int fd) {
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 1; /* cannot tell: assume the worst */
    buf[n] = '\0';
    return strstr(buf, "populated 1") != NULL;
}

/* SIGKILLs every process in the cgroup at dir (kill_fd: its cgroup.kill, or -1). */
static void kill_cgroup(const char *dir, int kill_fd) {
    if (kill_fd >= 0 && write(kill_fd, "1", 1) == 1) return;
    char path[4096 + 512];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    for (int round = 0; round < 100; round++) { /* a fork between read and kill: go again */
        FILE *f = fopen(path, "re");
        int pid, killed = 0;
        if (!f) return;
        while (fscanf(f, "%d", &pid) == 1) killed += kill(pid, SIGKILL) == 0;
        fclose(f);
        if (!killed) return;
    }
}

/* Kills and removes the cgroups that SIGKILLed launchers left beside ours. */
static void sweep_stale_cgroups(const char *parent) {
    DIR *d = opendir(parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        char end;
        if (sscanf(e->d_name, CG_PREFIX "%d%c", &pid, &end) != 1 || pid <= 0) continue;
        if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
        char path[4096 + 512];
        snprintf(path, sizeof path, "%s/%s/cgroup.kill", parent, e->d_name);
        int kfd = open(path, O_WRONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        kill_cgroup(path, kfd);
        if (kfd >= 0) close(kfd);
        for (int i = 0; i < 100 && rmdir(path) != 0 && errno == EBUSY; i++)
            usleep(10000); /* the killed are still exiting */
    }
    closedir(d);
}

static void remove_cgroup(void) {
    if (!*cg.dir) return;
    if (cg.procs >= 0) close(cg.procs);
    if (cg.events >= 0) close(cg.events);
    if (cg.kill >= 0) close(cg.kill);
    if (cg.dirfd >= 0) close(cg.dirfd);
    cg.procs = cg.events = cg.kill = cg.dirfd = -1;
    cg.clone3 = 0;
    rmdir(cg.dir);
    *cg.dir = '\0';
}

/* Makes our cgroup and checks that a child can move into it: 1 when in force. */
static int make_cgroup(void) {
    char parent[4096];
    if (own_cgroup_dir(parent, sizeof parent) != 0) return 0;
    sweep_stale_cgroups(parent);
    int n = snprintf(cg.dir, sizeof cg.dir, "%s/" CG_PREFIX "%d", parent, (int)getpid());
    if (n <= 0 || (size_t)n >= sizeof cg.dir - 32 || mkdir(cg.dir, 0755) != 0) {
        *cg.dir = '\0';
        return 0;
    }
    char path[4096 + 512];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg.dir);
    cg.procs = open(path, O_WRONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "%s/cgroup.events", cg.dir);
    cg.events = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "%s/cgroup.kill", cg.dir);
    cg.kill = open(path, O_WRONLY | O_CLOEXEC); /* absent before Linux 5.14 */
    cg.dirfd = open(cg.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int moved = 0, status;
    if (cg.procs >= 0 && cg.events >= 0) {
#ifdef HAVE_SPAWN_CLONE3
        /* A child forked into the cgroup (Linux 5.7): then every run is spawned so. */
        struct qs_clone_args ca;
        memset(&ca, 0, sizeof ca);
        ca.flags = CLONE_INTO_CGROUP;
        ca.exit_signal = SIGCHLD;
        ca.cgroup = (uint64_t)cg.dirfd;
        long pid = cg.dirfd >= 0 ? syscall(SYS_clone3, &ca, sizeof ca) : -1;
        if (pid == 0) _exit(0);
        cg.clone3 = moved = pid > 0 && waitpid((pid_t)pid, &status, 0) == pid
                            && WIFEXITED(status) && WEXITSTATUS(status) == 0;
#endif
    }
    if (cg.clone3 && cg.kill >= 0) {
        /* Not with clone3: once cgroup.kill has been written, Linux (seen on 6.18)
         * SIGKILLs every later child forked into the cgroup by CLONE_INTO_CGROUP at
         * birth (its fork-time check of the cgroup's kill count misfires), so each
         * pid in cgroup.procs gets SIGKILL instead. */
        close(cg.kill);
        cg.kill = -1;
    }
    if (!moved && cg.procs >= 0 && cg.events >= 0) {
        pid_t pid = fork();
        if (pid == 0) _exit(write(cg.procs, "0", 1) == 1 ? 0 : 1);
        moved = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
                && WEXITSTATUS(status) == 0;
    }
    if (!moved) {
        remove_cgroup();
        return 0;
    }
    atexit(remove_cgroup);
    return 1;
}

/* The watchdog's life (see "No orphans"): wait for the launcher (pidfd) to be gone,
 * then kill what is left in its cgroup and remove it. Never returns. */
static void watch(int pidfd) {
    /* No descriptor of the launcher's: quadscope must see its pipes close when it dies. */
    if (syscall(SYS_close_range, 0U, (unsigned)pidfd - 1, 0U) != 0
        || syscall(SYS_close_range, (unsigned)pidfd + 1, ~0U, 0U) != 0)
        for (int fd = 0; fd < 65536; fd++)
            if (fd != pidfd) close(fd);
    int null = open("/dev/null", O_RDWR);
    if (null == 0) { dup2(0, 1); dup2(0, 2); }
    struct pollfd p = {pidfd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
    char path[4096 + 512];
    snprintf(path, sizeof path, "%s/cgroup.kill", cg.dir);
    int kfd = open(path, O_WRONLY | O_CLOEXEC); /* gone when the launcher removed it */
    kill_cgroup(cg.dir, kfd);
    for (int i = 0; i < 100 && rmdir(cg.dir) != 0 && errno == EBUSY; i++)
        usleep(10000); /* the killed are still exiting */
    _exit(0);
}

/* Starts the watchdog, a grandchild in a session of its own (not our child: our clean-up
 * after each run kills and reaps our children). Called before we become a subreaper, so
 * that it is handed to our own ancestors' when its parent exits. Best effort: without
 * it, the next launcher's sweep of stale cgroups is the clean-up. */
static void start_watchdog(void) {
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pidfd < 0) return;
    pid_t mid = fork();
    if (mid == 0) {
        if (fork() != 0) _exit(0);
        setsid();
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        watch(pidfd);
    }
    close(pidfd);
    if (mid > 0) waitpid(mid, NULL, 0);
}

static int open_counter(const struct event *e) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e->type;
    a.config = e->config;
    a.disabled = 1;
    a.enable_on_exec = 1;
    a.inherit = 1;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    if (e->type == PERF_TYPE_HARDWARE) {  /* instructions:u (see the top of this file) */
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        /* perf_event_paranoid 2 allows user-space counts only, as `perf stat` falls back to :u */
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    return fd;
}

/* Runs in the vforked child, on its own stack, in the launcher's memory. */
static int child(void *arg) {
    struct spawn *s = arg;
    /* Everything the run starts is in our cgroup from here; a failure leaves the subreaper.
     * (Spawned by clone3, the child was born in it.) */
    if (s->join_cgroup) {
        /* The write takes the cgroup write lock (see "No orphans"): milliseconds at
         * times, the harness's and not the program's, so it is left out of WALL_NS. */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (write(cg.procs, "0", 1) != 1) s->cgroup_errno = errno;
        clock_gettime(CLOCK_MONOTONIC, &b);
        s->join_ns = ns_between(&a, &b);
    }
    setpgid(0, 0);
    /* The run's leader dies with us even if we are SIGKILLed (kept across exec). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Our ignored SIGINT/SIGHUP would stay ignored across exec; our SIGTERM handler
     * must not run in our memory before the exec. */
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(s->devnull, 0);
    dup2(s->devnull, 1);
    dup2(RUN_STDERR_FD, 2);
    if (s->cpus && sched_setaffinity(0, sizeof *s->cpus, s->cpus) != 0) {
        s->exec_errno = errno;
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &s->mask, NULL);
    execve(s->path, s->argv, s->envp);
    s->exec_errno = errno;
    _exit(127);
}

/* Kills and reaps every process left of a run: the leader `pgid`'s group, then, when
 * the run joined our cgroup (in_cgroup), the cgroup; then our children (orphans of the
 * run, setsid ones included) until none is left. */
static void kill_leftovers(pid_t pgid, int in_cgroup) {
    killpg(pgid, SIGKILL);
    if (in_cgroup && cg.procs >= 0) {
        if (!populated(cg.events)) { /* the usual case: only zombies, if any, to reap */
            while (waitpid(-1, NULL, WNOHANG) > 0) {}
            return;
        }
        kill_cgroup(cg.dir, cg.kill);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    for (;;) {
        int killed = 0;
        FILE *f = fopen(path, "re");
        if (f) {
            int pid;
            while (fscanf(f, "%d", &pid) == 1) killed += kill(pid, SIGKILL) == 0;
            fclose(f);
        }
        if (!killed) { /* no /proc: the group's members that became ours are all we know */
            while (waitpid(-1, NULL, WNOHANG) > 0) {}
            return;
        }
        for (int i = 0; i < killed; i++)
            if (waitpid(-1, NULL, 0) < 0 && errno != EINTR) break;
    }
}

/* Waits for the child to exit: 1 when the deadline passed first, else 0. When fd 0
 * says quadscope is gone (EOF) or SIGTERM came, kills the run and exits. */
static int timed_out_waiting(pid_t pid, int pfd, long long timeout_ns,
                             const struct timespec *t0) {
    if (pfd < 0) pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) { perror("quadscope-launcher: pidfd_open"); exit(125); }
    /* fd 0 is polled for hang-up alone (events 0): quadscope may have written the
     * next requests already (a batch), and those are no reason to stop this run. */
    struct pollfd p[2] = {{pfd, POLLIN, 0}, {REQ_FD, 0, 0}};
    int expired = 0;
    for (;;) {
        int wait_ms = -1;
        if (timeout_ns >= 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long left = timeout_ns - ns_between(t0, &now);
            if (left <= 0) { expired = 1; break; }
            wait_ms = (int)((left + 999999) / 1000000);
        }
        int r = parent_gone ? 0 : poll(p, 2, wait_ms);
        /* fd 0 hung up: quadscope closed it or died */
        if (parent_gone || (r > 0 && p[1].revents)) {
            kill_leftovers(pid, 0); /* the slow, thorough way: we are leaving */
            if (cg.procs >= 0) kill_cgroup(cg.dir, cg.kill);
            exit(0);
        }
        if (r > 0) break;
        if (r < 0 && errno != EINTR) { perror("quadscope-launcher: poll"); exit(125); }
    }
    close(pfd);
    return expired;
}

/* A counter's value, time enabled and time running (all its runs' so far): 0, or -1. */
static int read_counter(int fd, uint64_t v[3]) {
    v[0] = v[1] = v[2] = 0;
    return fd >= 0 && read(fd, v, 3 * sizeof *v) == (ssize_t)(3 * sizeof *v) ? 0 : -1;
}

/* Formats one counter for the reply: the run's count (after - before), scaled for
 * multiplexing, "-" when it never ran, or "!E" when it could not be opened. */
static int format_count(char *out, size_t size, int fd, int open_errno,
                        const uint64_t before[3]) {
    if (fd < 0) return snprintf(out, size, " !%d", open_errno);
    uint64_t v[3];
    if (read_counter(fd, v) != 0 || v[2] == before[2]) return snprintf(out, size, " -");
    uint64_t value = v[0] - before[0], enabled = v[1] - before[1], running = v[2] - before[2];
    unsigned long long count = running < enabled
        ? (unsigned long long)((double)value * (double)enabled / (double)running) : value;
    return snprintf(out, size, " %llu", count);
}

/* Adds bytes to the reply being written; exits when memory runs out (a tail is <= 1 MiB). */
static void out_add(const char *buf, size_t len) {
    if (out.len + len > out.cap) {
        size_t cap = (out.len + len) * 2;
        char *grown = realloc(out.buf, cap);
        if (!grown) { perror("quadscope-launcher: reply"); exit(125); }
        out.buf = grown;
        out.cap = cap;
    }
    memcpy(out.buf + out.len, buf, len);
    out.len += len;
}

/* Log k's path (RESCUE_PATH.k) into path: 0, or -1 when it does not fit. */
static int log_path(char *path, size_t size, int k) {
    int n = snprintf(path, size, "%s.%d", rescue_path, k);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Log k made anew, its first reply to be number `first`: its descriptor, or -1. */
static int start_log(int k, unsigned long long first) {
    char path[4096], head[64];
    if (log_path(path, sizeof path, k) != 0) return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    int len = snprintf(head, sizeof head, "replies %llu\n", first);
    if (write(fd, head, (size_t)len) != len) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The reply in `out` (number replies_written + 1) into the log in use, by one write(2);
 * a log holding RESCUE_RING replies hands over to the other (see "Rescue"). The rescue is
 * a bonus: a log that cannot be written ends it, never a run. */
static void log_reply(void) {
    if (!rescue_path) return;
    if (rlog.fd < 0 || rlog.held >= RESCUE_RING) {
        if (rlog.fd >= 0) {
            close(rlog.fd);
            rlog.now ^= 1;
        }
        rlog.held = 0;
        rlog.fd = start_log(rlog.now, replies_written + 1);
    }
    if (rlog.fd < 0 || write(rlog.fd, out.buf, out.len) != (ssize_t)out.len) {
        perror("quadscope-launcher: rescue log");
        if (rlog.fd >= 0) close(rlog.fd);
        rlog.fd = -1;
        rescue_path = NULL; /* the logs stay: quadscope keeps its manifest for them */
        return;
    }
    rlog.held++;
}

/* At exit (atexit): after quadscope's goodbye it has every reply, so the logs go. */
static void end_logs(void) {
    if (!rescue_path || !said_bye) return;
    char path[4096];
    for (int k = 0; k < 2; k++)
        if (log_path(path, sizeof path, k) == 0) unlink(path);
}

/* Writes all of buf to the reply pipe; exits when quadscope is gone (nobody to report to). */
static void reply(const char *buf, size_t len) {
    for (size_t off = 0; off < len;) {
        ssize_t w = write(REPLY_FD, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(0);
        off += (size_t)w;
    }
}

static void run(struct spawn *s, long long timeout_ns) {
    static char stack[64 * 1024] __attribute__((aligned(16)));
    /* Each run's stderr starts empty. The file is emptied after each run (below); what
     * a survivor of the last run wrote since (only the group is killed without a cgroup
     * or subreaper) is not this run's. */
    struct stat before_st;
    if (fstat(RUN_STDERR_FD, &before_st) != 0
        || (before_st.st_size != 0 && (ftruncate(RUN_STDERR_FD, 0) != 0
                                       || lseek(RUN_STDERR_FD, 0, SEEK_SET) < 0))) {
        perror("quadscope-launcher: stderr file");
        exit(125);
    }
    s->exec_errno = 0;
    s->cgroup_errno = 0;
    s->join_cgroup = cg.procs >= 0 && !cg.clone3;
    s->join_ns = 0;
    uint64_t before[MAX_EVENTS][3];
    for (int i = 0; i < s->nev; i++) read_counter(s->fd[i], before[i]);
    /* No signal may run a handler in the child while it borrows our memory. */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &s->mask);
    int pidfd = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0); /* WALL_NS starts here (see the top) */
    pid_t pid;
#ifdef HAVE_SPAWN_CLONE3
    if (cg.clone3) {
        struct qs_clone_args ca;
        memset(&ca, 0, sizeof ca);
        ca.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP;
        ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
        ca.exit_signal = SIGCHLD;
        ca.stack = (uint64_t)(uintptr_t)stack;
        ca.stack_size = sizeof stack;
        ca.cgroup = (uint64_t)cg.dirfd;
        long r = qs_spawn_clone3(&ca, sizeof ca, child, s);
        if (r < 0) errno = (int)-r;
        pid = r < 0 ? -1 : (pid_t)r;
    } else
#endif
        pid = clone(child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, s);
    sigprocmask(SIG_SETMASK, &s->mask, NULL);
    if (pid < 0) { perror("quadscope-launcher: clone"); exit(125); }
    int timed_out = 0;
    if (!s->exec_errno) { /* the child set up its group before exec, so killpg finds it */
        timed_out = timed_out_waiting(pid, pidfd, timeout_ns, &t0);
        if (timed_out) killpg(pid, SIGKILL);
    } else if (pidfd >= 0) {
        close(pidfd);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) { perror("quadscope-launcher: wait4"); exit(125); }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long wall_ns = s->exec_errno ? 0 : ns_between(&t0, &t1) - s->join_ns;
    /* The reply is taken now, as the leader is reaped, and logged before what the run left
     * running is killed (which may take milliseconds): a SIGKILL of us in between loses no
     * reaped run (see "Rescue"); the leftovers' work, like their rusage, is not the run's. */
    char line[1024];
    int len = snprintf(line, sizeof line, "done %lld %d %d %d %lld %lld %ld %ld %ld %ld %ld",
                       wall_ns, timed_out, status, s->exec_errno,
                       (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
                       (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
                       ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
    for (int i = 0; i < s->nev; i++)
        len += format_count(line + len, sizeof line - (size_t)len, s->fd[i], s->open_errno[i],
                            before[i]);
    /* The last tail_bytes the run wrote to stderr follow the line; the file is then
     * emptied for the next run (the child's fd 2 shared its offset). Most runs write
     * nothing: one fstat. */
    struct stat st;
    if (fstat(RUN_STDERR_FD, &st) != 0) { perror("quadscope-launcher: stderr file"); exit(125); }
    size_t tail = st.st_size < (off_t)s->tail_bytes ? (size_t)st.st_size : s->tail_bytes;
    len += snprintf(line + len, sizeof line - (size_t)len, " %zu\n", tail);
    /* The whole reply is assembled first: one write(2) to the log, then one to the pipe. */
    out.len = 0;
    out_add(line, (size_t)len);
    if (st.st_size != 0) {
        char buf[4096];
        for (size_t off = 0; off < tail;) {
            size_t want = tail - off < sizeof buf ? tail - off : sizeof buf;
            ssize_t r = pread(RUN_STDERR_FD, buf, want, st.st_size - (off_t)tail + (off_t)off);
            if (r <= 0) { perror("quadscope-launcher: stderr file"); exit(125); }
            out_add(buf, (size_t)r);
            off += (size_t)r;
        }
    }
    log_reply(); /* on disk (the page cache) before quadscope may see it: see "Rescue" */
    kill_leftovers(pid, s->cgroup_errno == 0); /* gone before quadscope hears of the run */
    reply(out.buf, out.len);
    replies_written++;
    if (st.st_size != 0
        && (ftruncate(RUN_STDERR_FD, 0) != 0 || lseek(RUN_STDERR_FD, 0, SEEK_SET) < 0)) {
        perror("quadscope-launcher: stderr file");
        exit(125);
    }
}

/* 1 when exactly n bytes of the request could be read. */
static int read_exact(FILE *in, char *buf, size_t n) {
    return fread(buf, 1, n, in) == n;
}

static int parse_cpus(const char *list, cpu_set_t *set) {
    CPU_ZERO(set);
    for (const char *p = list; *p;) {
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || c < 0 || c >= CPU_SETSIZE) return -1;
        CPU_SET((int)c, set);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return 0;
}

extern char **environ;

int main(int argc, char **argv) {
    pid_t parent = getppid();
    static struct event events[MAX_EVENTS];
    static cpu_set_t cpus;
    struct spawn s;
    memset(&s, 0, sizeof s);
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "-t") == 0) {
        char *end;
        unsigned long long t = strtoull(argv[a + 1], &end, 10);
        if (*end || end == argv[a + 1] || t > (1u << 20)) {
            fprintf(stderr, "quadscope-launcher: bad stderr tail size %s\n", argv[a + 1]);
            return 2;
        }
        s.tail_bytes = (size_t)t;
        a += 2;
    }
    if (a + 1 < argc && strcmp(argv[a], "-c") == 0) {
        if (parse_cpus(argv[a + 1], &cpus) != 0) {
            fprintf(stderr, "quadscope-launcher: bad CPU list %s\n", argv[a + 1]);
            return 2;
        }
        s.cpus = &cpus;
        a += 2;
    }
    if (a + 1 < argc && strcmp(argv[a], "-r") == 0) {
        rescue_path = argv[a + 1];
        a += 2;
    }
    for (; a < argc && s.nev < MAX_EVENTS; a++, s.nev++) {
        unsigned long long config;
        if (sscanf(argv[a], "%u:%llu", &events[s.nev].type, &config) != 2) {
            fprintf(stderr, "quadscope-launcher: bad event %s\n", argv[a]);
            return 2;
        }
        events[s.nev].config = config;
    }
    s.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (s.devnull < 0 || fcntl(RUN_STDERR_FD, F_SETFD, FD_CLOEXEC) != 0) {
        perror("quadscope-launcher: setup");
        return 125;
    }
    int cgroup = make_cgroup();
    if (cgroup) start_watchdog();
    /* Orphaned descendants come to us, so that no process of a run outlives it. */
    int subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    atexit(end_logs);
    /* The counters, opened once on ourselves and inherited by every run (see the top).
     * A dummy event that is not inherited keeps each child's copies from being a clone
     * of our context: the kernel swaps equal (cloned) contexts between parent and
     * child at a context switch, and the child's exec would then enable, and clear
     * enable_on_exec on, our own events instead of its copies. */
    static int counter_fd[MAX_EVENTS], counter_errno[MAX_EVENTS];
    int keep_apart = -1, keep_errno = 0;
    if (s.nev > 0) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_DUMMY;
        a.disabled = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        keep_apart = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        keep_errno = keep_apart < 0 ? errno : 0;
    }
    for (int i = 0; i < s.nev; i++) {
        counter_fd[i] = keep_apart < 0 ? -1 : open_counter(&events[i]);
        counter_errno[i] = keep_apart < 0 ? keep_errno : counter_fd[i] < 0 ? errno : 0;
    }
    s.fd = counter_fd;
    s.open_errno = counter_errno;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term; /* no SA_RESTART: poll and the request read return EINTR */
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent || parent_gone) return 0; /* quadscope died before the prctl took */
    if (dprintf(REPLY_FD, "hello %s\n",
                cgroup ? "cgroup" : subreaper ? "subreaper" : "group") < 0) return 0;
    FILE *in = fdopen(REQ_FD, "rb");
    char header[256];
    char *buf = NULL;
    size_t cap = 0;
    char **ptrs = NULL;
    size_t ptr_cap = 0;
    while (fgets(header, sizeof header, in)) {
        if (strcmp(header, "bye\n") == 0) { said_bye = 1; break; }
        long long timeout_ns;
        size_t nargs, nenv, nbytes;
        if (sscanf(header, "run %lld %zu %zu %zu", &timeout_ns, &nargs, &nenv, &nbytes) != 4
            || nargs == 0) {
            fprintf(stderr, "quadscope-launcher: bad request %s", header);
            return 2;
        }
        if (nbytes + 1 > cap && !(buf = realloc(buf, cap = nbytes + 1))) return 125;
        size_t nbase = 0;
        while (environ[nbase]) nbase++;
        size_t need = nargs + 1 + nbase + nenv + 1;
        if (need > ptr_cap && !(ptrs = realloc(ptrs, (ptr_cap = need) * sizeof *ptrs)))
            return 125;
        if (!read_exact(in, buf, nbytes)) {
            fprintf(stderr, "quadscope-launcher: request cut short\n");
            return 2;
        }
        buf[nbytes] = '\0';
        /* One array: argv, NULL, then the launcher's environ, the request's ENV, NULL. */
        char **env = ptrs + nargs + 1;
        memcpy(env, environ, nbase * sizeof *env);
        size_t want = 1 + nargs + nenv, k = 0;
        for (char *p = buf; p < buf + nbytes && k < want; p += strlen(p) + 1, k++) {
            if (k == 0) s.path = p;
            else if (k <= nargs) ptrs[k - 1] = p;
            else env[nbase + k - 1 - nargs] = p;
        }
        if (k != want) {
            fprintf(stderr, "quadscope-launcher: request holds %zu strings, not %zu\n", k, want);
            return 2;
        }
        ptrs[nargs] = NULL;
        env[nbase + nenv] = NULL;
        s.argv = ptrs;
        s.envp = env;
        /* A batch's next request may have been buffered before quadscope went away. */
        struct pollfd hup = {REQ_FD, 0, 0};
        if (poll(&hup, 1, 0) > 0 || parent_gone) return 0;
        run(&s, timeout_ns);
    }
    return 0;
}
