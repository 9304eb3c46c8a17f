/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.h - dkperf report's model of a recording: every sample's stack
 * turned into frames (function and image, symbolized once per distinct
 * address and process), its stacks stored once as a tree of nodes that the
 * samples name, and the outputs written from it (report_out.c,
 * report_stacks.c). Its size grows with the recording's, not with its
 * samples times their depths.
 */
#ifndef DKPERF_REPORT_H
#define DKPERF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dkrec.h"
#include "kallsyms.h"

typedef struct rframe {
    char *name; /* function, "[image]" (no symbol), "[unknown]" or "[kernel]" */
    char *dso;  /* image file name (no directory), "[unknown]", or RFRAME_KERNEL_DSO */
} rframe;

/* The image of the frames of a kernel call chain, as perf names it; they
 * are marked [k] in every output ("[k] name" in the table, "name_[k]" in
 * stacks, as FlameGraph's stackcollapse-perf.pl --kernel). */
#define RFRAME_KERNEL_DSO "[kernel.kallsyms]"
#define RFRAME_KERNEL_MARK "_[k]"

/* The outermost frame of every off-CPU sample's stack (dkperf record
 * --off-cpu): its children are the time threads spent blocked, and the
 * flame graph colours what is under it as off-CPU. */
#define RFRAME_OFF_CPU "[off-cpu]"

static inline bool rframe_off_cpu(const rframe *f) { return strcmp(f->dso, RFRAME_OFF_CPU) == 0; }

static inline bool rframe_kernel(const rframe *f) { return strcmp(f->dso, RFRAME_KERNEL_DSO) == 0; }

/* A stack, stored once: node 0 is the empty stack (the root); every other
 * node is its parent's stack with one more frame, inner to it. A node's
 * parent has a smaller id. */
typedef struct rnode {
    uint32_t parent;
    uint32_t frame; /* unused for node 0 */
    uint32_t depth; /* frames from the root: 0 for node 0 */
} rnode;

typedef struct rsample {
    uint32_t event;
    int32_t pid;
    uint64_t weight; /* the period, 1 when none was recorded */
    uint32_t comm;   /* index into comms */
    uint32_t stack;  /* its innermost frame's node: never 0 */
    bool off_cpu;    /* weight is ns off CPU; the stack starts at RFRAME_OFF_CPU */
} rsample;

typedef struct rprofile {
    const dkrec *rec;
    const char *path;
    rframe *frames;
    size_t n_frames;
    char **comms;
    size_t n_comms;
    rnode *nodes; /* the stacks, shared by the samples that have them */
    size_t n_nodes;
    uint32_t max_depth;
    rsample *samples;
    size_t n_samples;
    /* Some samples are off-CPU: folded stacks and the flame graph then
     * add up weights (ns off CPU, the period on CPU), not samples. */
    bool has_off_cpu;
    /* Images that gave no names, with why: one line each in the notes. */
    char **notes;
    size_t n_notes;
    /* Set when an address stayed image+offset for want of a reader this
     * build lacks (sym_image_missing_reader): report says it on stderr. */
    const char *missing_reader;
    /* Why kernel call chains stay one [kernel] frame, "" when they do not
     * (report says it on stderr). */
    char kernel_note[768];
    /* Set when a C++ or Rust name stayed mangled for want of a demangler
     * (demangle_missing): report says it on stderr. */
    const char *missing_demangler;
} rprofile;

/* A map from a pair of numbers to a number (open addressing). */
typedef struct rmap {
    uint64_t *ka, *kb;
    uint32_t *val1; /* value + 1; 0: empty */
    size_t cap, n;
} rmap;

/* The value of (a, b), or -1. */
/* The hash of two keys (report_rmap.c), for the model's other tables. */
uint64_t rmap_mix(uint64_t a, uint64_t b);
int64_t rmap_get(const rmap *m, uint64_t a, uint64_t b);
/* Sets (a, b) to v; -1 when out of memory. */
int rmap_put(rmap *m, uint64_t a, uint64_t b, uint32_t v);
void rmap_free(rmap *m);

/* How the model is built; all false is the default. */
typedef struct rprofile_opts {
    bool no_demangle;  /* C++ and Rust names as the images have them */
    bool on_cpu_only;  /* leave out the off-CPU samples */
    bool off_cpu_only; /* keep only the off-CPU samples */
} rprofile_opts;

/* Builds the model; -1 after an error line (out of memory). */
int rprofile_build(rprofile *p, const dkrec *rec, const char *path);
/* The same with options (NULL: the defaults). */
int rprofile_build_opts(rprofile *p, const dkrec *rec, const char *path, const rprofile_opts *o);
void rprofile_free(rprofile *p);

typedef enum { SORT_SYM, SORT_DSO, SORT_COMM, SORT_PID } report_sort;

/* The outputs; each returns 0, or -1 after an error line. event: the
 * event index to draw (folded, HTML), or -1 for every event. */
int report_stdio(FILE *out, const rprofile *p, report_sort sort, bool by_children);
int report_folded(FILE *out, const rprofile *p, int event);
int report_speedscope(FILE *out, const rprofile *p);
int report_html(FILE *out, const rprofile *p, int event);
/* Every event, gzipped profile.proto (report_pprof.c). */
int report_pprof(FILE *out, const rprofile *p);
/* The flame graph of p coloured by each frame's change of share from old's
 * (red grew, blue shrank); old NULL: report_html's. */
int report_html_diff(FILE *out, const rprofile *p, const rprofile *old, int event);
/* The tables' image column (report_out.c): as wide as its longest name
 * ([kernel.kallsyms] fits) from REPORT_DSO_COLUMN to REPORT_DSO_COLUMN_MAX
 * columns. report_dso_width gives width widened for name;
 * report_put_column writes s escaped in width columns: padded, or cut
 * with "..." so that the columns after it stay in place. */
#define REPORT_DSO_COLUMN 16
#define REPORT_DSO_COLUMN_MAX 24
size_t report_dso_width(size_t width, const char *name);
void report_put_column(FILE *out, const char *s, size_t width);
/* Each frame's self and children (total) weight of event e, as the table
 * counts them, into arrays of p->n_frames; -1 when out of memory. */
int report_frame_totals(const rprofile *p, uint32_t e, uint64_t *self, uint64_t *children);

/* dkperf diff (diff.c). */
int cmd_diff(int argc, char **argv);
void help_diff(FILE *out);

/* report_kernel.c: the kernel's symbols (DKPERF_KALLSYMS, else
 * /proc/kallsyms) in *out, or NULL with note set to why they cannot name
 * frames; -1 when out of memory. */
int report_kernel_symbols(kallsyms **out, char *note, size_t size);
/* The name of kernel address addr (a return address unless leaf): its
 * symbol, or "0x..." written in buf. */
const char *report_kernel_name(const kallsyms *k, uint64_t addr, bool leaf, char *buf, size_t size);

int cmd_report(int argc, char **argv);
void help_report(FILE *out);

#endif /* DKPERF_REPORT_H */
