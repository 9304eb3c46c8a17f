/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_spec.c - perf_event event specs: raw "rNNNN", "pmu/term=value,.../"
 * with its u/k modifiers, and the sysfs format files (format/<term>) and
 * event files (events/<name>) the terms are read through. Every input here
 * is untrusted text; see perf_event.h for the contracts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/perf_event/pe_internal.h"

/* A decimal number of at most max from *p, digits only (no sign, no
 * space); *p moves past it. Kernel files are input like any other. */
bool dk__pe_parse_decimal(const char **p, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return true;
}

/* A PMU's type file: one decimal number that fits perf_event_attr.type. */
bool dk__pe_parse_type(const char *text, uint32_t *type)
{
    uint64_t v;
    if (!dk__pe_parse_decimal(&text, UINT32_MAX, &v) || *text != '\0')
        return false;
    *type = (uint32_t)v;
    return true;
}

/* Put value into the bits a sysfs format spec ("config:0-7,32-35") names. */
int dk__pe_apply_format(pe_def *def, const char *spec, uint64_t value)
{
    const char *colon = strchr(spec, ':');
    if (colon == NULL)
        return -1;
    uint64_t *field;
    size_t flen = (size_t)(colon - spec);
    if (flen == 6 && strncmp(spec, "config", 6) == 0)
        field = &def->config;
    else if (flen == 7 && strncmp(spec, "config1", 7) == 0)
        field = &def->config1;
    else if (flen == 7 && strncmp(spec, "config2", 7) == 0)
        field = &def->config2;
    else
        return -1;
    const char *p = colon + 1;
    unsigned used = 0; /* bits of value placed so far */
    if (*p == '\0')
        return -1;
    while (*p != '\0') {
        uint64_t lo, hi;
        if (!dk__pe_parse_decimal(&p, 63, &lo))
            return -1;
        hi = lo;
        if (*p == '-' && (p++, !dk__pe_parse_decimal(&p, 63, &hi)))
            return -1;
        if (hi < lo)
            return -1;
        for (uint64_t b = lo; b <= hi; b++, used++)
            if (used < 64 && (value >> used & 1))
                *field |= (uint64_t)1 << b;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p != '\0')
            return -1;
    }
    if (used < 64 && (value >> used) != 0)
        return -2; /* the value does not fit the field */
    return 0;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, pe_def *def,
                       const char *whole, int depth);

/* One term of a pmu/.../ event. */
static int parse_term(const char *sysfs, const char *pmu, char *term, pe_def *def,
                      const char *whole, int depth)
{
    char path[512], spec[256];
    char *eq = strchr(term, '=');
    uint64_t value = 1;
    if (eq != NULL) {
        *eq = '\0';
        char *end;
        errno = 0;
        value = strtoull(eq + 1, &end, 0);
        bool digits = end != eq + 1 && *end == '\0' && eq[1] >= '0' && eq[1] <= '9';
        if (digits && errno == ERANGE)
            return dk__fail(DK_EINVAL,
                            "event " DK__SHOWN_FMT ": " DK__SHOWN_FMT " is out of range (at most "
                            "2^64-1, 18446744073709551615)",
                            DK__SHOWN(whole), DK__SHOWN(eq + 1));
        if (errno != 0 || !digits)
            return dk__fail(DK_EINVAL,
                            "event " DK__SHOWN_FMT ": \"" DK__SHOWN_FMT "\" is not a number",
                            DK__SHOWN(whole), DK__SHOWN(eq + 1));
    }
    if (term[0] == '\0' || term[0] == '.' || strchr(term, '/') != NULL)
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": \"" DK__SHOWN_FMT "\" is not a term name",
                        DK__SHOWN(whole), DK__SHOWN(term));
    if (strcmp(term, "config") == 0)
        def->config = value;
    else if (strcmp(term, "config1") == 0)
        def->config1 = value;
    else if (strcmp(term, "config2") == 0)
        def->config2 = value;
    else if (strcmp(term, "name") == 0)
        ; /* a label only */
    else {
        if (dk__pe_pathf(path, sizeof path, "%s/%s/format/%s", sysfs, pmu, term) == 0 &&
            dk__pe_read_text(path, spec, sizeof spec) == 0) {
            int rc = dk__pe_apply_format(def, spec, value);
            if (rc == -2)
                return dk__fail(DK_EINVAL,
                                "event " DK__SHOWN_FMT ": " DK__SHOWN_FMT "=0x%llx does not fit %s",
                                DK__SHOWN(whole), DK__SHOWN(term), (unsigned long long)value, spec);
            if (rc != 0)
                return dk__fail(DK_EINVAL,
                                "event " DK__SHOWN_FMT
                                ": cannot use the format \"%s\" of " DK__SHOWN_FMT "",
                                DK__SHOWN(whole), spec, DK__SHOWN(term));
            return 0;
        }
        /* A named event of the PMU stands for its definition. */
        if (eq == NULL && depth == 0 &&
            dk__pe_pathf(path, sizeof path, "%s/%s/events/%s", sysfs, pmu, term) == 0 &&
            dk__pe_read_text(path, spec, sizeof spec) == 0)
            return parse_terms(sysfs, pmu, spec, def, whole, depth + 1);
        return dk__fail(DK_ENOEVENT,
                        "event " DK__SHOWN_FMT
                        ": PMU %s has no format term or event called " DK__SHOWN_FMT "",
                        DK__SHOWN(whole), pmu, DK__SHOWN(term));
    }
    return 0;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, pe_def *def,
                       const char *whole, int depth)
{
    char *save = NULL;
    for (char *term = strtok_r(terms, ",", &save); term != NULL;
         term = strtok_r(NULL, ",", &save)) {
        while (*term == ' ')
            term++;
        if (*term == '\0')
            continue;
        int rc = parse_term(sysfs, pmu, term, def, whole, depth);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* "pmu/terms/[modifiers]" into def, as the event grammar splits it
 * (util/event_spec.c); DK__NOT_MINE for any other kind of spec. */
static int parse_pmu_event(const char *sysfs, const char *name, const dk_event_spec *sp,
                           pe_def *def)
{
    if (sp->kind != DK_EVENT_SPEC_PMU)
        return DK__NOT_MINE;
    char pmu[64], terms[256], path[512], type[32];
    size_t plen = sp->pmu_len, tlen = sp->event_len - sp->pmu_len - 2;
    if (plen >= sizeof pmu || tlen >= sizeof terms)
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT " is too long (a PMU name of at most %zu bytes, "
                        "terms of at most %zu)",
                        DK__SHOWN(name), sizeof pmu - 1, sizeof terms - 1);
    memcpy(pmu, name, plen);
    pmu[plen] = '\0';
    if (pmu[0] == '.')
        return dk__fail(DK_EINVAL, "event " DK__SHOWN_FMT ": \"%s\" is not a PMU name",
                        DK__SHOWN(name), pmu);
    memcpy(terms, name + plen + 1, tlen);
    terms[tlen] = '\0';
    if (dk__pe_pathf(path, sizeof path, "%s/%s/type", sysfs, pmu) != 0 ||
        dk__pe_read_text(path, type, sizeof type) != 0)
        return dk__fail(DK_ENOEVENT, "event " DK__SHOWN_FMT ": there is no PMU called %s (see %s)",
                        DK__SHOWN(name), pmu, sysfs);
    memset(def, 0, sizeof *def);
    if (!dk__pe_parse_type(type, &def->type))
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": %s holds \"%.32s\", not a PMU type number",
                        DK__SHOWN(name), path, type);
    /* The core strips modifiers before a name comes here; a direct caller's
     * u or k alone restricts the mode, both count both. */
    unsigned m = sp->modifiers & (DK_EVENT_MOD_USER | DK_EVENT_MOD_KERNEL);
    def->exclude = m == DK_EVENT_MOD_USER ? 'u' : m == DK_EVENT_MOD_KERNEL ? 'k' : 0;
    return parse_terms(sysfs, pmu, terms, def, name, 0);
}

int dk__pe_parse_terms(const char *sysfs, const char *pmu, const char *terms, const char *whole,
                       pe_def *def)
{
    char buf[256];
    if (strlen(terms) >= sizeof buf)
        return dk__fail(DK_EINVAL, "event " DK__SHOWN_FMT ": its terms are longer than %zu bytes",
                        DK__SHOWN(whole), sizeof buf - 1);
    if (pmu[0] == '\0' || pmu[0] == '.' || strchr(pmu, '/') != NULL)
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": \"" DK__SHOWN_FMT "\" is not a PMU name",
                        DK__SHOWN(whole), DK__SHOWN(pmu));
    memcpy(buf, terms, strlen(terms) + 1);
    return parse_terms(sysfs, pmu, buf, def, whole, 0);
}

int dk__pe_parse(const char *sysfs, const char *name, pe_def *def)
{
    dk_event_spec sp = {.size = sizeof sp};
    int rc = dk_event_spec_parse(name, strlen(name), &sp);
    if (rc != 0)
        return rc;
    if (sp.base_len != sp.len || (sp.modifiers & DK_EVENT_MOD_HV))
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": a period, a frequency or the h "
                        "modifier has no place in a perf_event definition",
                        DK__SHOWN(name));
    if (sp.kind == DK_EVENT_SPEC_RAW) {
        memset(def, 0, sizeof *def);
        def->type = PERF_TYPE_RAW;
        def->config = sp.raw;
        unsigned m = sp.modifiers;
        def->exclude = m == DK_EVENT_MOD_USER ? 'u' : m == DK_EVENT_MOD_KERNEL ? 'k' : 0;
        return 0;
    }
    return parse_pmu_event(sysfs, name, &sp, def);
}
