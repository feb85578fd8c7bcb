/*
 * dataflow.h - where a value comes from and which branch a statement runs
 * in: questions several rules ask about one function, answered from the
 * model's bindings (model.h) without walking the tree again.
 *
 *   - the bindings an expression's value is built from, transitively
 *     (does the second backward of an iteration reuse the first one's
 *     graph?);
 *   - whether a local may be None on some path (`loc = None`, then
 *     `if gpu: loc = "cuda"`);
 *   - whether a statement only runs in a debugging branch (`if args.debug:`).
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/dataflow.h, which includes this one. Rules are compiled
 * with analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_DATAFLOW_H
#define OL_PUBLIC_DATAFLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* Defs whose values flow into expr: the reaching bindings of the names it
 * reads, then of the names their values read, and so on (assignments,
 * augmented assignments, walrus and with targets; for-loop targets and
 * parameters are sources with no further history; `x.detach()`, `x.data`,
 * `x.item()` do not carry x's history). Writes at most cap def
 * indices to out, each once, and returns how many. */
size_t ol_value_sources(ol_model *m, ol_nid expr, uint32_t *out, size_t cap);

/* What a use of a container does with it. */
typedef enum ol_use_kind {
    OL_USE_READ,    /* read, iterated, returned, or a method called on it that is not one below */
    OL_USE_STORE,   /* `x[key] = value`, `x[key] += value` */
    OL_USE_ADD,     /* `x.append(v)`, `extend`, `insert`, `add`, `update`, `setdefault`, `__setitem__` */
    OL_USE_PASSED,  /* an argument of a call, also inside a literal (`f([x])`): the callee may fill it */
    OL_USE_ALIASED, /* bound to another name, also inside a literal (`y = x`, `pair = (x, 1)`) */
    OL_USE_REBOUND, /* the name bound again (an assignment or a for-loop target) */
} ol_use_kind;

typedef struct ol_use {
    ol_use_kind kind;
    ol_nid node;   /* the identifier */
    ol_nid key;    /* STORE: the subscript */
    ol_nid value;  /* STORE: the value stored */
    ol_nid call;   /* ADD, PASSED: the call */
    ol_nid method; /* ADD: the method's name */
} ol_use;

typedef bool (*ol_use_visitor)(void *ctx, const ol_use *use);

/* Calls fn with each use, in its scope, of the name that def binds (its
 * own target aside), for questions about a list or dict built in place
 * (`out = {}`, then `out["loss"] = loss`; `feats = []`, then
 * `feats.append(f)`). Stops when fn returns false. Returns false when it
 * stopped, or when the scope is too large to walk (more than 50,000 nodes). */
bool ol_container_uses(ol_model *m, uint32_t def, ol_use_visitor fn, void *ctx);

/* Is x skipped when the name `name` holds the literal `value`: inside an
 * `if`/`elif` of its function whose condition (`name`, `not name`,
 * `name == "train"`, `name is None`, `name and ...`) is then false, or an
 * `else` whose `if` is then true? The deciding `if` in *branch. */
bool ol_skipped_when(ol_model *m, ol_nid x, ol_sym name, ol_nid value, ol_nid *branch);
/* A literal whose truth is known: True, False, None, a number, a string. */
bool ol_is_literal(ol_model *m, ol_nid e);

#endif
