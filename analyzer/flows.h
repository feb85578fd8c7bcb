/*
 * flows.h - where a value goes and what a module is doing, within one file
 * (flows.c): per-file facts the run's summaries record and the door asks.
 * The door (ask.h) includes this header, so rules ask these questions
 * through it.
 */
#ifndef OL_FLOWS_H
#define OL_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* Does call ci differentiate, itself: `backward()`, an optimizer step,
 * `torch.autograd.grad` and the other autograd functions (`jacobian`,
 * `torch.func.grad`, ...), `x.requires_grad_()` on an input? */
bool ol_call_differentiates(ol_model *m, uint32_t ci);
/* Does the value of expression `value` (a call's result) reach expression
 * `into`, through the names of its function that hold it and the
 * containers they fill (`outs.append(y)`), with no cut on the way (`.item()`,
 * `.numpy()`, `.detach()`, a comparison: a value that holds no graph)? */
bool ol_value_reaches(ol_model *m, ol_nid value, ol_nid into);
/* The dotted name of the imported class whose instance e holds, followed
 * through the binding of a name or of `self.x` in its class and the methods
 * that return the module itself (`self.model_ = Model(n).eval().to(device)`,
 * then `self.model_`): "models.Model"; NULL when not known. */
const char *ol_instance_class(ol_model *m, ol_nid e);
/* What the code around call ci does with what the call returns (bits): it
 * backwards through it (OL_USE_BACKWARD: also `torch.autograd.grad` of it,
 * or a training step returning it), returns it (OL_USE_RETURNED: the caller
 * hands it on, and its own callers decide), or neither (OL_USE_CONSUMED:
 * shown, compared, counted, dropped). OL_USE_EVAL in the run's call
 * records: the module called was put in evaluation mode first. */
enum { OL_USE_CONSUMED = 1, OL_USE_RETURNED = 2, OL_USE_BACKWARD = 4, OL_USE_EVAL = 8 };
unsigned ol_call_result_use(ol_model *m, uint32_t ci);
/* The `.eval()` call that puts `module` in evaluation mode at `at`, as
 * ol_module_in_eval_mode (ask.h) answers it, without the reasons:
 * *by_class (may be NULL) tells whether the class's methods decide it
 * rather than the last switch before `at` in its function. */
ol_nid ol_module_eval_switch(ol_model *m, ol_nid module, ol_nid at, bool *by_class);

#endif
