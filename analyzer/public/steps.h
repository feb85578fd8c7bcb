/*
 * steps.h - the training-step calls the evaluator itself recognises (steps.c):
 * backward passes and their operands, forward passes, frozen modules, inputs
 * that carry a graph, per-batch metric updates. facts.h includes it, so the
 * facts' users see these too; the evaluator includes only this.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/steps.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_STEPS_H
#define OL_PUBLIC_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval.h"

/* The expression whose graph a backward-like call consumes (`x.backward()`,
 * `scaler.scale(x).backward()`, `accelerator.backward(x)`,
 * `self.manual_backward(x)`), or OL_NONE when the call is not one. */
ol_nid ol_backward_operand(ol_model *m, uint32_t call);
bool ol_is_backward_call(ol_model *m, uint32_t call);
/* A model's forward pass: a call of an nn.Module (not a loss function). */
bool ol_is_forward_call(ol_model *m, uint32_t call);
/* The `x.requires_grad_(...)` calls and `x.requires_grad = ...` assignments
 * of the file, in node order, found once (count in *count): a question about
 * freezing looks at the few of its own function, not at every call before
 * it. */
const ol_nid *ol_grad_switches(ol_model *m, size_t *count);
/* Does an argument of the call carry an autograd graph (a batch of data
 * does not)? */
bool ol_inputs_carry_graph(ol_model *m, ol_nid call);

#endif
