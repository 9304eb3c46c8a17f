/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.h - dkperf report's model of a recording: every sample's stack
 * turned into frames (function and image, symbolized once per distinct
 * address and process), its stacks stored once as a tree of nodes, the
 * samples counted once per distinct (event, pid, comm, stack, flags) as
 * the recording streams past, and the outputs written from it
 * (report_out.c, report_stacks.c, report_pprof.c). Its size grows with the
 * distinct stacks, symbols and images, not with the samples.
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

/* The event of the off-CPU samples of a recording of a count event
 * (page-faults, cycles: its samples are no time), named as perf names
 * it: their ns are reported apart, not added to the event's counts. */
#define REPORT_OFF_CPU_EVENT "offcpu-time"

/* Whether event name samples time, its periods ns (cpu-clock, task-clock,
 * kperf's timer, with or without modifiers; offcpu-time): off-CPU ns then
 * add up with them. */
static inline bool report_time_event(const char *name)
{
    size_t len = strcspn(name, ":");
    return (len == 9 && strncmp(name, "cpu-clock", 9) == 0) ||
           (len == 10 && strncmp(name, "task-clock", 10) == 0) ||
           (len == 5 && strncmp(name, "timer", 5) == 0) || strcmp(name, REPORT_OFF_CPU_EVENT) == 0;
}

static inline bool rframe_off_cpu(const rframe *f) { return strcmp(f->dso, RFRAME_OFF_CPU) == 0; }

static inline bool rframe_kernel(const rframe *f) { return strcmp(f->dso, RFRAME_KERNEL_DSO) == 0; }

/* The frames of a call chain (the user one, the kernel one) the model
 * keeps: a deeper chain keeps its innermost ones, as perf report does
 * past its --max-stack, so that every output is bounded by the input
 * times a constant (a chain of N frames with a sample at each depth
 * would print O(N^2) frames). */
#define REPORT_MAX_STACK 1024u

/* A stack, stored once: node 0 is the empty stack (the root); every other
 * node is its parent's stack with one more frame, inner to it. A node's
 * parent has a smaller id. */
typedef struct rnode {
    uint32_t parent;
    uint32_t frame; /* unused for node 0 */
    uint32_t depth; /* frames from the root: 0 for node 0 */
} rnode;

/* The samples of one (event, pid, comm, stack, flags): an entry of the
 * model, however many samples it stands for. */
typedef struct rsample {
    uint32_t event;
    int32_t pid;
    uint32_t comm;   /* index into comms */
    uint32_t stack;  /* its innermost frame's node: never 0 */
    unsigned flags;  /* DKREC_SAMPLE_* of its samples (DKREC_SAMPLE_OFF_CPU: weight
                      * is ns off CPU, the stack starts at RFRAME_OFF_CPU) */
    uint64_t count;  /* its samples */
    uint64_t weight; /* the sum of their periods (1 for a sample without one) */
} rsample;

static inline bool rsample_off_cpu(const rsample *s)
{
    return (s->flags & DKREC_SAMPLE_OFF_CPU) != 0;
}

struct rbuilder;

typedef struct rprofile {
    const dkrec *rec; /* the first recording: its meta */
    /* The events: the first recording's, then REPORT_OFF_CPU_EVENT when
     * the recording is of off-CPU time and of a count event (its
     * off-CPU samples then have that event). */
    dkrec_event *events;
    size_t n_events;
    const char *path;   /* its name, or the recordings' joined, or "N recordings" */
    const dkrec **recs; /* every recording fed, and their names */
    const char **paths;
    size_t n_recs;
    uint64_t lost, throttled; /* the recordings' totals */
    const dkrec *incomplete;  /* the first recording cut short, or NULL */
    rframe *frames;
    size_t n_frames;
    char **comms;
    size_t n_comms;
    rnode *nodes; /* the stacks, shared by the samples that have them */
    size_t n_nodes;
    uint32_t max_depth;
    rsample *entries; /* the samples, one entry per distinct key */
    size_t n_entries;
    uint64_t n_samples;        /* the samples in all: the sum of the entries' counts */
    uint64_t time_lo, time_hi; /* the first and last sample's times (0, 0: none) */
    /* The recording is of off-CPU time too (record --off-cpu: its meta
     * key "off-cpu"; or it holds off-CPU samples), whatever the filter
     * keeps: folded stacks and the flame graph then add up weights (ns
     * off CPU, the period on CPU), not samples. */
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
    /* The samples whose call chain was cut to REPORT_MAX_STACK frames
     * (report says how many on stderr). */
    uint64_t n_cut;
    char *path_buf;         /* path, when it is made of several */
    struct rbuilder *build; /* while it is built */
} rprofile;

/* An open-addressing index of items kept in an array of the caller's:
 * slots of an item's index + 1, at most half full, probed linearly from
 * the item's hash (report_rmap.c). The one table of rmap, the counted
 * samples (report_raw.c) and pprof's strings. A lookup walks the probe:
 *   for (size_t j = rslots_first(x, h); x->slot1[j] != 0; j = rslots_next(x, j))
 * (with x->nslots > 0), and an item added takes the empty slot it ends at. */
typedef struct rslots {
    uint32_t *slot1; /* item index + 1; 0: empty */
    size_t nslots;
} rslots;

/* Room for one more item beside n: the slots grown (each of the n items
 * rehashed by hash(ctx, i)) when they would be half full; -1 when out of
 * memory. */
int rslots_room(rslots *x, size_t n, uint64_t (*hash)(const void *ctx, size_t i), const void *ctx);
/* The slot of hash h among nslots (a power of two, 1024 or more): the
 * high bits of h keyed and multiplied by a secret drawn once a run
 * (rslots_room), so that no recording can choose keys whose hashes share
 * their low bits and make every probe walk them all. */
extern uint64_t rslots_key, rslots_mul;
static inline size_t rslots_slot(uint64_t h, size_t nslots)
{
    return (size_t)(((h ^ rslots_key) * rslots_mul) >> (64 - __builtin_ctzll((uint64_t)nslots)));
}
static inline size_t rslots_first(const rslots *x, uint64_t h) { return rslots_slot(h, x->nslots); }
static inline size_t rslots_next(const rslots *x, size_t j) { return (j + 1) & (x->nslots - 1); }
void rslots_free(rslots *x);
/* Draws rslots_slot's secret; rslots_room does, before the first slots. */
void rslots_seed(void);

/* A map from a pair of numbers to a number. */
typedef struct rmap_item {
    uint64_t a, b;
    uint32_t v;
} rmap_item;

typedef struct rmap {
    rmap_item *items; /* in the order put */
    size_t n, cap;
    rslots idx;
} rmap;

/* The hash of two keys (report_rmap.c), for the model's other tables. */
uint64_t rmap_mix(uint64_t a, uint64_t b);
/* The value of (a, b), or -1. */
int64_t rmap_get(const rmap *m, uint64_t a, uint64_t b);
/* Sets (a, b) to v; -1 when out of memory. */
int rmap_put(rmap *m, uint64_t a, uint64_t b, uint32_t v);
void rmap_free(rmap *m);
/* FNV-1a of string s, on from h keyed by the run's secret (rslots_seed). */
uint64_t rmap_hash_str(uint64_t h, const char *s);

/* The key of a pid with maps of its own (report_maps.c): processes whose
 * lists of maps are the same (a program run many times at the same
 * addresses) share one, since every address of theirs is symbolized the
 * same way. */
typedef struct rpidkey {
    int32_t pid;
    uint32_t first, n; /* its maps: order[first .. first + n), in the order recorded */
    uint64_t key;
    /* Its maps' tree (report_maps.c): leaves between coords[coord ..
     * coord + n_coords), size leaves, nodes' maps from off[off ..]. */
    uint32_t coord, n_coords, size, off;
    /* The places of its maps that replace part of an earlier one (an exec
     * of another image at the same address, an mmap over a range):
     * repl[repl .. repl + n_repl). Each starts a generation. */
    uint32_t repl, n_repl;
    /* Its exec records (comm indices, in file order), execs[exec ..
     * exec + n_exec), and its generations, gens[gen .. gen + n_repl +
     * n_exec]: the replacing maps and the execs in file order, each
     * starting one. */
    uint32_t exec, n_exec, gen;
} rpidkey;

/* The maps in force in a generation of a process: the places [lo, hi)
 * hold a sample's image (the latest that holds its address), else the
 * first of [hi, ceil) that does; after an exec (execd), none but those
 * (an exec ends every earlier map, as perf flushes a thread's maps). */
typedef struct rgen {
    uint32_t lo, hi, ceil;
    bool execd;
} rgen;

/* An address range [lo, hi) and the map that holds it: of the maps that
 * cover it, the one recorded last. The ranges are sorted and disjoint, so
 * the map of an address is a binary search away. */
typedef struct rseg {
    uint64_t lo, hi;
    uint32_t map;
} rseg;

/* The maps of a recording, per process and in time: a sample resolves
 * against the maps of its generation, those in force when it was taken
 * (as perf replays maps with the samples), so that the samples of an
 * image a process replaced later keep its names. */
typedef struct rmaps {
    const dkrec *rec;
    rpidkey *keys; /* the pids that have maps of their own, by pid */
    size_t n_keys;
    uint32_t *order;  /* the maps by pid, then in the order recorded */
    uint32_t *gen_at; /* each of order's generation: its pid's maps before it that replace */
    uint32_t *repl;   /* each key's replacing places */
    size_t n_repl;
    uint64_t *coords; /* each key's ends of maps, sorted */
    size_t n_coords, cap_coords;
    uint32_t *off, *items; /* each key's tree: a node's maps are items[off[v] .. off[v + 1]) */
    size_t n_off, cap_off, n_items, cap_items;
    uint32_t *execs; /* the exec records of the pids with maps, by pid, then in file order */
    size_t n_execs;
    rgen *gens; /* each key's generations */
    size_t n_gens;
    rseg *segs; /* the ranges of every pid's maps */
    size_t n_segs;
    uint32_t all_seg, n_all_segs;
} rmaps;

/* m made from r's maps; -1 when out of memory (m then for rmaps_free).
 * O(n log^2 n) for n maps, whatever their overlaps. */
int rmaps_make(rmaps *m, const dkrec *r);
/* The key of pid: its maps', when it has maps of its own (NULL: it has
 * none, and takes other processes' maps, as every such process does). */
const rpidkey *rmaps_key(const rmaps *m, int32_t pid);
/* The generation of key k's maps of a sample after map record map_rec - 1
 * and exec record (comm) exec_rec - 1 of its pid, the latest of each
 * before it (0: none). */
uint32_t rmaps_gen(const rmaps *m, const rpidkey *k, uint32_t map_rec, uint32_t exec_rec);
/* The map of the process of key k (NULL: one with no maps of its own)
 * holding addr in generation gen: the latest in force, else the first
 * recorded after; a process whose maps were not recorded (a child forked
 * by a recorded one) takes another's, the latest. */
const dkrec_map *rmaps_find(const rmaps *m, const rpidkey *k, uint32_t gen, uint64_t addr);
void rmaps_free(rmaps *m);

/* How the model is built; all false is the default. */
typedef struct rprofile_opts {
    bool no_demangle;  /* C++ and Rust names as the images have them */
    bool on_cpu_only;  /* leave out the off-CPU samples */
    bool off_cpu_only; /* keep only the off-CPU samples */
} rprofile_opts;

/* The samples of a recording as they are read (report_raw.c): one entry
 * per distinct (event, pid, comm record, map record, recording stack,
 * kernel stack, flags), counted, before the stacks are symbolized. */
typedef struct rraw {
    uint32_t event;
    int32_t pid;
    uint32_t comm_rec; /* the pid's latest comm record before it + 1; 0: none yet */
    uint32_t map_rec;  /* the pid's latest map record before it + 1; 0: none yet */
    uint32_t exec_rec; /* the pid's latest exec (a comm record) before it + 1; 0: none */
    uint32_t node, knode;
    unsigned flags;
    uint64_t count, weight;
} rraw;

typedef struct rraws {
    rraw *v;
    size_t n, cap;
    uint64_t n_samples;             /* the samples counted (those the filter keeps) */
    uint64_t time_lo, time_hi;      /* the earliest and latest of all read */
    uint64_t n_read;                /* the samples read, kept or not */
    uint64_t n_off_cpu;             /* the off-CPU samples read, kept or not */
    bool on_cpu_only, off_cpu_only; /* rprofile_opts' filters, applied as they stream */
    rslots idx;                     /* the entries by key hash */
    size_t last;                    /* the entry of the sample before */
    /* (pid, 0) -> its latest comm record, (pid, 1) its latest map record,
     * (pid, 2) its latest exec */
    rmap pid_comm;
    size_t comms_seen; /* comm records taken into pid_comm */
    size_t maps_seen;  /* map records taken into pid_comm */
    int32_t last_pid;  /* and the comm, map and exec records + 1 of the sample before's pid */
    uint32_t last_comm, last_map, last_exec;
    bool last_valid;
    const char *path;
} rraws;

/* Counts sample s of r into ctx, an rraws (a dkrec_sample_fn); -2 after
 * an error line (out of memory). */
int rraws_add(void *ctx, const dkrec *r, const dkrec_rsample *s);
/* The entries of the samples r holds, those o keeps (NULL: all); -1
 * after an error line. */
int rraws_of(rraws *a, const dkrec *r, const char *path, const rprofile_opts *o);
/* Reads path in one pass into *rec (its tables, no samples) and a (its
 * samples that o keeps, counted; NULL: all); -1 with err set to one line
 * (the reader's), -2 after an error line. */
int rprofile_read(const char *path, const rprofile_opts *o, dkrec **rec, rraws *a, char *err,
                  size_t errlen);
void rraws_free(rraws *a);

/* Builds the model; -1 after an error line (out of memory). */
int rprofile_build(rprofile *p, const dkrec *rec, const char *path);
/* The same with options (NULL: the defaults). */
int rprofile_build_opts(rprofile *p, const dkrec *rec, const char *path, const rprofile_opts *o);
/* The same from the samples as counted (rec: the tables they name; o's
 * filters are a's, applied as they were counted). */
int rprofile_build_raws(rprofile *p, const dkrec *rec, const rraws *a, const char *path,
                        const rprofile_opts *o);
/* A model of several recordings (report -i A -i B ...): rprofile_start,
 * then rprofile_feed once per recording (its tables, which must outlive
 * p, and its samples as counted; o's filters applied as they were), then
 * rprofile_finish. Each recording is symbolized against its own maps,
 * comm records and stack nodes; frames, stacks and entries merge across
 * them, events by name (a recording whose events differ from the
 * first's is refused). Each returns -1 after an error line, p then
 * freed. */
/* report_raw.c: each of rec's events' index in first's (to[e]), matched
 * by name, two of one name (cpu-clock at two rates) in their order; -1
 * after an error line naming both files when the lists differ, -2 when
 * out of memory. O(n log n). */
int report_match_events(const dkrec *first, const char *first_path, const dkrec *rec,
                        const char *path, uint32_t *to);
int rprofile_start(rprofile *p, const rprofile_opts *o);
int rprofile_feed(rprofile *p, const dkrec *rec, const rraws *a, const char *path);
void rprofile_finish(rprofile *p);
void rprofile_free(rprofile *p);

/* What entry s adds to folded stacks and the flame graph: its samples, or
 * their weight (ns) when p is of off-CPU time (see has_off_cpu) and s's
 * event samples time: off-CPU ns are never added to counts. */
static inline uint64_t report_entry_value(const rprofile *p, const rsample *s)
{
    return p->has_off_cpu && s->event < p->n_events && report_time_event(p->events[s->event].name)
               ? s->weight
               : s->count;
}

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
