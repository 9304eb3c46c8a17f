/*
 * list.c - dkperf list: the events this machine can count, portable names
 * first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

static bool portable_matches(const char *portable, const dk_database_event *ev, const char *pattern)
{
    if (pattern == NULL)
        return true;
    size_t n = 1;
    const dk_database_event *one;
    (void)n;
    (void)one;
    /* A case-insensitive substring test, as the database match does. */
    for (const char *h = portable; *h; h++) {
        size_t i = 0;
        while (pattern[i] && h[i] && (h[i] | 32) == (pattern[i] | 32))
            i++;
        if (pattern[i] == '\0')
            return true;
    }
    if (ev != NULL) {
        for (const char *h = ev->name; *h; h++) {
            size_t i = 0;
            while (pattern[i] && h[i] && (h[i] | 32) == (pattern[i] | 32))
                i++;
            if (pattern[i] == '\0')
                return true;
        }
    }
    return false;
}

int cmd_list(int argc, char **argv)
{
    bool json = false;
    const char *backend = NULL, *pattern = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backend = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help_list(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            cli_error("list", "unknown option %s (see dkperf help list)", argv[i]);
            return EXIT_USAGE;
        } else if (pattern == NULL) {
            pattern = argv[i];
        } else {
            cli_error("list", "one PATTERN at most (got %s and %s)", pattern, argv[i]);
            return EXIT_USAGE;
        }
    }
    if (backend != NULL && cli_backend_kind(backend) < 0) {
        cli_error("list", "--backend %s: not a backend (auto, kperf, selfcounts, perf_event)",
                  backend);
        return EXIT_USAGE;
    }
    dk_sampler *s = cli_open_sampler("list", backend);
    if (s == NULL)
        return EXIT_SETUP;
    const dk_database *db = dk_sampler_database(s);
    size_t total = dk_database_event_count(db);
    const dk_database_event **events = calloc(total + 1, sizeof *events);
    if (events == NULL) {
        cli_error("list", "out of memory");
        dk_sampler_close(s);
        return EXIT_SETUP;
    }
    size_t n = dk_database_match(db, pattern != NULL ? pattern : "", events, total);
    FILE *out = stdout;

    if (json) {
        fputs("{\"backend\": ", out);
        json_string(out, dk_sampler_backend(s));
        fputs(", \"database\": ", out);
        json_string(out, dk_database_name(db));
        fputs(", \"cpu\": ", out);
        json_string(out, dk_cpu_name(dk_sampler_cpu(s)));
        fputs(", \"pattern\": ", out);
        json_string(out, pattern);
        fputs(", \"portable\": [", out);
        bool first = true;
        for (size_t i = 0; dk_portable_name(i) != NULL; i++) {
            const dk_database_event *ev = NULL;
            (void)dk_sampler_resolve(s, dk_portable_name(i), &ev);
            if (!portable_matches(dk_portable_name(i), ev, pattern))
                continue;
            fputs(first ? "{\"name\": " : ", {\"name\": ", out);
            first = false;
            json_string(out, dk_portable_name(i));
            fputs(", \"description\": ", out);
            json_string(out, dk_portable_description(i));
            fputs(", \"event\": ", out);
            json_string(out, ev != NULL ? ev->name : NULL);
            fprintf(out, ", \"supported\": %s}", ev != NULL && ev->supported ? "true" : "false");
        }
        fputs("], \"events\": [", out);
        for (size_t i = 0; i < n; i++) {
            const dk_database_event *ev = events[i];
            fputs(i ? ", {\"name\": " : "{\"name\": ", out);
            json_string(out, ev->name);
            fputs(", \"alias\": ", out);
            json_string(out, ev->alias);
            fputs(", \"kind\": ", out);
            json_string(out, kind_of(ev));
            fprintf(out, ", \"fixed\": %s, \"number\": %u, \"counters\": [", ev->fixed ? "true" : "false",
                    (unsigned)ev->number);
            bool any = false;
            for (unsigned c = 0; c < 32; c++)
                if (ev->counters_mask >> c & 1) {
                    fprintf(out, "%s%u", any ? ", " : "", c);
                    any = true;
                }
            fputs("], \"description\": ", out);
            json_string(out, ev->description);
            fputs(", \"fallback\": ", out);
            json_string(out, ev->fallback);
            fputs(", \"unit\": ", out);
            json_string(out, ev->unit);
            fputs(", \"source\": ", out);
            json_string(out, ev->source);
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
            fprintf(out, "  %-18s %-32s %s%s\n", dk_portable_name(i), ev != NULL ? ev->name : "-",
                    dk_portable_description(i),
                    ev == NULL ? " (none on this CPU)"
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
    dk_sampler_close(s);
    return 0;
}
