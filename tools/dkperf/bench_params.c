/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_params.c - dkperf bench's -n, -P/-D and -L, and the benchmarks
 * they expand to, as hyperfine builds them (see bench_params.h).
 *
 * A scan's values are exact decimals, as hyperfine's: MIN, MAX and STEP
 * are read as a whole number (a mantissa) and a count of decimals, so that
 * 0.1 added ten times is 1.0, not 0.9999999999999999. The first value is
 * MIN as written; the others carry the larger count of decimals of MIN and
 * STEP ("-P n 1 3 -D 0.5": 1, 1.5, 2.0, 2.5, 3.0).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_params.h"
#include "common/json.h"
#include "cli.h"

#define DEC_MAX_DIGITS 18 /* a mantissa below 10^18, so that MAX - MIN fits */

typedef struct dec {
    int64_t m; /* value = m / 10^scale */
    int scale;
} dec;

/* [+-]DIGITS[.DIGITS]; *integer when there is no point. At most
 * DEC_MAX_DIGITS digits that matter, and as many decimals. */
static bool dec_parse(const char *s, dec *d, bool *integer)
{
    const char *p = s;
    bool neg = *p == '-', point = false, any = false;
    if (*p == '-' || *p == '+')
        p++;
    int digits = 0, scale = 0;
    int64_t m = 0;
    for (; *p != '\0'; p++) {
        if (*p == '.' && !point) {
            point = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            return false;
        any = true;
        if ((m != 0 || *p != '0') && ++digits > DEC_MAX_DIGITS)
            return false;
        if (point && ++scale > DEC_MAX_DIGITS)
            return false;
        m = m * 10 + (*p - '0');
    }
    if (!any) /* "", "-", "." */
        return false;
    d->m = neg ? -m : m;
    d->scale = scale;
    *integer = !point;
    return true;
}

/* d with its mantissa at scale s (>= d's); false when it would not fit. */
static bool dec_rescale(dec *d, int s)
{
    for (; d->scale < s; d->scale++) {
        if (d->m > INT64_MAX / 10 || d->m < INT64_MIN / 10)
            return false;
        d->m *= 10;
    }
    return true;
}

/* m / 10^(from - to) at to decimals, as text. */
static char *dec_format(int64_t m, int from, int to)
{
    for (int k = from; k > to; k--)
        m /= 10; /* exact: the value has at most `to` decimals */
    char digits[32], out[48];
    uint64_t u = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
    int n = snprintf(digits, sizeof digits, "%0*llu", to + 1, (unsigned long long)u);
    if (to == 0)
        snprintf(out, sizeof out, "%s%s", m < 0 ? "-" : "", digits);
    else
        snprintf(out, sizeof out, "%s%.*s.%s", m < 0 ? "-" : "", n - to, digits, digits + n - to);
    return strdup(out);
}

/* hyperfine's -L list: split at commas; "\," is a comma, "\\" a backslash. */
static char **split_list(const char *s, size_t *n)
{
    size_t cap = 2, len = strlen(s);
    for (const char *p = s; *p != '\0'; p++)
        cap += *p == ',';
    char **v = calloc(cap, sizeof *v);
    char *buf = malloc(len + 1);
    if (v == NULL || buf == NULL) {
        free(v);
        free(buf);
        return NULL;
    }
    *n = 0;
    size_t k = 0;
    for (const char *p = s;; p++) {
        if (*p == '\\' && (p[1] == ',' || p[1] == '\\')) {
            buf[k++] = *++p;
        } else if (*p == ',' || *p == '\0') {
            buf[k] = '\0';
            if ((v[(*n)++] = strdup(buf)) == NULL)
                goto fail;
            k = 0;
            if (*p == '\0')
                break;
        } else {
            buf[k++] = *p;
        }
    }
    free(buf);
    return v;
fail:
    for (size_t i = 0; i < *n; i++)
        free(v[i]);
    free(v);
    free(buf);
    return NULL;
}

static bool opt_match(const char *a, const char *short_name, const char *long_name)
{
    return (short_name != NULL && strcmp(a, short_name) == 0) || strcmp(a, long_name) == 0;
}

static bool valid_param_name(const char *opt, const char *name)
{
    if (name[0] == '\0' || strpbrk(name, "{}") != NULL) {
        cli_error("bench",
                  "%s '%s': give a parameter name (not empty, no '{' or '}'); the "
                  "commands then say {NAME}",
                  opt, name);
        return false;
    }
    return true;
}

int bench_params_option(int argc, char **argv, int *i, bench_param_opts *p)
{
    const char *a = argv[*i];
    int want;
    const char *opt;
    if (opt_match(a, "-n", "--command-name")) {
        want = 1, opt = "-n";
    } else if (opt_match(a, "-P", "--parameter-scan")) {
        want = 3, opt = "-P";
    } else if (opt_match(a, "-D", "--parameter-step-size")) {
        want = 1, opt = "-D";
    } else if (opt_match(a, "-L", "--parameter-list")) {
        want = 2, opt = "-L";
    } else {
        return -1;
    }
    if (argc - *i - 1 < want) {
        cli_error("bench", "%s needs %s (see dkperf help bench)", a,
                  want == 3       ? "NAME MIN MAX"
                  : want == 2     ? "NAME VALUE,VALUE,..."
                  : opt[1] == 'n' ? "a name"
                                  : "a step");
        return EXIT_USAGE;
    }
    char **v = argv + *i + 1;
    *i += want;
    if (opt[1] == 'n') {
        const char **names = realloc(p->names, (p->nnames + 1) * sizeof *names);
        if (names == NULL) {
            cli_error("bench", "out of memory");
            return EXIT_SETUP;
        }
        p->names = names;
        p->names[p->nnames++] = v[0];
    } else if (opt[1] == 'D') {
        if (p->step != NULL) {
            cli_error("bench", "-D is given twice (one step for the one -P scan)");
            return EXIT_USAGE;
        }
        p->step = v[0];
    } else if (opt[1] == 'P') {
        if (p->scan[0] != NULL) {
            cli_error("bench", "-P is given twice (one scan; -L lists combine with each other)");
            return EXIT_USAGE;
        }
        if (!valid_param_name("-P", v[0]))
            return EXIT_USAGE;
        for (int k = 0; k < 3; k++)
            p->scan[k] = v[k];
    } else {
        if (!valid_param_name("-L", v[0]))
            return EXIT_USAGE;
        for (size_t k = 0; k < p->nlists; k++)
            if (strcmp(p->lists[2 * k], v[0]) == 0) {
                cli_error("bench", "-L %s is given twice (duplicate parameter names: %s)", v[0],
                          v[0]);
                return EXIT_USAGE;
            }
        const char **lists = realloc(p->lists, (p->nlists + 1) * 2 * sizeof *lists);
        if (lists == NULL) {
            cli_error("bench", "out of memory");
            return EXIT_SETUP;
        }
        p->lists = lists;
        p->lists[2 * p->nlists] = v[0];
        p->lists[2 * p->nlists + 1] = v[1];
        p->nlists++;
    }
    return 0;
}

void bench_params_free(bench_param_opts *p)
{
    free(p->lists);
    free(p->names);
    memset(p, 0, sizeof *p);
}

/* A parameter: its name and values, as given. */
typedef struct param {
    const char *name;
    char **values;
    size_t n;
} param;

static void free_params(param *ps, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < ps[k].n; i++)
            free(ps[k].values[i]);
        free(ps[k].values);
    }
    free(ps);
}

/* The values of -P NAME MIN MAX [-D STEP]. Returns 0 or an exit status
 * after one line. */
static int scan_values(const bench_param_opts *o, param *ps)
{
    const char *what[3] = {"MIN", "MAX", "STEP"};
    const char *text[3] = {o->scan[1], o->scan[2], o->step != NULL ? o->step : "1"};
    dec d[3];
    bool integer[3];
    for (int k = 0; k < 3; k++)
        if (!dec_parse(text[k], &d[k], &integer[k])) {
            if (k == 2)
                cli_error("bench",
                          "-D %s: STEP is not a number (at most %d digits, a '.' "
                          "before decimals)",
                          text[k], DEC_MAX_DIGITS);
            else
                cli_error("bench",
                          "-P %s %s %s: %s '%s' is not a number (at most %d digits, a "
                          "'.' before decimals)",
                          o->scan[0], o->scan[1], o->scan[2], what[k], text[k], DEC_MAX_DIGITS);
            return EXIT_USAGE;
        }
    if ((!integer[0] || !integer[1]) && o->step == NULL) {
        cli_error("bench",
                  "-P %s %s %s: a step size is required when the range bounds are not "
                  "whole numbers (give it with -D STEP)",
                  o->scan[0], o->scan[1], o->scan[2]);
        return EXIT_USAGE;
    }
    /* The first value keeps MIN's decimals, the next ones MIN's or STEP's. */
    int first = d[0].scale, later = d[0].scale > d[2].scale ? d[0].scale : d[2].scale;
    int s = later > d[1].scale ? later : d[1].scale;
    for (int k = 0; k < 3; k++)
        if (!dec_rescale(&d[k], s)) {
            cli_error("bench", "-P %s %s %s: too many digits (at most %d in all)", o->scan[0],
                      o->scan[1], o->scan[2], DEC_MAX_DIGITS);
            return EXIT_USAGE;
        }
    if (d[2].m == 0) {
        cli_error("bench", "-D %s: zero is not a valid parameter step", text[2]);
        return EXIT_USAGE;
    }
    if (d[2].m < 0) {
        cli_error("bench", "-D %s: the step must be above zero (-P goes from MIN up to MAX)",
                  text[2]);
        return EXIT_USAGE;
    }
    if (d[1].m < d[0].m) {
        cli_error("bench", "-P %s %s %s: empty parameter range (MIN is above MAX)", o->scan[0],
                  o->scan[1], o->scan[2]);
        return EXIT_USAGE;
    }
    /* MAX - MIN is below 2^64: unsigned, it does not overflow. */
    uint64_t count = ((uint64_t)d[1].m - (uint64_t)d[0].m) / (uint64_t)d[2].m + 1;
    if (count > BENCH_MAX_CASES) {
        cli_error("bench", "-P %s %s %s: parameter range is too large (%llu values; at most %d)",
                  o->scan[0], o->scan[1], o->scan[2], (unsigned long long)count, BENCH_MAX_CASES);
        return EXIT_USAGE;
    }
    ps->name = o->scan[0];
    if ((ps->values = calloc((size_t)count, sizeof *ps->values)) == NULL)
        goto oom;
    for (uint64_t i = 0; i < count; i++) {
        int64_t v = (int64_t)((uint64_t)d[0].m + i * (uint64_t)d[2].m); /* in [MIN, MAX] */
        if ((ps->values[i] = dec_format(v, s, i == 0 ? first : later)) == NULL)
            goto oom;
        ps->n++;
    }
    return 0;
oom:
    cli_error("bench", "out of memory for the values of -P %s", o->scan[0]);
    return EXIT_SETUP;
}

/* s with each {NAME} of ps replaced by its value idx[k] at once, as
 * hyperfine does: a value that holds {OTHER} is not replaced again. */
static char *substitute(const char *s, const param *ps, size_t np, const size_t *idx)
{
    if (s == NULL)
        return NULL;
    size_t len = 0, cap = strlen(s) + 1;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    while (*s != '\0') {
        const char *piece = s;
        size_t n = 1, skip = 1;
        if (*s == '{')
            for (size_t k = 0; k < np; k++) {
                size_t nl = strlen(ps[k].name);
                if (strncmp(s + 1, ps[k].name, nl) == 0 && s[1 + nl] == '}') {
                    piece = ps[k].values[idx[k]];
                    n = strlen(piece);
                    skip = nl + 2;
                    break;
                }
            }
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, piece, n);
        len += n;
        s += skip;
    }
    out[len] = '\0';
    return out;
}

static bool mentions(const char *s, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = s != NULL ? strchr(s, '{') : NULL; p != NULL; p = strchr(p + 1, '{'))
        if (strncmp(p + 1, name, nl) == 0 && p[1 + nl] == '}')
            return true;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const param *const *)a)->name, (*(const param *const *)b)->name);
}

/* The case at idx: its strings substituted, its values in sorted order. */
static bool fill_case(bench_case *c, const char *command, const char *name, const char *setup,
                      const char *cleanup, const char *prepare, const param *ps, size_t np,
                      const param *const *sorted, const char **names, const size_t *idx)
{
    c->command = substitute(command, ps, np, idx);
    c->name = name != NULL         ? substitute(name, ps, np, idx)
              : c->command != NULL ? strdup(c->command)
                                   : NULL;
    c->setup = substitute(setup, ps, np, idx);
    c->cleanup = substitute(cleanup, ps, np, idx);
    c->prepare = substitute(prepare, ps, np, idx);
    if (c->command == NULL || c->name == NULL || (setup != NULL && c->setup == NULL) ||
        (cleanup != NULL && c->cleanup == NULL) || (prepare != NULL && c->prepare == NULL))
        return false;
    c->params = names;
    c->nparams = np;
    if (np == 0)
        return true;
    if ((c->values = calloc(np, sizeof *c->values)) == NULL)
        return false;
    for (size_t k = 0; k < np; k++)
        if ((c->values[k] = strdup(sorted[k]->values[idx[sorted[k] - ps]])) == NULL)
            return false;
    /* As hyperfine's report: the parameters the command does not show. */
    size_t ulen = 0;
    for (size_t k = 0; k < np; k++)
        if (!mentions(command, ps[k].name))
            ulen += strlen(ps[k].name) + strlen(ps[k].values[idx[k]]) + 5;
    if (ulen == 0)
        return true;
    if ((c->unused = malloc(ulen + 1)) == NULL)
        return false;
    c->unused[0] = '\0';
    for (size_t k = 0; k < np; k++)
        if (!mentions(command, ps[k].name)) {
            if (c->unused[0] != '\0')
                strcat(c->unused, ", ");
            strcat(c->unused, ps[k].name);
            strcat(c->unused, " = ");
            strcat(c->unused, ps[k].values[idx[k]]);
        }
    return true;
}

int bench_params_expand(const bench_param_opts *p, const char *const *commands, size_t ncommands,
                        const char *setup, const char *cleanup, const char *prepare,
                        bench_cases *out)
{
    memset(out, 0, sizeof *out);
    if (p->step != NULL && p->scan[0] == NULL) {
        cli_error("bench", "-D %s: a step for -P NAME MIN MAX, which is not given", p->step);
        return EXIT_USAGE;
    }
    if (p->scan[0] != NULL && p->nlists > 0) {
        cli_error("bench", "-P and -L cannot be used together (-L lists combine with each "
                           "other)");
        return EXIT_USAGE;
    }
    size_t np = p->scan[0] != NULL ? 1 : p->nlists;
    param *ps = calloc(np + 1, sizeof *ps);
    const param **sorted = calloc(np + 1, sizeof *sorted);
    size_t *idx = calloc(np + 1, sizeof *idx);
    int rc = EXIT_SETUP;
    if (ps == NULL || sorted == NULL || idx == NULL)
        goto oom;
    if (p->scan[0] != NULL && (rc = scan_values(p, &ps[0])) != 0)
        goto fail;
    for (size_t k = 0; k < p->nlists; k++) {
        ps[k].name = p->lists[2 * k];
        if ((ps[k].values = split_list(p->lists[2 * k + 1], &ps[k].n)) == NULL)
            goto oom;
    }
    /* A parameter no string names is most likely a misspelt {NAME}: each
     * benchmark would run the same command. */
    rc = EXIT_USAGE;
    for (size_t k = 0; k < np; k++) {
        bool used = mentions(setup, ps[k].name) || mentions(cleanup, ps[k].name) ||
                    mentions(prepare, ps[k].name);
        for (size_t c = 0; c < ncommands && !used; c++)
            used = mentions(commands[c], ps[k].name);
        for (size_t c = 0; c < p->nnames && !used; c++)
            used = mentions(p->names[c], ps[k].name);
        if (!used) {
            cli_error("bench", "%s %s: no command, -n, --setup, --cleanup or --prepare says {%s}",
                      p->scan[0] != NULL ? "-P" : "-L", ps[k].name, ps[k].name);
            goto fail;
        }
    }
    size_t total = ncommands;
    for (size_t k = 0; k < np; k++) {
        if (ps[k].n > BENCH_MAX_CASES || total * ps[k].n > BENCH_MAX_CASES) {
            cli_error("bench",
                      "too many benchmarks: %zu commands and the values of the "
                      "parameters make more than %d",
                      ncommands, BENCH_MAX_CASES);
            goto fail;
        }
        total *= ps[k].n;
    }
    if (np > 0 && p->nnames > 1 && p->nnames != total) {
        cli_error("bench",
                  "-n is given %zu times: give it once, or exactly %zu times (once per "
                  "benchmark)",
                  p->nnames, total);
        goto fail;
    }
    if (np == 0 && p->nnames > ncommands) {
        cli_error("bench", "-n is given %zu times: at most once per command (%zu)", p->nnames,
                  ncommands);
        goto fail;
    }
    rc = EXIT_SETUP;
    for (size_t k = 0; k < np; k++)
        sorted[k] = &ps[k];
    qsort(sorted, np, sizeof *sorted, by_name);
    if ((out->params = calloc(np + 1, sizeof *out->params)) == NULL ||
        (out->c = calloc(total, sizeof *out->c)) == NULL)
        goto oom;
    for (size_t k = 0; k < np; k++)
        out->params[k] = sorted[k]->name;
    /* The commands vary fastest, then each parameter in the order given. */
    for (size_t i = 0; i < total; i++) {
        size_t rest = i / ncommands;
        for (size_t k = 0; k < np; k++) {
            idx[k] = rest % ps[k].n;
            rest /= ps[k].n;
        }
        const char *name = np > 0 ? (p->nnames == 0   ? NULL
                                     : p->nnames == 1 ? p->names[0]
                                                      : p->names[i])
                                  : (i < p->nnames ? p->names[i] : NULL);
        out->n++;
        if (!fill_case(&out->c[i], commands[i % ncommands], name, setup, cleanup, prepare, ps, np,
                       sorted, out->params, idx))
            goto oom;
    }
    free_params(ps, np);
    free(sorted);
    free(idx);
    return 0;
oom:
    cli_error("bench", "out of memory while expanding the commands");
fail:
    free_params(ps, ps != NULL ? np : 0);
    free(sorted);
    free(idx);
    bench_cases_free(out);
    return rc;
}

void bench_cases_free(bench_cases *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        bench_case *c = &cs->c[i];
        free(c->command);
        free(c->name);
        free(c->setup);
        free(c->cleanup);
        free(c->prepare);
        free(c->unused);
        for (size_t k = 0; c->values != NULL && k < c->nparams; k++)
            free(c->values[k]);
        free(c->values);
    }
    free(cs->c);
    free(cs->params);
    memset(cs, 0, sizeof *cs);
}

void bench_case_json(FILE *f, const bench_case *c)
{
    fputc('{', f);
    for (size_t k = 0; k < c->nparams; k++) {
        if (k > 0)
            fputs(", ", f);
        dk__json_string(f, c->params[k]);
        fputs(": ", f);
        dk__json_string(f, c->values[k]);
    }
    fputc('}', f);
}
