/*
 * report.h - dkperf report's model of a recording: every sample's stack
 * turned into frames (function and image, symbolized once per distinct
 * address and process), and the outputs written from it (report_out.c).
 */
#ifndef DKPERF_REPORT_H
#define DKPERF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dkrec.h"

typedef struct rframe {
    char *name; /* function, "[image+0xoff]", "[unknown]" or "[kernel]" */
    char *dso;  /* image file name (no directory), or "[unknown]" */
} rframe;

typedef struct rsample {
    uint32_t event;
    int32_t pid;
    uint64_t weight; /* the period, 1 when none was recorded */
    uint32_t comm;   /* index into comms */
    size_t first;    /* this sample's frames: stack[first .. first+depth), root first */
    uint32_t depth;
} rsample;

typedef struct rprofile {
    const dkrec *rec;
    const char *path;
    rframe *frames;
    size_t n_frames;
    char **comms;
    size_t n_comms;
    uint32_t *stack;
    size_t n_stack;
    rsample *samples;
    size_t n_samples;
    /* Images that gave no names, with why: one line each in the notes. */
    char **notes;
    size_t n_notes;
} rprofile;

/* Builds the model; -1 after an error line (out of memory). */
int rprofile_build(rprofile *p, const dkrec *rec, const char *path);
void rprofile_free(rprofile *p);

typedef enum { SORT_SYM, SORT_DSO, SORT_COMM, SORT_PID } report_sort;

/* The outputs; each returns 0, or -1 after an error line. event: the
 * event index to draw (folded, HTML), or -1 for every event. */
int report_stdio(FILE *out, const rprofile *p, report_sort sort, bool by_children);
int report_folded(FILE *out, const rprofile *p, int event);
int report_speedscope(FILE *out, const rprofile *p);
int report_html(FILE *out, const rprofile *p, int event);

int cmd_report(int argc, char **argv);
void help_report(FILE *out);

#endif /* DKPERF_REPORT_H */
