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

/* Parses src into t. Always produces a tree (possibly just an empty module). */
void ol_parse(ol_parser *p, const ol_source *src, ol_tree *t);
void ol_tree_free(ol_tree *t);

#endif
