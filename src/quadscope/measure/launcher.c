/* quadscope's resident launcher: one process per executor that spawns and measures every run.
 *
 * Usage:   quadscope-launcher [-c CPU,CPU,...] [EVENT ...]
 *          EVENT = TYPE:CONFIG, a perf_event_attr type and config (e.g. 1:2 = page faults).
 *          Hardware events (TYPE 0: instructions, cycles) count user space only, as perf's
 *          instructions:u: the kernel's share is another program's work (page zeroing,
 *          I/O) that varies from run to run and with kernel.perf_event_paranoid, and
 *          Valgrind, the exact meter's other counter, counts user space too. Software
 *          events (page faults, context switches) count the kernel's side as well, unless
 *          perf_event_paranoid forbids it (then they fall back to user space, as perf does).
 * File descriptors, set up by quadscope (measure/resident.py):
 *   0  requests, one per run, from quadscope        1  replies, one line per request
 *   2  the launcher's own complaints                3  the file each run's stderr goes to:
 *                                                      truncated before every run
 * EOF on fd 0 ends the launcher (exit 0); during a run it also aborts the run (below).
 *
 * Hello:    "hello CLEANUP\n", written once at start: CLEANUP is "cgroup" when every run
 *           goes into a cgroup of ours (below), else "subreaper" when every process a run
 *           starts is ours to kill (PR_SET_CHILD_SUBREAPER took), else "group" (only the
 *           run's process group is killed).
 *
 * Request:  "run TIMEOUT_NS ARGC ENVC NBYTES\n" followed by NBYTES bytes holding
 *           ARGC + ENVC + 1 NUL-terminated strings: PATH, ARGV[0..ARGC-1], ENV[0..ENVC-1].
 *           The run's environment is the launcher's own (inherited when it started) followed
 *           by ENV's "NAME=VALUE" entries. TIMEOUT_NS is -1 for no limit.
 * Reply:    "done WALL_NS TIMED_OUT STATUS ERRNO UTIME_US STIME_US MAXRSS_KB MINFLT MAJFLT
 *            NVCSW NIVCSW C1 .. Ck\n", one Ci per EVENT in the order given: the count, "-"
 *           when the event was opened but never ran, "!E" when opening it failed with errno E.
 *           ERRNO is non-zero when the program could not be executed (nothing ran).
 *
 * How a run goes: the clock starts, then clone(CLONE_VM | CLONE_VFORK) as posix_spawn
 * does (no page tables copied for a child that only execs). When counting, the child
 * also shares our descriptor table (CLONE_FILES): it opens each counter on itself
 * (pid 0, disabled, enable_on_exec, inherit, close-on-exec), so the descriptors land
 * in our table, then unshares the table and execs; the kernel enables the counters
 * at the exec and folds in every descendant. The wait polls a pidfd (for the
 * timeout) and fd 0; on timeout the run's process group is killed.
 *
 * What WALL_NS is: from the child's execve to wait4's return in the launcher, i.e.
 * loading the program (execve, the dynamic loader), running it, its exit (tearing
 * down its memory) and the reap. The child reads the clock as its last act before
 * execve, in the memory it shares with us. Left out is everything before execve:
 * creating the process and the harness's own set-up of it (joining the cgroup,
 * opening counters, process group, descriptors, signals), which is the harness's
 * cost, not the program's, and differs from harness to harness. hyperfine -N times
 * from before Rust's Command::spawn (which opens /dev/null, builds the
 * environment, and whose glibc posix_spawn resets every signal's disposition in
 * the child) to after waitpid, so on a tiny program it reads more than we do, by
 * that spawn cost; bench/overhead.py splits both windows with a probe program and
 * measures it (the part from exec to reap agrees).
 *
 * No orphans, first line: a cgroup v2 of our own, quadscope-launcher-PID beside our own
 * cgroup, where the hierarchy lets us make one and move a process into it (checked at
 * start with a throwaway child). Each run's child moves itself into it before exec, so
 * every process the run starts is in it whatever it does (setsid, double fork, a
 * subreaper of its own). After each run, when cgroup.events says it is still populated,
 * cgroup.kill (or SIGKILL to each pid in cgroup.procs before Linux 5.14) kills them all.
 * A launcher that was itself SIGKILLed leaves its cgroup behind: the next launcher to
 * start kills what is left in every quadscope-launcher-PID whose PID is gone, and
 * removes it. We remove our own at exit. Cost: the first move into a new cgroup (the
 * start-up check) took ~20 ms on a 2-core VM, once per launcher; each run's move after
 * that, tens of microseconds, before the exec and so outside WALL_NS.
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

static volatile sig_atomic_t parent_gone; /* SIGTERM came (quadscope died or asked) */

static void on_term(int sig) { (void)sig; parent_gone = 1; }

struct event { uint32_t type; uint64_t config; };

/* What the vforked child and the launcher share (CLONE_VM): written by the child only. */
struct spawn {
    const char *path;
    char **argv, **envp;
    int nev;
    const struct event *ev;
    int fd[MAX_EVENTS], open_errno[MAX_EVENTS];
    struct timespec exec_start; /* the child's last clock reading before execve */
    int exec_errno;
    int cgroup_errno; /* joining our cgroup failed: the subreaper alone cleans up this run */
    int devnull;
    const cpu_set_t *cpus;
    sigset_t mask;
};

static long long ns_between(const struct timespec *a, const struct timespec *b) {
    return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

/* Our cgroup for the runs (see "No orphans"): its directory and open files, or procs -1. */
static struct { int procs, kill, events; char dir[4096]; } cg = {-1, -1, -1, ""};

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
    cg.procs = cg.events = cg.kill = -1;
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
    int moved = 0;
    if (cg.procs >= 0 && cg.events >= 0) {
        pid_t pid = fork();
        if (pid == 0) _exit(write(cg.procs, "0", 1) == 1 ? 0 : 1);
        int status;
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
    /* Everything the run starts is in our cgroup from here; a failure leaves the subreaper. */
    if (cg.procs >= 0 && write(cg.procs, "0", 1) != 1) s->cgroup_errno = errno;
    for (int i = 0; i < s->nev; i++) {
        s->fd[i] = open_counter(&s->ev[i]);
        s->open_errno[i] = s->fd[i] < 0 ? errno : 0;
    }
    if (s->nev > 0) {
        /* From here on our descriptor table is our own: dup2 below must not touch the launcher's. */
        if (unshare(CLONE_FILES) != 0) { s->exec_errno = errno; _exit(127); }
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
    clock_gettime(CLOCK_MONOTONIC, &s->exec_start); /* WALL_NS starts here (see the top) */
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
static int timed_out_waiting(pid_t pid, long long timeout_ns, const struct timespec *t0) {
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) { perror("quadscope-launcher: pidfd_open"); exit(125); }
    struct pollfd p[2] = {{pfd, POLLIN, 0}, {REQ_FD, POLLIN, 0}};
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
        /* quadscope sends nothing during a run: fd 0 ready means it closed it or died */
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

/* Formats one counter for the reply: the count scaled for multiplexing, "-" or "!E". */
static int format_count(char *out, size_t size, int fd, int open_errno) {
    if (fd < 0) return snprintf(out, size, " !%d", open_errno);
    uint64_t v[3] = {0, 0, 0}; /* value, time enabled, time running */
    ssize_t got = read(fd, v, sizeof v);
    close(fd);
    if (got != (ssize_t)sizeof v || v[2] == 0) return snprintf(out, size, " -");
    unsigned long long count = v[2] < v[1] ? (unsigned long long)((double)v[0] * v[1] / v[2]) : v[0];
    return snprintf(out, size, " %llu", count);
}

static void run(struct spawn *s, long long timeout_ns) {
    static char stack[64 * 1024] __attribute__((aligned(16)));
    /* Each run's stderr starts empty; the child's fd 2 shares this file's offset. */
    if (ftruncate(RUN_STDERR_FD, 0) != 0 || lseek(RUN_STDERR_FD, 0, SEEK_SET) < 0) {
        perror("quadscope-launcher: stderr file");
        exit(125);
    }
    s->exec_errno = 0;
    s->cgroup_errno = 0;
    for (int i = 0; i < s->nev; i++) s->fd[i] = -1, s->open_errno[i] = 0;
    memset(&s->exec_start, 0, sizeof s->exec_start);
    /* No signal may run a handler in the child while it borrows our memory. */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &s->mask);
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (s->nev > 0 ? CLONE_FILES : 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = clone(child, stack + sizeof stack, flags, s);
    sigprocmask(SIG_SETMASK, &s->mask, NULL);
    if (pid < 0) { perror("quadscope-launcher: clone"); exit(125); }
    int timed_out = 0;
    if (!s->exec_errno) { /* the child set up its group before exec, so killpg finds it */
        timed_out = timed_out_waiting(pid, timeout_ns, &t0);
        if (timed_out) killpg(pid, SIGKILL);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) { perror("quadscope-launcher: wait4"); exit(125); }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long wall_ns = s->exec_errno ? 0 : ns_between(&s->exec_start, &t1);
    kill_leftovers(pid, s->cgroup_errno == 0);
    char line[1024];
    int len = snprintf(line, sizeof line, "done %lld %d %d %d %lld %lld %ld %ld %ld %ld %ld",
                       wall_ns, timed_out, status, s->exec_errno,
                       (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
                       (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
                       ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
    for (int i = 0; i < s->nev; i++)
        len += format_count(line + len, sizeof line - (size_t)len, s->fd[i], s->open_errno[i]);
    line[len++] = '\n';
    for (int off = 0; off < len;) {
        ssize_t w = write(REPLY_FD, line + off, (size_t)(len - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) exit(0); /* quadscope is gone: nobody to report to */
        off += (int)w;
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
    if (a + 1 < argc && strcmp(argv[a], "-c") == 0) {
        if (parse_cpus(argv[a + 1], &cpus) != 0) {
            fprintf(stderr, "quadscope-launcher: bad CPU list %s\n", argv[a + 1]);
            return 2;
        }
        s.cpus = &cpus;
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
    s.ev = events;
    s.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (s.devnull < 0 || fcntl(RUN_STDERR_FD, F_SETFD, FD_CLOEXEC) != 0) {
        perror("quadscope-launcher: setup");
        return 125;
    }
    /* Orphaned descendants come to us, so that no process of a run outlives it. */
    int subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    int cgroup = make_cgroup();
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
        run(&s, timeout_ns);
    }
    return 0;
}
