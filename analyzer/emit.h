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
} ol_format;

/* An output format by name, as --output-format and `output-format` in the
 * configuration spell it (`full` and `text` are the same); false if unknown. */
bool ol_format_parse(const char *name, ol_format *out);
#define OL_FORMAT_NAMES "full (or text), concise, json, sarif, github"

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

void ol_emit_text(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
void ol_emit_json(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
/* SARIF 2.1.0 for code scanning (emit_sarif.c). */
void ol_emit_sarif(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
/* GitHub Actions workflow-command annotations (emit_github.c). */
void ol_emit_github(FILE *out, const ol_file_result *results, size_t count, const ol_emit_options *o);
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

/* Re-indents compact JSON with two spaces per level. */
void ol_json_pretty(const char *compact, ol_buf *out);

/* The JSON object of one fix (or cJSON null), shared by JSON and the server. */
struct cJSON *ol_fix_json(const ol_file_result *r, const ol_fix *fix);

#endif
