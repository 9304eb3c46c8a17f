/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * util.c - errors, sampler setup, JSON strings and number formatting for
 * the dkperf commands.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/text.h"

bool cli_progress_shown;

/* The message is escaped as a whole: it quotes paths, names from
 * recordings and baselines and library messages, any of which may hold
 * control bytes, and the tool's own words hold none. */
void cli_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    if (cli_progress_shown) {
        fputs("\r\033[K", stderr);
        cli_progress_shown = false;
    }
    fprintf(stderr, "dkperf %s: ", command);
    va_start(ap, fmt);
    dk__vput_untrusted(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_backend_kind(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return DK_BACKEND_AUTO;
    if (strcmp(name, "kperf") == 0)
        return DK_BACKEND_KPERF;
    if (strcmp(name, "selfcounts") == 0)
        return DK_BACKEND_SELFCOUNTS;
    if (strcmp(name, "perf_event") == 0)
        return DK_BACKEND_PERF_EVENT;
    return -1;
}

int cli_simple_options(const char *command, int argc, char **argv, void (*help)(FILE *), bool *json,
                       const char **backend, const char **positional)
{
    *json = false;
    *backend = NULL;
    if (positional != NULL)
        *positional = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            *json = true;
        } else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            *backend = argv[++i];
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help(stdout);
            return -1;
        } else if ((a[0] == '-' && a[1] != '\0') || positional == NULL) {
            cli_error(command, "unknown %s %s (see dkperf help %s)",
                      a[0] == '-' ? "option" : "argument", a, command);
            return EXIT_USAGE;
        } else if (*positional == NULL) {
            *positional = a;
        } else {
            cli_error(command, "one PATTERN at most (got %s and %s)", *positional, a);
            return EXIT_USAGE;
        }
    }
    if (*backend != NULL && cli_backend_kind(*backend) < 0) {
        cli_error(command, "--backend %s: not a backend (auto, kperf, selfcounts, perf_event)",
                  *backend);
        return EXIT_USAGE;
    }
    return 0;
}

dk_sampler *cli_open_sampler(const char *command, const char *backend)
{
    return cli_open_sampler_flags(command, backend, 0);
}

dk_sampler *cli_open_sampler_flags(const char *command, const char *backend, unsigned flags)
{
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = flags;
    if (backend != NULL) {
        int kind = cli_backend_kind(backend);
        if (kind < 0) {
            cli_error(command, "--backend %s: not a backend (auto, kperf, selfcounts, perf_event)",
                      backend);
            return NULL;
        }
        o.backend = (dk_backend_kind)kind;
    }
    dk_sampler *s = NULL;
    int rc = dk_sampler_open(&s, &o);
    if (rc != 0) {
        cli_error(command, "%s", dk_last_error());
        return NULL;
    }
    /* What the library did to the machine's state on the way (it prints nothing). */
    for (const char *n = dk_sampler_notes(s); *n != '\0';) {
        size_t len = strcspn(n, "\n");
        cli_error(command, "note: %.*s", (int)len, n);
        n += len + (n[len] == '\n');
    }
    return s;
}

int cli_check_event(const char *command, dk_sampler *s, const char *name, bool *unavailable)
{
    const dk_database_event *ev;
    int r = dk_sampler_resolve(s, name, &ev);
    if (unavailable != NULL)
        *unavailable = r == DK_EUNAVAILABLE;
    if (r == 0 || r == DK_EUNAVAILABLE)
        return 0;
    if (r == DK_ENOMEM) {
        cli_error(command, "out of memory while looking up event '%.64s'", name);
        return EXIT_SETUP;
    }
    /* A long name is cut short, as the library's message does, so that the
     * cause is seen. A name no database knows, or a spec that does not
     * parse, is a usage error, as perf has it. */
    const char *why = dk_last_error();
    bool pointer = r == DK_ENOEVENT && strstr(why, "(see ") == NULL; /* not twice */
    cli_error(command, "event '%.64s%s': %s%s", name, strlen(name) > 64 ? "..." : "", why,
              pointer ? " (dkperf list shows the events)" : "");
    return r == DK_ENOEVENT || r == DK_EINVAL ? EXIT_USAGE : EXIT_SETUP;
}

const dk_database_event *cli_event_probed(const dk_sampler *s, const dk_database_event *ev)
{
    /* Looking its name up probes the database's entry, which is ev itself
     * (events outside the database, raw or pmu/.../ ones, stay as given). */
    if (ev != NULL)
        (void)dk_database_find(dk_sampler_database(s), ev->name);
    return ev;
}

int cli_release_sampler(dk_sampler *s, char *why, size_t size)
{
    if (dk_sampler_release(s) == 0)
        return 0;
    /* The library's message says what is left behind and how to restore it. */
    snprintf(why, size, "the counters were not given back: %s", dk_last_error());
    return EXIT_SETUP;
}

int cli_close_sampler(const char *command, dk_sampler *s, int rc)
{
    char why[1024];
    if (s != NULL && cli_release_sampler(s, why, sizeof why) != 0) {
        cli_error(command, "%s", why);
        if (rc == 0)
            rc = EXIT_SETUP;
    }
    dk_sampler_close(s);
    return rc;
}

int cli_close_stdout(int rc)
{
    errno = 0;
    bool bad = fflush(stdout) != 0;
    int why = errno;
    if (ferror(stdout))
        bad = true;
    if (!bad)
        return rc;
    if (why != 0)
        fprintf(stderr, "dkperf: write error on standard output: %s\n", strerror(why));
    else
        fputs("dkperf: write error on standard output\n", stderr);
    return rc != 0 ? rc : EXIT_SETUP;
}

/* Insert thousands separators into the digits before any '.'. */
static const char *group_digits(const char *digits, char *buf, size_t size)
{
    const char *dot = strchr(digits, '.');
    size_t whole = dot != NULL ? (size_t)(dot - digits) : strlen(digits);
    size_t out = 0;
    for (size_t i = 0; i < whole && out + 2 < size; i++) {
        if (i > 0 && (whole - i) % 3 == 0)
            buf[out++] = ',';
        buf[out++] = digits[i];
    }
    if (dot != NULL)
        out += (size_t)snprintf(buf + out, out < size ? size - out : 0, "%s", dot);
    if (out >= size)
        out = size - 1;
    buf[out] = '\0';
    return buf;
}

const char *fmt_count(uint64_t v, char *buf, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    return group_digits(digits, buf, size);
}

const char *fmt_fixed(double v, int decimals, char *buf, size_t size)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.*f", decimals, v < 0 ? 0 : v);
    return group_digits(digits, buf, size);
}
