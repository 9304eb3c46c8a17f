/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_options.c - dkperf bench's command line (see bench.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "options.h"

void help_bench(FILE *out)
{
    fputs("usage: dkperf bench [-e EV[,EV...]] [-r N | --time S] [-w N] [--prepare CMD]\n"
          "                    [--setup CMD] [--cleanup CMD] [-n NAME]...\n"
          "                    [-P NAME MIN MAX [-D STEP] | -L NAME V,V,...]...\n"
          "                    [--export-json F] [--export-csv F] [--export-markdown F]\n"
          "                    [--save-baseline NAME | --baseline NAME] [--results-dir D]\n"
          "                    [-N | -S SHELL] [-i] [--show-output] [--no-progress]\n"
          "                    [--backend NAME]\n"
          "                    [--] CMD [CMD...]\n"
          "\n"
          "Run each CMD many times with its counters, started at its exec, and report per\n"
          "command the wall time and each event: mean and standard deviation, median, range\n"
          "and outliers; then how many times faster, and how many times fewer instructions,\n"
          "the best command is than each other. Each CMD is one argument, as with\n"
          "hyperfine: dkperf bench 'sort big.txt' 'sort -S 1G big.txt'. It is split into\n"
          "words and run without a shell (-S sh for one).\n"
          "\n"
          "  -e, --events EV,...  events to count (see dkperf help stat); default:\n"
          "                       instructions, cycles, branches (and task-clock on Linux)\n"
          "  -r, --runs N         exactly N runs of each command\n"
          "      --time S         without -r: at least S seconds of runs and at least 10\n"
          "                       runs of each command (default 3)\n"
          "  -w, --warmup N       N runs of each command first, not measured (default 0)\n"
          "      --prepare CMD    run CMD before every run, not measured\n"
          "      --setup CMD      run CMD once before the runs of each command\n"
          "      --cleanup CMD    run CMD once after the runs of each command\n"
          "  -n, --command-name NAME  the next command's name in the report and exports\n"
          "                       (with -P or -L: once for all, or once per benchmark)\n"
          "  -P, --parameter-scan NAME MIN MAX  one benchmark of each command per value\n"
          "                       from MIN to MAX, {NAME} in CMD replaced by the value\n"
          "  -D, --parameter-step-size STEP  -P's step (default 1)\n"
          "  -L, --parameter-list NAME V,V,...  as -P, the values listed (\\, for a comma);\n"
          "                       several -L: every combination\n"
          "  -N, --shell=none     split each CMD into words and run it directly (default)\n"
          "  -S, --shell SHELL    run each CMD (and --prepare, --setup, --cleanup) as\n"
          "                       SHELL -c CMD\n"
          "  -i, --ignore-failure keep going when a command exits non-zero\n"
          "      --show-output    let the commands write to the terminal (default: /dev/null)\n"
          "      --no-progress    no progress line (run i/N, mean, time left) on standard\n"
          "                       error; there is none either when it is not a terminal\n"
          "                       or with --show-output\n"
          "      --export-json F, --export-csv F, --export-markdown F\n"
          "                       write every run and the summaries to F (- for stdout)\n"
          "      --save-baseline NAME  write the results to D/NAME.json (libdkbench's format)\n"
          "      --baseline NAME  compare each command's medians with D/NAME.json by\n"
          "                       libdkbench's bootstrap test: the change, its interval,\n"
          "                       a p-value and a verdict\n"
          "      --results-dir D  where baselines live (default dkbench-results, as for\n"
          "                       dkbench programs)\n"
          "      --backend NAME   auto, kperf, selfcounts or perf_event\n"
          "\n"
          "Exit status: 0; 1 when a command failed (without -i), the counters could not be\n"
          "set up, or a file could not be written; 2 for a usage error; 127 or 126 when a\n"
          "command is not found or cannot run; 128+N when signal N stopped dkperf.\n",
          out);
}

void bench_free_words(char **words)
{
    if (words == NULL)
        return;
    for (char **w = words; *w != NULL; w++)
        free(*w);
    free(words);
}

char **bench_split_words(const char *s, const char **why)
{
    size_t len = strlen(s), n = 0;
    /* At most len / 2 + 1 words, each at most len bytes. */
    char **words = calloc(len / 2 + 2, sizeof *words);
    char *buf = malloc(len + 1);
    *why = "out of memory";
    if (words == NULL || buf == NULL)
        goto fail;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (*p == '\0')
            break;
        size_t k = 0;
        while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n') {
            if (*p == '\'') {
                const char *end = strchr(p + 1, '\'');
                if (end == NULL) {
                    *why = "an unterminated ' quote";
                    goto fail;
                }
                memcpy(buf + k, p + 1, (size_t)(end - p - 1));
                k += (size_t)(end - p - 1);
                p = end + 1;
            } else if (*p == '"') {
                for (p++; *p != '"'; p++) {
                    if (*p == '\0') {
                        *why = "an unterminated \" quote";
                        goto fail;
                    }
                    if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`", p[1]) != NULL)
                        p++;
                    buf[k++] = *p;
                }
                p++;
            } else if (*p == '\\' && p[1] != '\0') {
                buf[k++] = p[1];
                p += 2;
            } else {
                buf[k++] = *p++;
            }
        }
        buf[k] = '\0';
        if ((words[n] = strdup(buf)) == NULL)
            goto fail;
        n++;
    }
    if (n == 0) {
        *why = "no words";
        goto fail;
    }
    free(buf);
    *why = NULL;
    return words;
fail:
    free(buf);
    bench_free_words(words);
    return NULL;
}

/* The words a command runs as: split (-N), or SHELL -c CMD. */
char **bench_command_words(const bench_options *o, const char *what, const char *text)
{
    const char *why;
    if (o->shell == NULL) {
        char **w = bench_split_words(text, &why);
        if (w == NULL)
            cli_error("bench",
                      "%s '%s': %s (each command is one argument, split into "
                      "words as a shell would; -S sh runs it through a shell)",
                      what, text, why);
        return w;
    }
    char **w = calloc(4, sizeof *w);
    if (w == NULL || (w[0] = strdup(o->shell)) == NULL || (w[1] = strdup("-c")) == NULL ||
        (w[2] = strdup(text)) == NULL) {
        bench_free_words(w);
        cli_error("bench", "out of memory while preparing %s '%s'", what, text);
        return NULL;
    }
    return w;
}

void bench_name_command(bench_report *rep, size_t k)
{
    bench_command *c = &rep->cmd[k];
    bool again = false;
    for (size_t j = 0; j < k && !again; j++)
        again = strcmp(rep->cmd[j].text, c->text) == 0;
    size_t len = strlen(c->text);
    if (!again && len < sizeof c->name) {
        memcpy(c->name, c->text, len + 1);
        return;
    }
    size_t cut = len < sizeof c->name - 24 ? len : sizeof c->name - 24;
    while (cut > 0 && ((unsigned char)c->text[cut] & 0xc0) == 0x80)
        cut--; /* on a character */
    snprintf(c->name, sizeof c->name, "%.*s #%zu", (int)cut, c->text, k + 1);
}

static int count_arg(const char *opt, const char *v, long min, long *out)
{
    long x;
    if (!opt_number(v, &x) || x < min || x > BENCH_MAX_RUNS) {
        cli_error("bench", "%s %s: give a whole number from %ld to %d", opt, v, min,
                  BENCH_MAX_RUNS);
        return EXIT_USAGE;
    }
    *out = x;
    return 0;
}

static bool valid_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '.')
        return false;
    for (const char *p = name; *p != '\0'; p++)
        if (*p == '/')
            return false;
    return true;
}

int bench_parse_args(int argc, char **argv, bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->min_time = BENCH_DEFAULT_TIME;
    o->results_dir = BENCH_DEFAULT_DIR;
    bool time_given = false;
    /* As hyperfine: every argument that is not an option is a command, and
     * every one after --. */
    if ((o->commands = calloc((size_t)argc, sizeof *o->commands)) == NULL) {
        cli_error("bench", "out of memory");
        return EXIT_SETUP;
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = 0;
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                o->commands[o->ncommands++] = argv[i];
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            o->commands[o->ncommands++] = a;
            continue;
        }
        int prc = bench_params_option(argc, argv, &i, &o->params);
        if (prc >= 0) {
            rc = prc;
        } else if (opt_takes("bench", argc, argv, &i, "-e", "--events", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            rc = split_event_list("bench", v, &o->events, &o->nevents);
        } else if (opt_takes("bench", argc, argv, &i, "-r", "--runs", &v)) {
            rc = v == NULL ? EXIT_USAGE : count_arg("-r", v, 1, &o->runs);
        } else if (opt_takes("bench", argc, argv, &i, "-w", "--warmup", &v)) {
            rc = v == NULL ? EXIT_USAGE : count_arg("-w", v, 0, &o->warmup);
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--time", &v)) {
            char *end;
            if (v == NULL)
                return EXIT_USAGE;
            errno = 0;
            o->min_time = strtod(v, &end);
            if (errno != 0 || end == v || *end != '\0' || !isfinite(o->min_time) ||
                o->min_time <= 0 || o->min_time > 86400) {
                cli_error("bench", "--time %s: give a number of seconds above 0, up to 86400", v);
                return EXIT_USAGE;
            }
            time_given = true;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--prepare", &v)) {
            if ((o->prepare = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--setup", &v)) {
            if ((o->setup = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--cleanup", &v)) {
            if ((o->cleanup = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--export-json", &v)) {
            if ((o->export_json = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--export-csv", &v)) {
            if ((o->export_csv = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--export-markdown", &v)) {
            if ((o->export_markdown = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--save-baseline", &v)) {
            if ((o->save_baseline = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--baseline", &v)) {
            if ((o->baseline = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--results-dir", &v)) {
            if ((o->results_dir = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("bench", argc, argv, &i, NULL, "--backend", &v)) {
            if ((o->backend = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_is(a, "-N", "--shell=none")) {
            o->shell = NULL;
        } else if (opt_takes("bench", argc, argv, &i, "-S", "--shell", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            o->shell = strcmp(v, "none") == 0 ? NULL : v;
            if (o->shell != NULL && o->shell[0] == '\0') {
                cli_error("bench", "-S '': give a shell (sh, bash, ...) or none");
                return EXIT_USAGE;
            }
        } else if (opt_is(a, "-i", "--ignore-failure")) {
            o->ignore_failure = true;
        } else if (opt_is(a, NULL, "--show-output")) {
            o->show_output = true;
        } else if (opt_is(a, NULL, "--no-progress")) {
            o->no_progress = true;
        } else if (opt_is(a, "-h", "--help")) {
            help_bench(stdout);
            return -1;
        } else {
            cli_error("bench", "unknown option %s (see dkperf help bench)", a);
            return EXIT_USAGE;
        }
        if (rc != 0)
            return rc;
    }
    if (o->ncommands == 0) {
        cli_error("bench", "no command (usage: dkperf bench [options] [--] CMD [CMD...], each "
                           "CMD one argument)");
        return EXIT_USAGE;
    }
    if (o->runs > 0 && time_given) {
        cli_error("bench", "-r and --time cannot be used together (-r gives the runs exactly)");
        return EXIT_USAGE;
    }
    if (o->save_baseline != NULL && o->baseline != NULL) {
        cli_error("bench", "--save-baseline and --baseline cannot be used together");
        return EXIT_USAGE;
    }
    const char *names[2] = {o->save_baseline, o->baseline};
    for (int k = 0; k < 2; k++)
        if (names[k] != NULL && !valid_name(names[k])) {
            cli_error("bench",
                      "%s '%s': a baseline name is a file name: not empty, no '/', "
                      "not starting with '.'",
                      k == 0 ? "--save-baseline" : "--baseline", names[k]);
            return EXIT_USAGE;
        }
    if (o->backend != NULL && cli_backend_kind(o->backend) < 0) {
        cli_error("bench", "--backend %s: not a backend (auto, kperf, selfcounts, perf_event)",
                  o->backend);
        return EXIT_USAGE;
    }
    return bench_params_expand(&o->params, o->commands, o->ncommands, o->setup, o->cleanup,
                               o->prepare, &o->cases);
}

void bench_options_free(bench_options *o)
{
    if (o == NULL)
        return;
    free_event_list(o->events, o->nevents);
    free(o->commands);
    bench_params_free(&o->params);
    bench_cases_free(&o->cases);
    memset(o, 0, sizeof *o);
}
