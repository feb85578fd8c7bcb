/*
 * source.h - a source file as oomlint sees it: decoded to UTF-8, with a line
 * index for turning byte offsets into (line, column) positions.
 *
 * Decoding follows Python's own rules: a UTF-8 BOM means UTF-8; otherwise a
 * PEP 263 coding declaration on line 1 or 2 names the encoding (decoded with
 * iconv, so latin-1, cp1252, gbk, euc-kr and friends all work); otherwise the
 * bytes must be valid UTF-8. NUL bytes are refused, as Python refuses them.
 * Line endings are read as Python reads them (universal newlines): LF, CRLF,
 * and a CR alone (old Mac files), which becomes LF in the decoded text so
 * that every line index, position and rule sees its lines; the length does
 * not change, so offsets in the text stay offsets in the file.
 * Everything downstream (parser, model, rules, emitters) works on the decoded
 * UTF-8 text; the original bytes are kept where the text differs from them
 * (a declared encoding, lone CRs), so --fix can splice its edits into them
 * and leave every other byte as it was.
 *
 * Notebooks (.ipynb) are sources too: their code cells are joined into one
 * text, and a cell map turns text lines back into (cell, line-in-cell) and
 * into the notebook file's own line numbering.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/source.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_SOURCE_H
#define OL_PUBLIC_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* The block size of ol_source's col_marks. */
#define OL_COL_BLOCK 256u

/* Largest file oomlint reads; beyond this it reports OOM001. */
#define OL_MAX_SOURCE_BYTES (64u * 1024u * 1024u)

typedef struct ol_pos {
    uint32_t line;   /* 1-based */
    uint32_t col;    /* 1-based, in Unicode code points */
    uint32_t col16;  /* 1-based, in UTF-16 code units (for SARIF) */
} ol_pos;

/* One code cell of a notebook, as placed in the joined text. */
typedef struct ol_cell {
    uint32_t index;          /* 1-based cell number among all cells */
    uint32_t json_index;     /* 0-based position in the notebook's cell array */
    uint32_t first_line;     /* 0-based line of the joined text where it starts */
    uint32_t line_count;     /* lines it occupies in the joined text */
    uint32_t *file_lines;    /* 1-based .ipynb line of each source line (0 if unknown); owned */
} ol_cell;

typedef struct ol_source {
    char *path;              /* path as given / displayed; owned */
    char *text;              /* decoded UTF-8, NUL-terminated, BOM removed; owned */
    uint32_t len;
    uint32_t *line_starts;   /* byte offset of each line; line_count entries */
    uint32_t line_count;
    /* Code points and UTF-16 units before each OL_COL_BLOCK-byte block of
     * text (2 per block), so a column on a long line costs one block's scan
     * and not the line's (NULL: scan from the line's start). */
    uint32_t *col_marks;
    char *encoding;          /* declared non-UTF-8 encoding (iconv name), or NULL */
    bool bom;                /* the file began with a UTF-8 BOM */
    bool crlf;               /* the first line ending is CRLF */
    bool cr_newlines;        /* the first line ends with a CR alone (old Mac): new
                                lines are written with CR */
    bool notebook;           /* text was built from a notebook's code cells */
    OL_VEC(ol_cell) cells;   /* notebooks only */
    char *raw;               /* notebooks: the original JSON text; other sources: the
                                file's bytes when text is not them (a declared encoding,
                                lone CRs), else NULL; for --fix; owned */
    size_t raw_len;
} ol_source;

uint32_t ol_source_line_index(const ol_source *src, uint32_t byte); /* 0-based */
/* The text of 0-based line i without its line ending. */
const char *ol_source_line(const ol_source *src, uint32_t i, uint32_t *len);

#endif
