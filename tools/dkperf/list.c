/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * list.c - dkperf list: the events this machine can count, portable names
 * first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json.h"

void help_list(FILE *out)
{
    fputs("usage: dkperf list [PATTERN] [--json] [--backend NAME]\n"
          "\n"
          "List the events this machine can count: the portable names (the same on every\n"
          "backend) and what they stand for here, then every event of the database with its\n"
          "alias, kind, the counters it may use and a description. PATTERN keeps the events\n"
          "whose name or alias contains it, ignoring case.\n"
          "\n"
          "  --json           one JSON object\n"
          "  --backend NAME   auto, kperf, selfcounts or perf_event\n",
          out);
}

/* "2-4,7" for a counter mask; "any" for 0. */
static const char *counters_text(const dk_database_event *ev, char *buf, size_t size)
{
    if (ev->counters_mask == 0)
        return ev->fixed ? "fixed" : "any";
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < 32; i++) {
        if (!(ev->counters_mask >> i & 1))
            continue;
        unsigned j = i;
        while (j + 1 < 32 && (ev->counters_mask >> (j + 1) & 1))
            j++;
        int n = j > i ? snprintf(buf + used, size - used, "%s%u-%u", used ? "," : "", i, j)
                      : snprintf(buf + used, size - used, "%s%u", used ? "," : "", i);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
        i = j;
    }
    return buf;
}

static const char *kind_of(const dk_database_event *ev)
{
    if (ev->source != NULL && strcmp(ev->source, "kpep") != 0 &&
        strcmp(ev->source, "selfcounts") != 0)
        return ev->source;
    return ev->fixed ? "fixed" : "configurable";
}

static bool contains_ci(const char *hay, const char *needle)
{
    for (; *hay != '\0'; hay++) {
        size_t i = 0;
        while (needle[i] != '\0' && hay[i] != '\0' && (hay[i] | 32) == (needle[i] | 32))
            i++;
        if (needle[i] == '\0')
            return true;
    }
    return needle[0] == '\0';
}

/* A portable name matches when it or the event it stands for contains the pattern. */
static bool portable_matches(const char *portable, const dk_database_event *ev, const char *pattern)
{
    return pattern == NULL || contains_ci(portable, pattern) ||
           (ev != NULL && contains_ci(ev->name, pattern));
}

int cmd_list(int argc, char **argv)
{
    bool json;
    const char *backend, *pattern;
    int rc = cli_simple_options("list", argc, argv, help_list, &json, &backend, &pattern);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    dk_sampler *s = cli_open_sampler_flags("list", backend, DK_SAMPLER_QUERY_ONLY);
    if (s == NULL)
        return EXIT_SETUP;
    const dk_database *db = dk_sampler_database(s);
    size_t total = dk_database_event_count(db);
    const dk_database_event **events = calloc(total + 1, sizeof *events);
    if (events == NULL) {
        cli_error("list", "out of memory while listing %zu events", total);
        return cli_close_sampler("list", s, EXIT_SETUP);
    }
    size_t n = dk_database_match(db, pattern != NULL ? pattern : "", events, total);
    FILE *out = stdout;

    if (json) {
        dk__json_string_member(out, "{", "backend", ": ", dk_sampler_backend(s));
        dk__json_string_member(out, ", ", "database", ": ", dk_database_name(db));
        dk__json_string_member(out, ", ", "cpu", ": ", dk_cpu_name(dk_sampler_cpu(s)));
        dk__json_string_member(out, ", ", "pattern", ": ", pattern);
        fputs(", \"portable\": [", out);
        bool first = true;
        for (size_t i = 0; dk_portable_name(i) != NULL; i++) {
            const dk_database_event *ev = NULL;
            (void)dk_sampler_resolve(s, dk_portable_name(i), &ev);
            if (!portable_matches(dk_portable_name(i), ev, pattern))
                continue;
            ev = cli_event_probed(s, ev); /* only the ones shown */
            dk__json_string_member(out, first ? "{" : ", {", "name", ": ", dk_portable_name(i));
            first = false;
            dk__json_string_member(out, ", ", "description", ": ", dk_portable_description(i));
            dk__json_string_member(out, ", ", "event", ": ", ev != NULL ? ev->name : NULL);
            fprintf(out, ", \"supported\": %s}", ev != NULL && ev->supported ? "true" : "false");
        }
        fputs("], \"events\": [", out);
        for (size_t i = 0; i < n; i++) {
            const dk_database_event *ev = events[i];
            dk__json_string_member(out, i ? ", {" : "{", "name", ": ", ev->name);
            dk__json_string_member(out, ", ", "alias", ": ", ev->alias);
            dk__json_string_member(out, ", ", "kind", ": ", kind_of(ev));
            fprintf(out, ", \"fixed\": %s, \"number\": %u, \"counters\": [",
                    ev->fixed ? "true" : "false", (unsigned)ev->number);
            bool any = false;
            for (unsigned c = 0; c < 32; c++)
                if (ev->counters_mask >> c & 1) {
                    fprintf(out, "%s%u", any ? ", " : "", c);
                    any = true;
                }
            dk__json_string_member(out, "], ", "description", ": ", ev->description);
            dk__json_string_member(out, ", ", "fallback", ": ", ev->fallback);
            dk__json_string_member(out, ", ", "unit", ": ", ev->unit);
            dk__json_string_member(out, ", ", "source", ": ", ev->source);
            fprintf(out, ", \"supported\": %s}", ev->supported ? "true" : "false");
        }
        fputs("]}\n", out);
    } else {
        fprintf(out, "Portable events (the same name on every backend):\n");
        for (size_t i = 0; dk_portable_name(i) != NULL; i++) {
            const dk_database_event *ev = NULL;
            (void)dk_sampler_resolve(s, dk_portable_name(i), &ev);
            if (!portable_matches(dk_portable_name(i), ev, pattern))
                continue;
            ev = cli_event_probed(s, ev); /* only the ones shown */
            fprintf(out, "  %-18s %-32s %s%s\n", dk_portable_name(i), ev != NULL ? ev->name : "-",
                    dk_portable_description(i),
                    ev == NULL       ? " (none on this CPU)"
                    : !ev->supported ? " (not countable here)"
                                     : "");
        }
        fprintf(out, "\nEvents of the %s database (%s, %s): %zu%s\n", dk_database_name(db),
                dk_cpu_name(dk_sampler_cpu(s)), dk_database_marketing_name(db), n,
                pattern != NULL ? " matching" : "");
        if (n > 0)
            fprintf(out, "  %-40s %-13s %-13s %-9s %s\n", "NAME", "ALIAS", "KIND", "COUNTERS",
                    "DESCRIPTION");
        for (size_t i = 0; i < n; i++) {
            const dk_database_event *ev = events[i];
            char ctrs[64];
            fprintf(out, "  %-40s %-13s %-13s %-9s %s%s\n", ev->name, ev->alias ? ev->alias : "",
                    kind_of(ev), counters_text(ev, ctrs, sizeof ctrs), ev->description,
                    ev->supported ? "" : " [not countable here]");
        }
    }
    free(events);
    return cli_close_sampler("list", s, 0);
}
