/*
 * toml.h - TOML documents as a tree of values, for reading pyproject.toml.
 *
 * tree-sitter-toml parses; this layer turns its concrete syntax tree into
 * values oomlint can query (strings with their escapes decoded, arrays,
 * tables) and enforces what the grammar cannot: a key defined twice, a table
 * header repeated, an inline table extended afterwards, a \u escape that is
 * not a Unicode scalar value. Every value and key remembers the line it
 * starts on, so the configuration layer (config.c) can report `file:line`
 * for a value of the wrong type or an unknown key. A document that is not
 * valid TOML is one error naming the first offending line; no partial
 * document is returned. Nothing here knows about oomlint's keys.
 */
#ifndef OL_TOML_H
#define OL_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef enum ol_toml_type {
    OL_TOML_STRING,
    OL_TOML_INTEGER,
    OL_TOML_FLOAT,
    OL_TOML_BOOLEAN,
    OL_TOML_DATETIME,
    OL_TOML_ARRAY,
    OL_TOML_TABLE,
} ol_toml_type;

typedef struct ol_toml_value ol_toml_value;

typedef struct ol_toml_entry {
    char *key;            /* decoded key (one component of a dotted key) */
    uint32_t line;        /* 1-based line where the key is written */
    ol_toml_value *value;
} ol_toml_entry;

struct ol_toml_value {
    ol_toml_type type;
    uint32_t line;        /* 1-based line where the value (or table header) starts */
    char *text;           /* strings: the decoded value (NUL-terminated; may hold NULs
                           * of its own, see len); other scalars: the source text */
    size_t len;           /* length of text */
    bool boolean;         /* OL_TOML_BOOLEAN */
    OL_VEC(ol_toml_value *) items;   /* OL_TOML_ARRAY */
    OL_VEC(ol_toml_entry) entries;   /* OL_TOML_TABLE, in the order written */
    /* how a table came to be, for TOML's redefinition rules (toml.c) */
    uint8_t origin;
    bool table_array;     /* an array made by [[header]] */
    /* a hash index of entries (slot = entry index + 1), once a table is big
     * enough that linear lookups would make building it quadratic */
    uint32_t *index;
    size_t index_cap;
};

typedef struct ol_toml_doc {
    ol_toml_value *root;  /* the top-level table */
} ol_toml_doc;

/* Parses text (len bytes, need not be NUL-terminated). On failure returns
 * false, sets *err_line to the 1-based line of the problem and writes a
 * message without the location to err. */
bool ol_toml_parse(ol_toml_doc *doc, const char *text, size_t len, uint32_t *err_line, ol_buf *err);
void ol_toml_free(ol_toml_doc *doc);

/* The entry of a table with this key, or NULL. */
const ol_toml_entry *ol_toml_get(const ol_toml_value *table, const char *key);
/* "a string", "an array", ... for messages. */
const char *ol_toml_type_name(ol_toml_type t);

#endif
