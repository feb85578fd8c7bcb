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
 */
#ifndef OL_DATAFLOW_H
#define OL_DATAFLOW_H

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

/* May expr evaluate to None: the literal, a conditional expression with a
 * None branch, or a local one of whose reaching bindings is one of these.
 * Parameters are not followed: their callers decide. */
bool ol_may_be_none(ol_model *m, ol_nid expr);

/* Does n run only in a debugging branch: the body of an `if` (or the first
 * branch of a conditional expression) whose test names debugging
 * (`args.debug`, `DEBUG`, `os.environ.get("DEBUG")`, `cfg.detect_anomaly`,
 * `__debug__`), or a function or class named for it (`DetectAnomalyHook`)? */
bool ol_in_debug_branch(ol_model *m, ol_nid n);

#endif
