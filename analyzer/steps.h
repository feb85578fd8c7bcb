/*
 * steps.h - the training-step calls the evaluator itself recognises (steps.c):
 * backward passes and their operands, forward passes, frozen modules, inputs
 * that carry a graph, per-batch metric updates. facts.h includes it, so the
 * facts' users see these too; the evaluator includes only this.
 */
#ifndef OL_STEPS_H
#define OL_STEPS_H

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
/* Is function fi the `update(self, output)` of a metric class of a framework
 * that calls it once per batch with the engine's output, model predictions
 * and all (a subclass of ignite's Metric)? */
bool ol_function_is_metric_update(ol_model *m, uint32_t fi);
/* Is fi such an update(), or a method of the same class called only from
 * one (`self._update((y_pred, y))`), also through the base-class method it
 * overrides? Its attributes live across batches. */
bool ol_function_per_batch_metric(ol_model *m, uint32_t fi);
/* The `x.requires_grad_(...)` calls and `x.requires_grad = ...` assignments
 * of the file, in node order, found once (count in *count): a question about
 * freezing looks at the few of its own function, not at every call before
 * it. */
const ol_nid *ol_grad_switches(ol_model *m, size_t *count);
/* Was the whole model `model` (an identifier or `self.model`) frozen in the
 * function of `at`, before it: `model.requires_grad_(False)` (also chained,
 * `model.eval().requires_grad_(False)`) or `p.requires_grad = False` in the
 * body of `for p in model.parameters()`? Not when only a part is frozen
 * (`model.features.requires_grad_(False)`, a condition on the parameter's
 * name), when gradients are turned back on, or when a layer is put in after
 * the freeze (`model.fc = nn.Linear(...)`). Its forward then records no
 * graph unless its input carries one. */
bool ol_frozen_before(ol_model *m, ol_nid model, ol_nid at);
/* Does an argument of the call carry an autograd graph (a batch of data
 * does not)? */
bool ol_inputs_carry_graph(ol_model *m, ol_nid call);

#endif
