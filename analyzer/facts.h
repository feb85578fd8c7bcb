/*
 * facts.h - the declarations of this part of the engine that only the
 * engine uses: the events of a region and the optimizer's module, which
 * the facts and the door use. What rules may use of it is declared in
 * public/facts.h, included here, so each thing is declared once and
 * rules, whose include path holds only analyzer/public/, see only their
 * half (docs/how-it-works.md).
 */
#ifndef OL_FACTS_H
#define OL_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "eval.h"
#include "steps.h"

#include "public/facts.h"

/* The module whose parameters an optimizer was built over
 * (`Adam(netD.parameters())` -> netD), or OL_NONE. */
ol_nid ol_optimizer_module(ol_model *m, ol_nid optimizer_expr);

/* The training events inside region (a loop or function body), in the
 * order they run within one pass, following calls of local functions. */
void ol_collect_events(ol_model *m, ol_nid region, ol_event_vec *out);
void ol_region_events_free(ol_region_events *re);

/* Does the code at n run once per training or inference step: in a loop,
 * in a forward or step method or a Lightning hook, or in a function called
 * from such code (a few levels)? Module level outside loops, `__init__`, a
 * smoke test under `if __name__ == "__main__":`, and a function whose every
 * caller in the file runs once run once. A function with no caller in the
 * file may be called from anywhere, and counts as per step. */
bool ol_runs_per_step(ol_model *m, ol_nid n);

#endif
