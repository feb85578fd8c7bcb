/*
 * emit.h - rendering findings: text (code frame, caret, help), JSON, SARIF
 * and GitHub workflow annotations. Emitters only read results; positions are
 * computed here from byte offsets (code points for text and JSON, UTF-16
 * units for SARIF, cell-relative lines for notebooks).
 */
#ifndef OL_EMIT_H
#define OL_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lint.h"

typedef enum ol_format {
    OL_FMT_TEXT,
    OL_FMT_JSON,
    OL_FMT_SARIF,
    OL_FMT_GITHUB,
    OL_FMT_CONCISE,   /* text, one line per finding (`--output-format concise`) */
    OL_FMT_GITLAB,    /* GitLab Code Quality JSON (emit_gitlab.c) */
    OL_FMT_JUNIT,     /* JUnit XML (emit_junit.c) */
} ol_format;

/* An output format by name, as --output-format and `output-format` in the
 * configuration spell it (`full` and `text` are the same); false if unknown. */
bool ol_format_parse(const char *name, ol_format *out);
#define OL_FORMAT_NAMES "full (or text), concise, json, sarif, github, gitlab, junit"

typedef struct ol_emit_options {
    ol_format format;
    bool color;
    bool quiet;
    bool statistics;
    bool unsafe_fixes;   /* --unsafe-fixes given: unsafe fixes count as available */
} ol_emit_options;

typedef struct ol_location {
    uint32_t line, col, end_line, end_col; /* 1-based; columns in code points; end exclusive */
    uint32_t col16, end_col16;             /* the same columns in UTF-16 units */
    uint32_t cell;                         /* notebook cell (1-based), or 0 */
    uint32_t file_line, file_end_line;     /* notebooks: lines of the .ipynb itself */
} ol_location;

ol_location ol_diag_location(const ol_file_result *r, const ol_diag *d);

/* Where a note of a finding of r is. In the finding's own file, as
 * ol_diag_location places a finding (cells for notebooks); in another file,
 * as the note gives it: col and end_col are 0 when it names the line only,
 * the UTF-16 columns are the code-point columns (the other file's text is not
 * at hand) and there is no cell. *path is the file's name as the run gives
 * it (r->path for the own file). */
ol_location ol_note_location(const ol_file_result *r, const ol_note *n, const char **path);
/* "high", or "low" for a finding that rests on a guess (JSON and SARIF). */
const char *ol_diag_confidence(const ol_diag *d);

/* A whole report (what the run prints), in o->format; ol_emit_text writes
 * the text form whatever o->format says (`--fix -` reports to stderr). */
void ol_emit(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
void ol_emit_text(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);

/* One file's part of each report. */
void ol_emit_text_file(FILE *out, const ol_file_result *r, const ol_emit_options *o);
void ol_emit_github_file(FILE *out, const ol_file_result *r);
/* JSON and SARIF: the file's objects, pretty-printed at their depth in the
 * document and separated as ol_json_pretty_at separates them. */
void ol_emit_json_file(ol_buf *b, const ol_file_result *r);
void ol_emit_sarif_file(ol_buf *b, const char *cwd, const ol_file_result *r);
/* GitLab Code Quality: the file's objects, paths relative to root
 * (ol_gitlab_root: $CI_PROJECT_DIR, else the current directory). */
void ol_emit_gitlab_file(ol_buf *b, const char *root, const ol_file_result *r);
char *ol_gitlab_root(void);
/* JUnit XML: the file's <testsuite>; what comes before the first and after
 * the last, and the suite of a run with no findings. */
void ol_emit_junit_file(ol_buf *b, const ol_file_result *r);
extern const char ol_junit_head[], ol_junit_tail[], ol_junit_empty[];
/* Appends s as XML 1.0 character data or an attribute value. */
void ol_xml_escape(ol_buf *b, const char *s);
/* What follows the files' parts: text's statistics and summary line, JSON's
 * closing bracket (or its --statistics array). */
void ol_emit_text_end(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
void ol_emit_json_end(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o,
                      size_t parts);
/* SARIF's log: what comes before the first result and after the last, and
 * the log with no result. */
void ol_sarif_frame(const char *cwd, char **head, char **tail, char **empty);
/* The current directory as SARIF's %SRCROOT% (absolute; NULL if unknown). */
char *ol_sarif_cwd(void);

/* Rendering each file's part of the report as soon as it is linted, on the
 * thread that linted it, so that its source, needed for code frames and
 * positions, is freed then rather than kept until the run ends. */
typedef struct ol_renderer {
    ol_emit_options o;
    bool discard;   /* nothing is reported from the files (--diff): only free */
    char *cwd;      /* SARIF's root */
} ol_renderer;

void ol_renderer_init(ol_renderer *rd, const ol_emit_options *o, bool discard);
void ol_renderer_free(ol_renderer *rd);
/* Renders r's part (into r->rendered) and frees its source; a file read
 * from standard input is left as it is (`--fix -` reports it differently). */
void ol_render_result(const ol_renderer *rd, ol_file_result *r);
/* Only the rendering (the fuzzer compares it with a report made at the end). */
void ol_render_part(const ol_renderer *rd, ol_file_result *r);

/* Writing a report file by file, in input order: the run streams each
 * file's part out as soon as the files before it are done (lint.c), and
 * writes what is left and the end when all are. */
typedef struct ol_report_writer {
    FILE *out;
    ol_format kind;           /* OL_FMT_TEXT covers the concise form too */
    const ol_renderer *rd;
    size_t parts;             /* files with findings written */
    char *sarif_head, *sarif_tail, *sarif_empty;
    ol_buf scratch;
    /* parts made before the files ahead of them were written: in memory up
     * to hold_budget bytes, the rest in an unlinked temporary file */
    size_t held_bytes, hold_budget, most_held;
    int spill_fd;             /* -1: none yet */
    bool no_spill;            /* the file could not be made or written: memory only */
    uint64_t spill_len;
    bool failed;              /* a part could not be read back (said on stderr): exit 2 */
} ol_report_writer;

void ol_writer_init(ol_report_writer *w, FILE *out, ol_format kind, const ol_renderer *rd);
/* r's part is made but cannot be written yet (a file before it is not
 * done): it waits with the writer, on disk once the parts waiting in memory
 * pass hold_budget, so a run that lints files ahead of their turn (the
 * callers of a function, project.h) holds at most that much of its report. */
void ol_writer_hold(ol_report_writer *w, ol_file_result *r);
void ol_writer_part(ol_report_writer *w, const ol_file_result *r);
void ol_writer_end(ol_report_writer *w, const ol_file_result *results, size_t count);
void ol_writer_free(ol_report_writer *w);

/* Escapes s for a workflow command: a message, or a property value (which
 * also escapes ':' and ','). */
void ol_github_escape(ol_buf *b, const char *s, bool property);

/* Appends s for a terminal or a log: control characters (tab only when
 * escape_tab), DEL, C1 controls and bytes that are not UTF-8 become \xNN. */
void ol_escape_display(ol_buf *b, const char *s, bool escape_tab);

/* Adds s to a JSON object as valid UTF-8: bytes that are not UTF-8 become
 * U+FFFD (cJSON escapes control characters itself). */
struct cJSON;
struct cJSON *ol_json_add_text(struct cJSON *obj, const char *key, const char *s);
/* Appends path's bytes with `%`, control characters and every byte above
 * 0x7F as %XX: the exact name, recoverable from an ASCII string. */
void ol_percent_encode_bytes(ol_buf *b, const char *path);

/* Re-indents compact JSON with two spaces per level (from `depth` levels
 * in, for a part of a larger document). */
void ol_json_pretty_at(const char *compact, int depth, ol_buf *out);
/* Appends item pretty-printed at depth, and deletes it. */
void ol_json_items(ol_buf *b, struct cJSON *item, int depth);
/* Writes item pretty-printed, then a newline, and deletes it. */
void ol_json_print(FILE *out, struct cJSON *item);

/* The JSON object of one fix (or cJSON null), shared by JSON and the server. */
struct cJSON *ol_fix_json(const ol_file_result *r, const ol_fix *fix);

#endif
