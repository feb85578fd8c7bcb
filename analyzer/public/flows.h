/*
 * flows.h - where a value goes and what a module is doing, within one file
 * (flows.c): per-file facts the run's summaries record and the door asks.
 * The door (ask.h) includes this header, so rules ask these questions
 * through it.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/flows.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_FLOWS_H
#define OL_PUBLIC_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* Does the value of expression `value` (a call's result) reach expression
 * `into`, through the names of its function that hold it and the
 * containers they fill (`outs.append(y)`), with no cut on the way (`.item()`,
 * `.numpy()`, `.detach()`, a comparison: a value that holds no graph)? */
bool ol_value_reaches(ol_model *m, ol_nid value, ol_nid into);
/* The same question answered by a walk made for it alone, which stops at
 * `value`: ol_value_reaches keeps one walk per `into` for every value asked
 * of it, and must answer as this does (oomlint-unit --reach-check). */
bool ol_value_reaches_walk(ol_model *m, ol_nid value, ol_nid into);
/* What the code around call ci does with what the call returns (bits): it
 * backwards through it (OL_USE_BACKWARD: also `torch.autograd.grad` of it,
 * or a training step returning it), returns it (OL_USE_RETURNED: the caller
 * hands it on, and its own callers decide), or neither (OL_USE_CONSUMED:
 * shown, compared, counted, dropped). OL_USE_EVAL in the run's call
 * records: the module called was put in evaluation mode first. */
enum { OL_USE_CONSUMED = 1, OL_USE_RETURNED = 2, OL_USE_BACKWARD = 4, OL_USE_EVAL = 8 };
unsigned ol_call_result_use(ol_model *m, uint32_t ci);

#endif
