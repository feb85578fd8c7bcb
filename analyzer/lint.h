/*
 * lint.h - the per-file pipeline and the thread pool that runs it.
 *
 * read -> decode (source.c, notebook.c) -> parse (syntax.c) -> model
 * (model.c) -> every enabled rule -> filter (suppressions, duplicates) ->
 * sort. Files are independent, so a run lints them on a pool of threads,
 * each with its own parser; results land in a slot per input and are emitted
 * in input order afterwards, so output does not depend on scheduling.
 */
#ifndef OL_LINT_H
#define OL_LINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "fix.h"
#include "source.h"
#include "syntax.h"

typedef struct ol_input {
    char *path;          /* display path */
    bool from_stdin;     /* read standard input; path is --stdin-filename or "-" */
    int error;           /* errno from discovery (missing, unreadable), or 0 */
    const struct ol_settings *settings; /* per-file settings (config), or NULL for the run's */
} ol_input;

typedef struct ol_settings {
    bool *enabled;       /* per registry index */
    /* rules that run but whose findings are only counted (ol_file_result's
     * hidden), not reported: those the default per-file-ignores switch off
     * for test code (config.h); NULL when there are none */
    bool *hidden;
    bool *exact;         /* per registry index: selected by its exact code, so its
                            findings in code that runs once are kept; may be NULL */
    bool ran_on_gpu;     /* the code is known to run on a GPU (config.h's ran_on_gpu) */
    bool test_defaults;  /* the default per-file-ignores of test code are in force (no
                            per-file-ignores configured, test code not asked for): test
                            functions outside test files are left out the same way */
} ol_settings;

/* Where the time goes, for --timings and the benchmark: nanoseconds of
 * thread time per phase, summed over worker threads. */
typedef struct ol_timings {
    uint64_t read_ns, parse_ns, model_ns, rules_ns, filter_ns, fix_ns;
    uint64_t summarize_ns; /* each file's own summary, what other files' questions read (summary.h) */
    uint64_t words_ns;   /* reading other files' words for the rules' questions (project.h) */
    uint64_t rebuild_ns; /* of model_ns: the models built again at the turn of files summarized ahead */
    uint64_t *rule_ns;   /* per registry index */
    uint64_t bytes;      /* source bytes analyzed */
    size_t files;
    /* files a question about another file's code brought forward: linted
     * inside that file's turn, or (past the nesting bound, or while another
     * thread lints them) only summarized, their model built again later */
    size_t linted_ahead, summarized_ahead;
    size_t summary_bytes;     /* the most bytes of summaries the project held at once */
    size_t summary_evictions; /* summaries dropped for the budget, and built again */
    size_t summary_rebuilds;
    uint64_t report_waited;   /* bytes of the report made ahead of their turn, most held in memory */
    uint64_t report_on_disk;  /* and those that waited in a temporary file (ol_writer_hold) */
} ol_timings;

void ol_timings_init(ol_timings *t);
void ol_timings_add(ol_timings *into, const ol_timings *from);
void ol_timings_free(ol_timings *t);

struct ol_guard;

/* What a run does besides reporting (see fix.h). */
typedef struct ol_run_options {
    int fix_mode;        /* ol_fix_mode */
    bool unsafe_fixes;
    ol_timings *timings; /* collect phase timings here, or NULL */
    /* the supervisor's view of this run (supervise.h): which file each
     * thread is on, files to set aside; NULL in process (library, server) */
    const struct ol_guard *guard;
    /* what the report needs of each file, made when it is linted so that its
     * source can be freed (emit.h); NULL keeps the source */
    const struct ol_renderer *render;
    /* where each file's part goes as soon as the files before it are done
     * (emit.h); NULL: the caller writes the report at the end */
    struct ol_report_writer *stream;
    bool add_noqa;       /* --add-noqa: suppress every finding in place (fix.h) */
} ol_run_options;

typedef struct ol_file_result {
    char *path;
    ol_source src;       /* decoded text, kept while findings refer to it */
    bool has_source;
    bool read_ok;        /* read and decoded: the file was analyzed */
    bool from_stdin;
    ol_diag_vec diags;
    size_t fixed;        /* findings fixed (--fix / --diff) */
    char *fix_diff;      /* --diff output */
    char *fix_error;     /* why fixing failed */
    bool fix_failed;     /* fix_error is a failure (not written, changed on disk): exit 2 */
    struct ol_file_snapshot *snapshot; /* --fix: the file as read, to detect changes (owned) */
    char *fix_output;    /* --fix on stdin: the fixed text */
    size_t fix_output_len;
    OL_VEC(char *) warnings; /* "path:line: ..." problems with the file's suppression comments */
    char *rendered;      /* its part of the report, made when it was linted (source then freed) */
    size_t rendered_len;
    bool written;        /* its part was streamed out (and rendered freed) */
    bool held;           /* rendered waits in memory for the files before it (ol_writer_hold) */
    bool spilled;        /* rendered waits in the writer's temporary file, at spill_off */
    uint64_t spill_off;
    size_t hidden;       /* findings not reported: the default per-file-ignores for test code */
    size_t host_only;    /* findings not reported: on code that never runs on a GPU */
    size_t noqa_added;   /* --add-noqa: directives written */
} ol_file_result;

/* The trees of files parsed for their summary before their own turn came
 * (a file whose rules ask about callers needs the summaries of the files
 * that may call it, and past OL_MAX_NESTED_FILES files linted one inside
 * another only a summary is built): kept packed, up to a bound on their
 * bytes, for the file's own lint, which then parses nothing and builds the
 * model from the unpacked tree. Shared by a run's threads. A kept tree is
 * used only for the same text, and unpacks to the very tree a parse gives,
 * so the findings are those of a fresh parse. */
typedef struct ol_kept_trees ol_kept_trees;
ol_kept_trees *ol_kept_trees_new(size_t files, size_t budget);
void ol_kept_trees_free(ol_kept_trees *k);

typedef struct ol_linter {
    ol_parser parser;
    const ol_settings *settings;
    ol_timings *timings; /* this thread's timings, or NULL */
    struct ol_project *project; /* the run's files and their summaries, or NULL (project.h) */
    size_t file;         /* index in the project of the file being linted */
    int depth;           /* files being linted on this thread, one inside another */
    size_t chain_bytes;  /* the text of those files: each holds its tree and model meanwhile */
    bool summary_only;   /* publish the file's summary, run no rules */
    uint64_t nested_ns;  /* time spent on other files inside this one's rules */
    size_t slot;         /* this worker's slot in the run's supervisor (supervise.h) */
    ol_kept_trees *kept; /* the run's kept trees, or NULL */
    bool keep_tree;      /* keep this summary's tree for the file's own lint */
    struct ol_model *model; /* the model of the file whose rules run now, or NULL */
} ol_linter;

void ol_linter_init(ol_linter *lt, const ol_grammar *g, const ol_settings *s);
void ol_linter_free(ol_linter *lt);

/* Reads, decodes and lints one input into r. stdin_bytes is used for
 * from_stdin inputs (ownership stays with the caller). */
void ol_lint_input(ol_linter *lt, const ol_input *in, const char *stdin_bytes, size_t stdin_len, ol_file_result *r);
/* ol_lint_input for the run: keeps r's source, and with snapshot records
 * what was read, so that --fix writes only over that. False when the file
 * could not be read or decoded (r then holds an OOM001 finding). */
bool ol_lint_read(ol_linter *lt, const ol_input *in, const char *stdin_bytes, size_t stdin_len, bool snapshot,
                  ol_file_result *r);
/* Lints already-decoded text (src is moved into r). */
void ol_lint_source(ol_linter *lt, ol_source *src, ol_file_result *r);

/* Lints every input on `threads` threads (0: one per CPU). */
void ol_lint_all(const ol_grammar *g, const ol_settings *s, const ol_run_options *run, const ol_input *inputs,
                 size_t count, const char *stdin_bytes, size_t stdin_len, ol_file_result *results, int threads);

void ol_file_result_free(ol_file_result *r);

/* Runs the fix rounds on r (which must hold its source; run.c), updating r's
 * source and findings to the final state, writing or diffing per mode
 * (OL_FIX_NONE: neither; the fixed text is left in r's source). When
 * nothing is written (a failure), r is left with the findings of the text
 * on disk. */
void ol_fix_file(ol_linter *lt, ol_file_result *r, ol_fix_mode mode, bool unsafe, ol_fix_outcome *outcome);

/* Reports an OOM001 finding on a result that has no source. */
void ol_result_io_error(ol_file_result *r, const char *path, const char *reason);

#endif
