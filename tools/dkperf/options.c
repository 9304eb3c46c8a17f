/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * options.c - the command-line parsing dkperf stat and dkperf bench share
 * (see options.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

bool opt_takes(const char *command, int argc, char **argv, int *i, const char *short_name,
               const char *long_name, const char **value)
{
    const char *a = argv[*i];
    size_t slen = short_name != NULL ? strlen(short_name) : 0, llen = strlen(long_name);
    *value = NULL;
    if (short_name != NULL && strncmp(a, short_name, slen) == 0 && a[slen] != '\0') {
        *value = a + slen;
        return true;
    }
    if (strncmp(a, long_name, llen) == 0 && a[llen] == '=') {
        *value = a + llen + 1;
        return true;
    }
    if ((short_name == NULL || strcmp(a, short_name) != 0) && strcmp(a, long_name) != 0)
        return false;
    if (*i + 1 >= argc)
        cli_error(command, "%s needs a value (see dkperf help %s)", a, command);
    else
        *value = argv[++*i];
    return true;
}

bool opt_is(const char *a, const char *short_name, const char *long_name)
{
    return (short_name != NULL && strcmp(a, short_name) == 0) || strcmp(a, long_name) == 0;
}

bool opt_number(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

void free_event_list(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int append_name(const char *command, const char *start, size_t len, char ***names, size_t *n)
{
    /* Grow one at a time: DK_MAX_EVENTS bounds the list. */
    char **grown = realloc(*names, (*n + 1) * sizeof *grown);
    if (grown == NULL) {
        cli_error(command, "out of memory while splitting the -e list");
        return EXIT_SETUP;
    }
    *names = grown;
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        cli_error(command, "out of memory while splitting the -e list");
        return EXIT_SETUP;
    }
    memcpy(copy, start, len);
    copy[len] = '\0';
    grown[(*n)++] = copy;
    return 0;
}

int event_list_error(const char *command)
{
    cli_error(command, "-e: %s", dk_last_error());
    return EXIT_USAGE;
}

int split_event_list(const char *command, const char *list, char ***names, size_t *n)
{
    size_t pos = 0;
    dk_event_spec sp = {.size = sizeof sp};
    int rc;
    while ((rc = dk_event_list_next(list, &pos, &sp)) == 1) {
        if (sp.base_len != sp.len) {
            cli_error(command,
                      "-e: event '%.*s%s': a sampling period or frequency (/N, @HZ) "
                      "is for dkperf record; %s counts every event",
                      (int)(sp.len > 64 ? 64 : sp.len), sp.text, sp.len > 64 ? "..." : "", command);
            return EXIT_USAGE;
        }
        if (*n == DK_MAX_EVENTS) {
            cli_error(command, "-e: more than %d events", DK_MAX_EVENTS);
            return EXIT_USAGE;
        }
        rc = append_name(command, sp.text, sp.len, names, n);
        if (rc != 0)
            return rc;
    }
    return rc < 0 ? event_list_error(command) : 0;
}
