/*
 * flows.h - the declarations of this part of the engine that only the
 * engine uses: which calls differentiate, an instance's class and the
 * eval() switch, which the door asks for the rules. What rules may use of
 * it is declared in public/flows.h, included here, so each thing is
 * declared once and rules, whose include path holds only
 * analyzer/public/, see only their half (docs/how-it-works.md).
 */
#ifndef OL_FLOWS_H
#define OL_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

#include "public/flows.h"

/* Does call ci differentiate, itself: `backward()`, an optimizer step,
 * `torch.autograd.grad` and the other autograd functions (`jacobian`,
 * `torch.func.grad`, ...), `x.requires_grad_()` on an input? */
bool ol_call_differentiates(ol_model *m, uint32_t ci);

/* The dotted name of the imported class whose instance e holds, followed
 * through the binding of a name or of `self.x` in its class and the methods
 * that return the module itself (`self.model_ = Model(n).eval().to(device)`,
 * then `self.model_`), through the unwrapping of a DataParallel or DDP
 * wrapper (`self.model.module if multigpus else self.model`) and a
 * conditional whose branches hold the same class: "models.Model"; NULL
 * when not known. */
const char *ol_instance_class(ol_model *m, ol_nid e);

/* The `.eval()` call that puts `module` in evaluation mode at `at`, as
 * ol_module_in_eval_mode (ask.h) answers it, without the reasons:
 * *by_class (may be NULL) tells whether the class's methods decide it
 * rather than the last switch before `at` in its function. */
ol_nid ol_module_eval_switch(ol_model *m, ol_nid module, ol_nid at, bool *by_class);

#endif
