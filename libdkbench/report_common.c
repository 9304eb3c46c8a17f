/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_common.c - escaping, checked writes and number formatting shared
 * by the report formats; see report_common.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/report_common.h"
#include "common/unavailable.h"

int dkb__report_done(FILE *out, const char *format)
{
    errno = 0;
    if (fflush(out) != 0 || ferror(out)) {
        int e = errno;
        return dkb_fail(DK_EOS, "%s report: writing failed (%s); check the disk or the output path",
                        format, e ? strerror(e) : "stream error");
    }
    return 0;
}

void dkb__put_utf8(FILE *out, unsigned long cp)
{
    unsigned char b[4];
    fwrite(b, 1, dk__utf8_encode(cp, b), out);
}

double dkb__time_scale(double ns, const char **unit)
{
    double a = fabs(ns);
    if (a < 1e3 || !isfinite(a)) {
        *unit = "ns";
        return 1;
    }
    if (a < 1e6) {
        *unit = "\xC2\xB5s";
        return 1e3;
    }
    if (a < 1e9) {
        *unit = "ms";
        return 1e6;
    }
    *unit = "s";
    return 1e9;
}

/* n rounded to an integer with a comma every three digits. */
static void thousands(char *buf, size_t size, double v)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", fabs(v));
    size_t nd = strlen(digits), o = 0;
    if (v < 0 && o + 1 < size)
        buf[o++] = '-';
    for (size_t i = 0; i < nd && o + 1 < size; i++) {
        if (i > 0 && (nd - i) % 3 == 0 && o + 2 < size)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
}

char *dkb__fmt_value(char *buf, size_t size, double v, bool is_time)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    if (is_time) {
        const char *unit;
        double d = dkb__time_scale(v, &unit);
        snprintf(buf, size, "%.4g %s", v / d, unit);
        return buf;
    }
    double a = fabs(v);
    if (a < 1e4)
        snprintf(buf, size, "%.4g", v);
    else if (a < 1e7)
        thousands(buf, size, v);
    else if (a < 1e9)
        snprintf(buf, size, "%.4g M", v / 1e6);
    else
        snprintf(buf, size, "%.4g G", v / 1e9);
    return buf;
}

bool dkb__has_estimates(const dkb_result *r, const dkb_measure *m)
{
    return m->available && r->n_samples >= 2 && m->y != NULL;
}

const dkb_measure *dkb__find_measure(const dkb_result *r, const char *const *names)
{
    for (size_t i = 1; i < r->n_measures && i < DKB_MAX_MEASURES; i++)
        for (const char *const *n = names; *n != NULL; n++)
            if (strcmp(r->m[i].name, *n) == 0 && dkb__has_estimates(r, &r->m[i]))
                return &r->m[i];
    return NULL;
}

int dkb__put_unmeasured(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                        size_t n, const char *header, const char *lead, const char *tail,
                        const char *footer, void (*put)(FILE *, const char *))
{
    const char *whole = run != NULL && run->why_no_counters[0] ? run->why_no_counters : NULL;
    size_t k = 0;
    if (whole == NULL || strcmp(run->backend, "none") != 0)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 1;
                 results[i] != NULL && j < results[i]->n_measures && j < DKB_MAX_MEASURES; j++)
                k += !results[i]->m[j].available;
    if (k == 0) {
        if (whole != NULL) {
            fputs(header, out);
            fputs(lead, out);
            put(out, whole);
            fputs(tail, out);
            fputs(footer, out);
        }
        return 0;
    }
    const char **names = malloc(2 * k * sizeof *names);
    if (names == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory listing the unmeasured events");
    const char **why = names + k;
    k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 1; results[i] != NULL && j < results[i]->n_measures && j < DKB_MAX_MEASURES;
             j++) {
            const dkb_measure *m = &results[i]->m[j];
            if (m->available)
                continue;
            names[k] = m->name;
            why[k++] = m->why[0] ? m->why : "no reason given";
        }
    fputs(header, out);
    dk__put_unavailable(out, k, names, why, lead, tail, put);
    fputs(footer, out);
    free(names);
    return 0;
}
