/*
 * dataflow.h - the declarations of this part of the engine that only the
 * engine uses: None-ness and debugging branches, which the door asks for
 * the rules. What rules may use of it is declared in public/dataflow.h,
 * included here, so each thing is declared once and rules, whose include
 * path holds only analyzer/public/, see only their half
 * (docs/how-it-works.md).
 */
#ifndef OL_DATAFLOW_H
#define OL_DATAFLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

#include "public/dataflow.h"

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
