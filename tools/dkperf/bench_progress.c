/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_progress.c - dkperf bench's progress line on standard error (a
 * terminal), drawn between runs and erased before anything else is
 * printed (see bench.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bench.h"
#include "common/clock.h"
#include "common/text.h"

#define PROGRESS_NS 100000000ull /* 10 lines a second at most */

/* Erase the progress line, so that what follows starts a line of its own. */
void bench_progress_clear(void)
{
    if (cli_progress_shown) {
        fputs("\r\033[K", stderr);
        cli_progress_shown = false;
    }
}

/*
 * Draw "Benchmark K/M: CMD  run i/N, mean T, about T left" (or "warmup
 * i/W") over the last line, cut to the terminal's width so that it never
 * wraps and \r rewrites it whole: the command is shortened first, then the
 * line. The command goes through the untrusted-text escaper: a control
 * byte in it would drive the terminal.
 */
void bench_progress_draw(bench_progress *pr, const bench_report *rep, const bench_command *cmd,
                         bool warmup, long i, long n)
{
    uint64_t now = dk__monotonic_ns();
    if (!pr->on || (pr->at != 0 && now - pr->at < PROGRESS_NS))
        return;
    pr->at = now;
    struct winsize ws;
    size_t width = 80;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        width = ws.ws_col;
    char head[64], tail[192], a[64], b[64];
    snprintf(head, sizeof head, "Benchmark %zu/%zu: ", (size_t)(cmd - rep->cmd) + 1, rep->ncmd);
    if (warmup || cmd->nruns == 0) {
        snprintf(tail, sizeof tail, "  %s %ld/%ld", warmup ? "warmup" : "run", i, n);
    } else {
        double sum = 0;
        for (size_t r = 0; r < cmd->nruns; r++)
            sum += cmd->runs[r].wall;
        double mean = sum / (double)cmd->nruns;
        snprintf(tail, sizeof tail, "  run %ld/%ld, mean %s, about %s left", i, n,
                 bench_fmt_time(mean, a, sizeof a),
                 bench_fmt_time(mean * (double)(n - i + 1), b, sizeof b));
    }
    /* One column a code point (the escaped text is valid UTF-8); the last
     * column is left free, where some terminals wrap at once. */
    char text[1024], line[2048];
    dk__untrusted(text, sizeof text, cmd->text);
    size_t room = width - 1, fixed = strlen(head) + strlen(tail), cols = 0;
    for (const char *p = text; dk__utf8_next(&p) != 0;)
        cols++;
    size_t len = (size_t)snprintf(line, sizeof line, "\r\033[K%s", head);
    if (fixed + cols > room && fixed + 1 < room) { /* the command, cut, and an ellipsis */
        const char *p = text;
        for (size_t c = 0; c < room - fixed - 1; c++)
            dk__utf8_next(&p);
        len += (size_t)snprintf(line + len, sizeof line - len, "%.*s…", (int)(p - text), text);
    } else if (fixed + cols <= room) {
        len += (size_t)snprintf(line + len, sizeof line - len, "%s", text);
    }
    len += (size_t)snprintf(line + len, sizeof line - len, "%s", tail);
    if (fixed > room) /* no room for the command: the ASCII rest, cut */
        len = strlen("\r\033[K") + room;
    fwrite(line, 1, len, stderr);
    fflush(stderr);
    cli_progress_shown = true;
}
