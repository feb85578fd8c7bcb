/*
 * explain_internal.h - what `oomlint explain` makes of the facts its
 * readers found (explain.h): one report, built in four steps by the files
 * that share this header.
 *
 *   explain.c           the command line, reading the inputs, the exit status
 *   explain_link.c      the traceback's frames found on disk, linted with the
 *                       files of their run, the findings ranked by their place
 *                       relative to the failing stack, crossed with the snapshot
 *   explain_diagnose.c  verdicts from the message's figures, the stack and the
 *                       log's steps, each with the figures it stands on
 *   explain_emit.c      text (through the linter's text emitter), JSON, SARIF
 *
 * The report owns everything it points to; ol_explain_free releases it.
 */
#ifndef OL_EXPLAIN_INTERNAL_H
#define OL_EXPLAIN_INTERNAL_H

#include <stdio.h>

#include "emit.h"
#include "explain.h"
#include "lint.h"

/* How a finding relates to the failing stack, best first. */
typedef enum ol_relation {
    OL_REL_LINE,      /* on a line of the stack */
    OL_REL_FUNCTION,  /* in a function on the stack */
    OL_REL_LOOP,      /* in a loop around a line of the stack, outside any function on it */
    OL_REL_FILE,      /* elsewhere in a file on the stack */
    OL_REL_RUN,       /* in another file of the run */
} ol_relation;

const char *ol_relation_name(ol_relation r);

/* A named figure a verdict stands on (bytes unless the name says otherwise). */
typedef struct ol_figure {
    const char *name;
    int64_t value;
} ol_figure;

#define OL_VERDICT_FIGURES 8

typedef struct ol_verdict {
    const char *kind;    /* stable name: "other-process", "fragmentation", ... */
    char *message;       /* what happened, with its figures */
    char *advice;        /* what to do, or NULL */
    ol_figure figures[OL_VERDICT_FIGURES];
    size_t nfigures;
} ol_verdict;

typedef OL_VEC(ol_verdict) ol_verdicts;

/* A span of lines (1-based, inclusive) holding a def or a loop. */
typedef struct ol_line_span {
    uint32_t first, last;
    const char *name;    /* a def's name (owned by the file), or NULL for a loop */
} ol_line_span;

typedef OL_VEC(ol_line_span) ol_line_spans;

typedef struct ol_ex_file {
    char *path;           /* on disk, as linted */
    bool on_stack;        /* a frame of an error is in it */
    ol_file_result result;
    ol_line_spans defs;
    ol_line_spans loops;
    ol_arena names;
} ol_ex_file;

/* A traceback frame, resolved. */
typedef struct ol_ex_frame {
    const ol_oom_frame *frame;
    bool user;            /* the user's code (ol_oom_user_file) */
    size_t file;          /* index in the report's files, or SIZE_MAX (not on disk, or not the user's) */
} ol_ex_frame;

typedef struct ol_ex_error {
    ol_oom_event *event;
    OL_VEC(ol_ex_frame) frames;  /* parallel to event->frames */
    size_t innermost;            /* the innermost user frame, or SIZE_MAX */
    const char *phase;           /* "backward", "forward", "optimizer step", "evaluation", ... or NULL */
    size_t phase_frame;          /* the user frame the phase was read at, or SIZE_MAX */
    ol_verdicts verdicts;
} ol_ex_error;

typedef struct ol_ex_finding {
    size_t file;          /* index in the report's files */
    size_t diag;          /* index in its result's findings */
    ol_relation relation;
    uint32_t frame_line;  /* the stack's line it relates to, or 0 */
    size_t frame_depth;   /* frames between it and the failure (0: the innermost user frame) */
    bool in_frame_loop;   /* inside the loop around the stack's line */
    int64_t alive_bytes;  /* from the snapshot: allocated there or under its loop, or OL_BYTES_UNKNOWN */
    uint32_t alive_line;  /* the line most of it was allocated from */
    size_t alive_file;    /* that line's file (index), or SIZE_MAX */
    /* the finding's own order, for ranking within a relation */
    int severity;
    uint32_t start;
    const char *code;
} ol_ex_finding;

/* A snapshot line, with where it is on disk. */
typedef struct ol_ex_snapline {
    const ol_snap_line *line;
    size_t file;          /* index in the report's files, or SIZE_MAX */
} ol_ex_snapline;

typedef struct ol_explain_opts {
    const char *log_path;       /* NULL: no log; "-": standard input */
    const char *snapshot_path;  /* or NULL */
    OL_VEC(const char *) roots; /* where to look for the traceback's files (default: .) */
    ol_format format;           /* text, json or sarif */
    bool color;
    bool quiet;
    ol_severity fail_on;
    bool exit_zero;
    const char *output_file;
    const char *config_path;
    bool isolated;
    int threads;
} ol_explain_opts;

typedef struct ol_explain {
    const ol_explain_opts *opts;
    ol_oom_log log;
    bool have_log;
    ol_oom_event snapshot_event;  /* made from the snapshot's OOM entry when the log has none */
    bool have_snapshot_event;
    char *snapshot_bytes;
    size_t snapshot_len;
    ol_pickle pickle;
    ol_mem_snapshot snap;
    bool have_snapshot;
    OL_VEC(ol_ex_error) errors;
    size_t primary;               /* the error explained first */
    OL_VEC(ol_ex_file) files;     /* on-stack files first */
    OL_VEC(char *) missing;       /* user frames' files not found on disk, as written */
    OL_VEC(ol_ex_finding) findings; /* ranked */
    OL_VEC(ol_ex_snapline) snaplines;
    ol_verdicts snapshot_verdicts;
    OL_VEC(char *) notes;         /* what the reader should know (frames not found, bounds reached) */
    bool lint_failed;
} ol_explain;

void ol_explain_free(ol_explain *x);

/* explain_link.c: resolves frames, lints, ranks, crosses with the snapshot. */
void ol_explain_link(ol_explain *x);
/* The file on disk a traceback's path names: as written, else its trailing
 * components under one of the roots (the longest match); NULL if none. */
char *ol_explain_find_file(const char *path, const char *const *roots, size_t nroots);
/* The text of 1-based line `line` of a report file, trimmed, or NULL. */
const char *ol_explain_source_line(const ol_explain *x, size_t file, uint32_t line, uint32_t *len);
/* The innermost def or loop around a line, or NULL. */
const ol_line_span *ol_explain_enclosing(const ol_line_spans *spans, uint32_t line);

/* explain_diagnose.c */
void ol_explain_diagnose(ol_explain *x);
void ol_verdict_free(ol_verdict *v);

/* explain_emit.c: the report in opts->format; false when it could not be written. */
void ol_explain_emit(const ol_explain *x, FILE *out);
/* The findings that fail the run (at or above --fail-on, in a file on the stack). */
size_t ol_explain_failing(const ol_explain *x);

#endif
