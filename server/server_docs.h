/*
 * server_docs.h - the text documents a language client has open, and the
 * arithmetic between LSP positions and byte offsets.
 *
 * A document holds the buffer's unsaved text as UTF-8 (what the engine
 * reads) and an index of where its lines start. LSP splits lines at "\n",
 * "\r\n" and "\r", and counts columns in the encoding the two sides agreed
 * on at initialize: UTF-16 code units unless the client offered UTF-8 or
 * UTF-32. Every conversion goes through ol_doc_offset / ol_doc_position, so
 * surrogate pairs, positions past a line's end and lines past the document's
 * end are handled in one place (clamped, as the protocol asks).
 *
 * Edits (textDocument/didChange) are applied in order, each against the text
 * the previous one left: a change with a range replaces that range, one
 * without replaces the whole text.
 *
 * Notebook cells are documents too; `notebook` names the notebook document
 * a cell belongs to.
 */
#ifndef OL_SERVER_DOCS_H
#define OL_SERVER_DOCS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util.h"

typedef enum ol_pos_encoding {
    OL_ENC_UTF16,
    OL_ENC_UTF8,
    OL_ENC_UTF32,
} ol_pos_encoding;

const char *ol_pos_encoding_name(ol_pos_encoding e);

typedef struct ol_lsp_pos {
    uint32_t line, character;
} ol_lsp_pos;

#define OL_DOC_BLOCK 256u

typedef struct ol_doc {
    char *uri;
    char *language;          /* languageId, e.g. "python" */
    int64_t version;
    ol_buf text;             /* UTF-8, NUL-terminated (data never NULL) */
    OL_VEC(uint32_t) lines;  /* byte offset where each line starts */
    /* code points and UTF-16 units before each OL_DOC_BLOCK-byte block, so
     * a position on a long line costs a block's scan, not the line's */
    OL_VEC(uint32_t) col_marks;
    char *notebook;          /* cells: the notebook document's URI, else NULL */
    size_t store_index;      /* its place in the store's docs */
} ol_doc;

/* text: n bytes of UTF-8 (copied). Invalid UTF-8 is replaced by U+FFFD, so
 * the rest of the server can rely on valid text. */
ol_doc *ol_doc_new(const char *uri, const char *language, int64_t version, const char *text, size_t n);
void ol_doc_free(ol_doc *d);
void ol_doc_set_text(ol_doc *d, const char *text, size_t n);

/* Applies one TextDocumentContentChangeEvent. Returns false with a reason in
 * err when it is not one (the document is left as it was). */
bool ol_doc_apply_change(ol_doc *d, const cJSON *change, ol_pos_encoding enc, ol_buf *err);

/* Byte offset of an LSP position (clamped to the line's end, and to the
 * document's end for lines past it; a position inside a UTF-16 surrogate
 * pair falls back to the character's start). */
uint32_t ol_doc_offset(const ol_doc *d, ol_lsp_pos p, ol_pos_encoding enc);
/* LSP position of a byte offset (clamped to the document; an offset inside
 * a line break is the end of that line). */
ol_lsp_pos ol_doc_position(const ol_doc *d, uint32_t byte, ol_pos_encoding enc);
/* 0-based line of a byte offset. */
uint32_t ol_doc_line_of(const ol_doc *d, uint32_t byte);
/* Byte range of line i without its line break. */
void ol_doc_line_span(const ol_doc *d, uint32_t i, uint32_t *start, uint32_t *end);

/* A JSON number as an integer in [lo, hi]: clamped there, fractions
 * truncated (a client's 1e300 or -1e300 must not overflow a conversion). */
int64_t ol_json_clamp(double v, int64_t lo, int64_t hi);

/* Reads an LSP Position / Range object; false when it is not one. */
bool ol_lsp_pos_read(const cJSON *j, ol_lsp_pos *p);
bool ol_lsp_range_read(const cJSON *j, ol_lsp_pos *start, ol_lsp_pos *end);
cJSON *ol_lsp_range_json(ol_lsp_pos start, ol_lsp_pos end);

/* The open documents, by URI: a hash table, so a notebook of thousands of
 * cells (each a document) is not searched cell by cell. */
typedef struct ol_doc_store {
    OL_VEC(ol_doc *) docs;
    ol_doc **slots;     /* open addressing, linear probing; NULL = empty */
    size_t slot_count;  /* a power of two, or 0 */
} ol_doc_store;

ol_doc *ol_docs_find(const ol_doc_store *s, const char *uri);
/* Adds d, replacing (and freeing) a document with the same URI. */
void ol_docs_put(ol_doc_store *s, ol_doc *d);
/* Removes and frees the document; false when it was not open. */
bool ol_docs_remove(ol_doc_store *s, const char *uri);
void ol_docs_free(ol_doc_store *s);

/* A file: URI's path (percent-decoded), or NULL for other schemes. */
char *ol_uri_to_path(const char *uri);
/* The file: URI of an absolute path. */
char *ol_path_to_uri(const char *path);

#endif
