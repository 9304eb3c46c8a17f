/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_procs_sim.c - the simulated kernel's process records: a process's
 * exit when its last thread exits (bsd/kern/kern_exit.c proc_exit,
 * BSD_PROC_EXIT) and an exec (bsd/kern/kern_exec.c exec_mach_imgact,
 * TRACE_DATA_EXEC and TRACE_STRING_EXEC, then BSD_PROC_EXEC), from Linux's
 * PERF_RECORD_EXIT and exec PERF_RECORD_COMM. Included by
 * kperf_sampling_sim.c, whose batches and records it makes. Simulated:
 * nothing here was checked on Apple hardware.
 */

/* The wait status a process exited with (p_xstat): /proc/<pid>/stat's
 * exit_code (field 52), readable while it is a zombie; 0 once reaped. */
static uint64_t exit_status(uint32_t pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *p = ok ? strrchr(line, ')') : NULL;
    if (p == NULL)
        return 0;
    /* Field 3 (state) follows ") "; exit_code is field 52. */
    int field = 2;
    for (; *p != '\0' && field < 52; p++)
        if (*p == ' ')
            field++;
    return field == 52 ? strtoull(p, NULL, 10) : 0;
}

/* Threads whose exit was seen while their process had others left. */
#define EXITED_MAX 256
typedef struct exited_thread {
    uint32_t pid, tid;
} exited_thread;
static exited_thread exited[EXITED_MAX];
static size_t exited_n;

static bool thread_exited(uint32_t pid, uint32_t tid)
{
    for (size_t i = 0; i < exited_n; i++)
        if (exited[i].pid == pid && exited[i].tid == tid)
            return true;
    return false;
}

/* Whether pid has no thread left running but tid (exiting now) and those
 * already seen to exit: every other thread /proc lists is a zombie or
 * dead. A pid that is gone has none. */
static bool last_thread(uint32_t pid, uint32_t tid)
{
    char path[96], line[512];
    snprintf(path, sizeof path, "/proc/%u/task", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return true;
    bool last = true;
    struct dirent *e;
    while (last && (e = readdir(d)) != NULL) {
        uint32_t t = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (t == 0 || t == tid || thread_exited(pid, t))
            continue;
        snprintf(path, sizeof path, "/proc/%u/task/%u/stat", pid, t);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* gone meanwhile */
        bool ok = fgets(line, sizeof line, f) != NULL;
        fclose(f);
        const char *p = ok ? strrchr(line, ')') : NULL;
        char state = 0;
        if (p != NULL && sscanf(p + 1, " %c", &state) == 1 && state != 'Z' && state != 'X')
            last = false;
    }
    closedir(d);
    return last;
}

/*
 * A process's exit, from the PERF_RECORD_EXIT of its last thread (Linux
 * reports each thread; the process has ended when none is left running,
 * whichever thread that was: its main thread may have left early with
 * pthread_exit): proc_exit (bsd/kern/kern_exit.c), run by the last
 * thread, logs BSD_PROC_EXIT START and END with (pid, p_xstat), arg5 the
 * exiting thread. body: pid, ppid, tid, ptid (u32), time, then the
 * sample_id trailer (pid/tid, time, cpu). The same exit seen by several
 * sources is logged once (pull_samples).
 */
static int exit_batch(const uint64_t *body, size_t words, batch *b)
{
    if (words < 6)
        return -1;
    uint32_t pid = (uint32_t)body[0], tid = (uint32_t)body[1];
    if (pid == 0)
        return 1;
    if (!last_thread(pid, tid)) {
        if (exited_n < EXITED_MAX && !thread_exited(pid, tid))
            exited[exited_n++] = (exited_thread){pid, tid};
        return 1; /* a thread, not the process */
    }
    size_t w = 0;
    for (size_t i = 0; i < exited_n; i++) /* the process is done with them */
        if (exited[i].pid != pid)
            exited[w++] = exited[i];
    exited_n = w;
    b->r = calloc(2, sizeof *b->r);
    if (b->r == NULL)
        return -1;
    linux_sample ls;
    memset(&ls, 0, sizeof ls);
    ls.tid = tid;
    ls.cpu = (uint32_t)body[5];
    uint64_t ts = ticks_of(body[2]);
    uint64_t xstat = exit_status(pid);
    w = 0;
    put(b->r, &w, ts, ID_PROC_EXIT | FUNC_START, pid, xstat, 0, 0, &ls);
    put(b->r, &w, ts, ID_PROC_EXIT | FUNC_END, pid, xstat, 0, 0, &ls);
    b->time = body[2];
    b->n = w;
    b->exit_pid = pid;
    return 0;
}

/*
 * An exec (PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC):
 * exec_mach_imgact (bsd/kern/kern_exec.c) logs TRACE_DATA_EXEC (pid, fsid,
 * fileid, 0) and TRACE_STRING_EXEC (kdebug_proc_name_args: the new
 * image's proc_best_name, p_name, in 32 bytes), then exec_activate_image's
 * end BSD_PROC_EXEC (pid), all with the exec'ing thread in arg5. p_name is
 * the executable's file name up to 32 characters; Linux's comm is its
 * first 15: the sim takes the basename of argv[0] (as its pbi_name) or of
 * /proc/<pid>/exe, the first that comm begins (the process may have moved
 * on by the time the ring is read), else comm.
 * fsid and fileid are the executable's st_dev and st_ino (0 when it cannot
 * be read, as XNU logs when they overflow). body: pid, tid (u32), comm
 * (NUL-padded to 8 bytes), then the sample_id trailer (pid/tid, time, cpu).
 */
static int exec_batch(const uint64_t *body, size_t words, batch *b)
{
    if (words < 5)
        return -1;
    uint32_t pid = (uint32_t)body[0], tid = (uint32_t)(body[0] >> 32);
    char comm[64] = "", exe[4096] = "", path[64];
    size_t clen = (words - 4) * 8 < sizeof comm - 1 ? (words - 4) * 8 : sizeof comm - 1;
    memcpy(comm, body + 1, clen);
    comm[clen] = '\0';
    char name[33], argv0[4096] = "";
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        size_t got = fread(argv0, 1, sizeof argv0 - 1, f);
        argv0[got] = '\0'; /* argv[0] ends at its NUL */
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%u/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    size_t elen = strlen(exe); /* an executable removed since */
    if (elen > 10 && strcmp(exe + elen - 10, " (deleted)") == 0)
        exe[elen - 10] = '\0';
    /* argv[0]'s basename, as the sim's pbi_name (libsystem_sim.c), else
     * the executable's, whichever comm begins. */
    const char *base = NULL, *cand[2] = {argv0, exe};
    for (int i = 0; i < 2 && base == NULL; i++) {
        const char *c = strrchr(cand[i], '/');
        c = c != NULL ? c + 1 : cand[i];
        if (comm[0] != '\0' && strncmp(c, comm, strlen(comm)) == 0)
            base = c;
    }
    struct stat st;
    bool same = base != NULL;
    if (!same || stat(path, &st) != 0)
        memset(&st, 0, sizeof st);
    /* 32 bytes, not NUL-terminated when full, as XNU's strncpy. */
    memset(name, 0, sizeof name);
    const char *src = same ? base : comm;
    size_t len = strlen(src);
    memcpy(name, src, len < 32 ? len : 32);
    uint64_t a[4];
    memcpy(a, name, 32);
    b->r = calloc(3, sizeof *b->r);
    if (b->r == NULL)
        return -1;
    linux_sample ls;
    memset(&ls, 0, sizeof ls);
    ls.tid = tid;
    ls.cpu = (uint32_t)body[words - 1];
    uint64_t ts = ticks_of(body[words - 2]);
    size_t w = 0;
    put(b->r, &w, ts, ID_TRACE_DATA_EXEC, pid, st.st_dev, st.st_ino, 0, &ls);
    put(b->r, &w, ts, ID_TRACE_STRING_EXEC, a[0], a[1], a[2], a[3], &ls);
    put(b->r, &w, ts, ID_PROC_EXEC, pid, 0, 0, 0, &ls);
    b->time = body[words - 2];
    b->n = w;
    b->exec_pid = pid;
    return 0;
}
