/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * event_spec.c - the one grammar of an event spec (dkperf.h): name, rNNN or
 * pmu/terms/, modifiers, a period or a frequency, and comma-separated
 * lists of them. Every caller (the core's name resolution, the perf_event
 * backend's PMU terms, the tools' -e) reads specs here, so that they agree
 * on what a spec is. The text is untrusted: each byte is looked at a
 * bounded number of times (at most twice: a '/' is tried as a period, then
 * as terms), so the time is linear in the length.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

/* Where a spec ends within the text: at end, or at a top-level comma when
 * splitting a list. */
typedef struct scan {
    const char *text; /* the whole text, for positions */
    size_t base;      /* where the spec starts in text */
    size_t end;       /* one past the last byte the spec may use */
    bool list;        /* a top-level comma ends the spec */
    size_t terms_end; /* past the pmu terms read so far: their commas are the spec's */
} scan;

/* Whether text[i] is inside the text (a NUL ends it too). */
static bool in_text(const scan *sc, size_t i) { return i < sc->end && sc->text[i] != '\0'; }

static bool at_end(const scan *sc, size_t i)
{
    return !in_text(sc, i) || (sc->list && sc->text[i] == ',');
}

/* The spec, cut short at 64 bytes for a message, as a NUL-terminated copy:
 * up to the comma that ends it, after the terms and the byte at fault. */
static void shown(const scan *sc, size_t i, char *buf, size_t size)
{
    size_t n = 0, max = 64, from = i > sc->terms_end ? i : sc->terms_end;
    size_t k = sc->base;
    for (; in_text(sc, k) && !(sc->list && k >= from && sc->text[k] == ',') && n < max &&
           n + 1 < size;
         k++)
        buf[n++] = sc->text[k];
    bool cut = n == max && in_text(sc, k) && !(sc->list && k >= from && sc->text[k] == ',');
    buf[n] = '\0';
    if (cut && n + 4 < size)
        memcpy(buf + n, "...", 4);
}

/* DK_EINVAL: "event 'SPEC' at position P: WHY". */
static int bad(const scan *sc, size_t i, const char *why, ...) DK__PRINTF(3, 4);
static int bad(const scan *sc, size_t i, const char *why, ...)
{
    char spec[80], what[256];
    shown(sc, i, spec, sizeof spec);
    va_list ap;
    va_start(ap, why);
    vsnprintf(what, sizeof what, why, ap);
    va_end(ap);
    return dk__fail(DK_EINVAL, "event '%s' at position %zu: %s", spec, i + 1, what);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Whether text[i..] is an optional sign and digits up to the end of the spec. */
static bool rate_follows(const scan *sc, size_t i)
{
    if (!at_end(sc, i) && (sc->text[i] == '+' || sc->text[i] == '-'))
        i++;
    if (at_end(sc, i))
        return false;
    for (; !at_end(sc, i); i++)
        if (!is_digit(sc->text[i]))
            return false;
    return true;
}

/* The rate after '/' or '@' at text[i]: digits from 1 to max, to the end. */
static int parse_rate(const scan *sc, size_t i, size_t *next, dk_event_spec *out)
{
    bool period = sc->text[i] == '/';
    uint64_t max = period ? DK_EVENT_SPEC_MAX_PERIOD : DK_EVENT_SPEC_MAX_FREQ;
    const char *what = period ? "period" : "frequency";
    const char *unit = period ? "events" : "samples a second";
    size_t at = ++i;
    bool minus = false;
    if (!at_end(sc, i) && (sc->text[i] == '+' || sc->text[i] == '-'))
        minus = sc->text[i++] == '-';
    if (at_end(sc, i) || !is_digit(sc->text[i]))
        return bad(sc, at, "the %s after '%c' must be a positive integer (1 to %" PRIu64 " %s)",
                   what, sc->text[at - 1], max, unit);
    uint64_t v = 0;
    bool over = false;
    for (; !at_end(sc, i); i++) {
        char c = sc->text[i];
        if (!is_digit(c))
            return bad(sc, i, "'%c' in the %s (digits only, 1 to %" PRIu64 " %s)", c, what, max,
                       unit);
        unsigned d = (unsigned)(c - '0');
        if (!over && v > (max - d) / 10)
            over = true; /* keep reading: a later non-digit is the error to give */
        if (!over)
            v = v * 10 + d;
    }
    if (minus || (!over && v == 0))
        return bad(sc, at, "the %s must be a positive integer (1 to %" PRIu64 " %s)", what, max,
                   unit);
    if (over)
        return bad(sc, at, "the %s is out of range (1 to %" PRIu64 " %s)", what, max, unit);
    if (period)
        out->period = v;
    else
        out->freq = v;
    *next = i;
    return 0;
}

/* Modifier letters from text[i] to the end of the spec or a rate. */
static int parse_modifiers(const scan *sc, size_t i, bool colon, size_t *next, dk_event_spec *out)
{
    size_t first = i;
    for (; !at_end(sc, i) && sc->text[i] != '/' && sc->text[i] != '@'; i++) {
        char c = sc->text[i];
        unsigned m = c == 'u'   ? DK_EVENT_MOD_USER
                     : c == 'k' ? DK_EVENT_MOD_KERNEL
                     : c == 'h' ? DK_EVENT_MOD_HV
                                : 0;
        if (m == 0) {
            if (c == ':')
                return bad(sc, i, "a second ':' (modifiers are letters after one ':')");
            if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
                return bad(sc, i,
                           "byte 0x%02x where a modifier goes (u: user mode, k: kernel "
                           "mode, h: hypervisor)",
                           (unsigned)(unsigned char)c);
            return bad(sc, i,
                       "unknown modifier '%c' (u: user mode, k: kernel mode, h: "
                       "hypervisor)",
                       c);
        }
        out->modifiers |= m;
    }
    if (colon && i == first)
        return bad(sc, i - 1,
                   "nothing follows the ':' (modifiers: u for user mode, k for "
                   "kernel mode, h for the hypervisor)");
    *next = i;
    return 0;
}

/* One spec from text[sc->base]; *next is one past its last byte. */
static int parse_one(scan *sc, size_t *next, dk_event_spec *out)
{
    const char *t = sc->text;
    size_t i = sc->base;
    memset(out, 0, sizeof *out);
    out->text = t + sc->base;
    out->offset = sc->base;
    out->kind = DK_EVENT_SPEC_NAME;
    while (!at_end(sc, i) && t[i] != '/' && t[i] != ':' && t[i] != '@' && t[i] != ',')
        i++;
    if (i == sc->base) {
        if (at_end(sc, i))
            return dk__fail(DK_EINVAL,
                            "an empty event at position %zu (give names separated "
                            "by commas)",
                            i + 1);
        return bad(sc, i, "no event name before '%c'", t[i]);
    }
    bool modifiers_without_colon = false;
    if (!at_end(sc, i) && t[i] == ',') /* only when not splitting a list */
        return bad(sc, i, "a ',' (one event at a time here)");
    if (!at_end(sc, i) && t[i] == '/' && !rate_follows(sc, i + 1)) {
        /* pmu/terms/: the terms run to the next '/' and may hold commas. */
        out->kind = DK_EVENT_SPEC_PMU;
        out->pmu_len = i - sc->base;
        size_t open = i++;
        while (in_text(sc, i) && t[i] != '/')
            i++;
        /* Unclosed terms that start with a digit or a sign are a period
         * with a bad byte ("cycles/1e6"): parse_rate names that byte, where
         * "unbalanced '/'" would send the user looking for a PMU. */
        if (!in_text(sc, i) && !at_end(sc, open + 1) &&
            (is_digit(t[open + 1]) || t[open + 1] == '+' || t[open + 1] == '-')) {
            int rc = parse_rate(sc, open, &i, out); /* fails: rate_follows said so */
            return rc != 0 ? rc : bad(sc, open, "not a period");
        }
        sc->terms_end = i;
        if (!in_text(sc, i))
            return bad(sc, open,
                       "unbalanced '/': the terms opened here have no closing '/' "
                       "(write pmu/term=value,.../)");
        i++;
        modifiers_without_colon = true;
    } else if (i - sc->base >= 2 && t[sc->base] == 'r') {
        /* rNNN: all hex digits after the 'r', or it is a name ("ref-cycles"). */
        bool hex = true;
        for (size_t k = sc->base + 1; k < i && hex; k++)
            hex = hex_value(t[k]) >= 0;
        if (hex) {
            if (i - sc->base - 1 > 16)
                return bad(sc, sc->base + 17,
                           "a raw event of more than 64 bits (at most 16 hex "
                           "digits after the 'r')");
            out->kind = DK_EVENT_SPEC_RAW;
            for (size_t k = sc->base + 1; k < i; k++)
                out->raw = out->raw << 4 | (uint64_t)hex_value(t[k]);
        }
    }
    out->event_len = i - sc->base;
    if (!at_end(sc, i) && t[i] == ':') {
        int rc = parse_modifiers(sc, i + 1, true, &i, out);
        if (rc != 0)
            return rc;
    } else if (modifiers_without_colon && !at_end(sc, i) && t[i] != '/' && t[i] != '@') {
        int rc = parse_modifiers(sc, i, false, &i, out);
        if (rc != 0)
            return rc;
    }
    out->base_len = i - sc->base;
    if (!at_end(sc, i) && (t[i] == '/' || t[i] == '@')) {
        if (t[i] == '/' && !rate_follows(sc, i + 1))
            return bad(sc, i,
                       "'/' after the event starts a period: give digits only (EV/N "
                       "samples every N events)");
        int rc = parse_rate(sc, i, &i, out);
        if (rc != 0)
            return rc;
    }
    if (!at_end(sc, i))
        return bad(sc, i, "'%c' after the event (write EV[:MODIFIERS][/PERIOD|@FREQ])", t[i]);
    out->len = i - sc->base;
    *next = i;
    return 0;
}

/* The caller's struct says its size: a program built against an older,
 * shorter dk_event_spec gets the fields it knows, and never a write past
 * them. The first version ends with freq. */
#define SPEC_V1_SIZE (offsetof(dk_event_spec, freq) + sizeof(uint64_t))

static int check_size(const dk_event_spec *out, const char *fn)
{
    if (out->size < SPEC_V1_SIZE)
        return dk__fail(DK_EINVAL,
                        "%s: dk_event_spec.size is %zu: set it to "
                        "sizeof(dk_event_spec)",
                        fn, out->size);
    return 0;
}

static void give(dk_event_spec *sp, dk_event_spec *out)
{
    size_t size = out->size < sizeof *sp ? out->size : sizeof *sp;
    sp->size = size;
    memcpy(out, sp, size);
}

int dk_event_spec_parse(const char *text, size_t len, dk_event_spec *out)
{
    if (text == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_event_spec_parse: text and out must not be NULL");
    /* A NUL ends the text, as it would any name passed on. */
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL)
        len = (size_t)(nul - text);
    scan sc = {text, 0, len, false, 0};
    size_t next;
    dk_event_spec sp;
    int rc = check_size(out, "dk_event_spec_parse");
    if (rc == 0)
        rc = parse_one(&sc, &next, &sp);
    if (rc == 0)
        give(&sp, out);
    return rc;
}

int dk_event_list_next(const char *list, size_t *pos, dk_event_spec *out)
{
    if (list == NULL || pos == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_event_list_next: list, pos and out must not be NULL");
    size_t i = *pos;
    if (list[i] == '\0') {
        if (i == 0)
            return dk__fail(DK_EINVAL, "an empty event list (give names separated by commas)");
        if (list[i - 1] == ',')
            return dk__fail(DK_EINVAL,
                            "an empty event at position %zu, after the last comma "
                            "(give names separated by commas)",
                            i + 1);
        return 0;
    }
    /* The end is found as the spec is read: only its own bytes are looked at. */
    scan sc = {list, i, SIZE_MAX, true, i};
    size_t next;
    dk_event_spec sp;
    int rc = check_size(out, "dk_event_list_next");
    if (rc == 0)
        rc = parse_one(&sc, &next, &sp);
    if (rc != 0)
        return rc;
    give(&sp, out);
    *pos = list[next] == ',' ? next + 1 : next;
    return 1;
}
