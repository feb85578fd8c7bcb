/*
 * syntax.h - the declarations of this part of the engine that only the
 * engine uses: the grammar, the parser and a tree's lifetimes, and a
 * kind's name. What rules may use of it is declared in public/syntax.h,
 * included here, so each thing is declared once and rules, whose include
 * path holds only analyzer/public/, see only their half
 * (docs/how-it-works.md).
 */
#ifndef OL_SYNTAX_H
#define OL_SYNTAX_H

#include <stdbool.h>
#include <stdint.h>

#include "parse_arena.h"
#include "source.h"
#include "util.h"

#include "public/syntax.h"

bool ol_grammar_init(ol_grammar *g);
void ol_grammar_free(ol_grammar *g);
const char *ol_kind_name(ol_kind k);
void ol_parser_init(ol_parser *p, const ol_grammar *g);
void ol_parser_free(ol_parser *p);

/* Set on a thread while it parses a text whose tree is flattened once and
 * dropped: the runtime then leaves a tree without errors unbalanced
 * (grammar/parser_unity.c defines it, grammar/edit_runtime.py says why). */
extern _Thread_local bool ol_ts_unbalanced;

/* Parses src into t. Always produces a tree (possibly just an empty module). */
void ol_parse(ol_parser *p, const ol_source *src, ol_tree *t);
void ol_tree_free(ol_tree *t);

/* Drops from t's errors those that are the parser's recovery from an earlier
 * error, not errors of their own (see syntax.c): an error is kept when it is
 * still there after the lines of the errors before it are blanked. Costs a
 * parse of the text for each error kept after the first, within a bound. */
void ol_drop_cascades(ol_parser *p, const ol_source *src, ol_tree *t);

/* A tree packed for keeping (lint.c keeps the trees of files summarized
 * ahead of their turn): each node in the tree's order as a few bytes (its
 * kind, field, flags, the distance back to its parent, its start's move
 * from the node before and its length; field and flags share a byte),
 * about 5 bytes a node against the 24 of ol_node, the model (three times
 * that) built again from it in a fraction of a parse. Unpacking gives back
 * the very tree packed. */
typedef struct ol_packed_tree {
    uint8_t *bytes;
    size_t len;
    size_t count; /* nodes */
    ol_span_vec comments;
    ol_syntax_error_vec errors;
    uint32_t max_depth;
} ol_packed_tree;

/* Packs t into *out and frees t (a tree that timed out is not packed). */
void ol_tree_pack(ol_tree *t, ol_packed_tree *out);
/* Unpacks *in, which is emptied, into t, a tree of src. */
void ol_tree_unpack(ol_packed_tree *in, const ol_source *src, ol_tree *t);
void ol_packed_tree_free(ol_packed_tree *p);

#endif
