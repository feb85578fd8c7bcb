/*
 * model.h - the declarations of this part of the engine that only the
 * engine uses: building, binding and freeing a model, and the evaluator's
 * hooks into it. What rules may use of it is declared in public/model.h,
 * included here, so each thing is declared once and rules, whose include
 * path holds only analyzer/public/, see only their half
 * (docs/how-it-works.md).
 */
#ifndef OL_MODEL_H
#define OL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "syntax.h"
#include "util.h"

#include "public/model.h"

/* The first half of ol_model_build (model.c): the walk that records scopes,
 * bindings, imports, functions, classes, loops and calls, and the call sites
 * of local functions that syntax alone shows; resolve.c does the rest. */
void ol_model_bind(ol_model *m, const ol_tree *t);

/* For resolve.c: a context over a body, and the call -> functions index. */
void ol_model__set_ctx_range(ol_model *m, ol_nid body, uint32_t ctx);
uint32_t ol_model__add_ctx(ol_model *m, ol_ctx c);
void ol_model__index_calls(ol_model *m);
void ol_model_free(ol_model *m);
/* Frees what the model caches only to answer faster (the model of a file
 * whose rules wait while another file is linted inside them holds no more
 * than it needs); it is built again when asked. */
void ol_model_trim(ol_model *m);
/* A class's member by name: (class << 32 | name) as the key, its place in
 * the class's list, and the function (a method) or the def (an attribute). */
typedef struct ol_member {
    uint64_t key;
    uint32_t place, index;
} ol_member;
/* The methods of class ci named `name` (ol_class.methods), or its attribute
 * defs so named (ol_class.attr_defs: `self.x = ...` in its methods, and its
 * methods), in the class's order: *out, and how many. Looked up in one
 * sorted table per model of every class's members, built on the first
 * question (a class of thousands of methods searched its lists once per
 * call or attribute read). Ask after the model's walk. */
size_t ol_class_methods_named(ol_model *m, uint32_t ci, ol_sym name, const ol_member **out);
size_t ol_class_attrs_named(ol_model *m, uint32_t ci, ol_sym name, const ol_member **out);
/* Frees the index of identifiers by spelling (names.c, ol_name_uses); not
 * trimmed, as its answers are pointers a rule holds while it evaluates. */
void ol_name_index_free(struct ol_name_index *ix);

/* The defs of one (scope, name) chain, the one ol_scope_defs() returns the
 * head of, as an array in pos order (binary-searchable). */
size_t ol_def_chain(ol_model *m, uint32_t head, const uint32_t **out);

/* Forgets every memoized value and verdict (after the links changed what
 * they may answer). */
void ol_model_forget(ol_model *m);

/* Does the name call something a model (`model`, `teacher_model`, `netG`),
 * not a function about one (`build_model`) or a thing of one (`model_path`)? */
bool ol_name_is_model(const char *name, size_t len);

/* Does the name call something a loss function (`criterion`, `loss_fn`)? */
bool ol_name_is_loss_fn(const char *name, size_t len);

#endif
