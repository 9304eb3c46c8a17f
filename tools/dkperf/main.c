/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf - hardware performance counters from the command line:
 * info, list, stat, bench, record and report.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "record.h"
#include "report.h"
#include "signals.h"

#define DKPERF_TOOL_VERSION "0.1.0"

/* The edit distance (insertions, deletions, substitutions; ASCII case
 * ignored) from a command typed to a command's name, for "did you mean";
 * at least 16 when either is longer than that. */
static size_t command_distance(const char *a, const char *b)
{
    enum { MAX = 16 };
    size_t la = strlen(a), lb = strlen(b), row[MAX + 1];
    if (la > MAX || lb > MAX)
        return MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0]; /* the row above, one column left */
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            size_t d = diag + (ca != cb);
            if (row[j] + 1 < d)
                d = row[j] + 1;
            if (row[j - 1] + 1 < d)
                d = row[j - 1] + 1;
            diag = row[j];
            row[j] = d;
        }
    }
    return row[lb];
}

static void usage(FILE *out)
{
    fputs("usage: dkperf <command> [options]\n"
          "\n"
          "commands:\n"
          "  info                 the backend in use and why, the CPU, its PMU and counters\n"
          "  list [PATTERN]       the events this machine can count\n"
          "  stat [-e EV,...] -- CMD [ARGS...]\n"
          "                       run CMD and report its counts\n"
          "  bench [-e EV,...] [-r N] -- CMD [CMD...]\n"
          "                       run each CMD many times; compare times and counts\n"
          "  record [-e EV,...] [-F HZ] [-g] -- CMD [ARGS...]\n"
          "                       run CMD and sample where its time or events go\n"
          "  report [-i FILE] [--folded|--speedscope F|--html F]\n"
          "                       the functions a recording's samples fell in\n"
          "  diff OLD NEW         each function's change of share between two recordings\n"
          "  help [COMMAND]       this text, or a command's options\n"
          "\n"
          "  --version            print the version\n"
          "\n"
          "environment: DKPERF_BACKEND=kperf|selfcounts|perf_event forces a backend;\n"
          "DKPERF_FRAMEWORK_ROOT prefixes the macOS framework paths. See dkperf(1).\n",
          out);
}

static int help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "info") == 0)
        help_info(stdout);
    else if (strcmp(argv[1], "list") == 0)
        help_list(stdout);
    else if (strcmp(argv[1], "stat") == 0)
        help_stat(stdout);
    else if (strcmp(argv[1], "bench") == 0)
        help_bench(stdout);
    else if (strcmp(argv[1], "record") == 0)
        help_record(stdout);
    else if (strcmp(argv[1], "report") == 0)
        help_report(stdout);
    else if (strcmp(argv[1], "diff") == 0)
        help_diff(stdout);
    else {
        cli_error("help", "no command called %s (info, list, stat, bench, record, report, diff)",
                  argv[1]);
        return EXIT_USAGE;
    }
    return 0;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 1, argv + 1);
    if (strcmp(cmd, "stat") == 0)
        return cmd_stat(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0)
        return cmd_diff(argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return help(argc - 1, argv + 1);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("dkperf %s (libdkperf %s)\n", DKPERF_TOOL_VERSION, dk_version());
        return 0;
    }
    static const char *const commands[] = {"info",   "list",   "stat", "bench",
                                           "record", "report", "diff", "help"};
    const char *near = NULL;
    size_t best = 3;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        size_t d = command_distance(cmd, commands[i]);
        if (d < best) {
            best = d;
            near = commands[i];
        }
    }
    if (near != NULL) { /* one line, as for every other usage error */
        fprintf(stderr, "dkperf: no command called %s; did you mean %s? (dkperf help lists them)\n",
                cmd, near);
        return EXIT_USAGE;
    }
    fprintf(stderr, "dkperf: no command called %s\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int rc = cli_close_stdout(run(argc, argv));
    signals_end(rc);
    return rc;
}
