/*
 * steps.h - the declarations of this part of the engine that only the
 * engine uses: frozen modules and per-batch metric updates, which the
 * door asks for the rules. What rules may use of it is declared in
 * public/steps.h, included here, so each thing is declared once and
 * rules, whose include path holds only analyzer/public/, see only their
 * half (docs/how-it-works.md).
 */
#ifndef OL_STEPS_H
#define OL_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval.h"

#include "public/steps.h"

/* Is function fi the `update(self, output)` of a metric class of a framework
 * that calls it once per batch with the engine's output, model predictions
 * and all (a subclass of ignite's Metric)? */
bool ol_function_is_metric_update(ol_model *m, uint32_t fi);

/* Is fi such an update(), or a method of the same class called only from
 * one (`self._update((y_pred, y))`), also through the base-class method it
 * overrides? Its attributes live across batches. */
bool ol_function_per_batch_metric(ol_model *m, uint32_t fi);

/* Was the whole model `model` (an identifier or `self.model`) frozen in the
 * function of `at`, before it: `model.requires_grad_(False)` (also chained,
 * `model.eval().requires_grad_(False)`) or `p.requires_grad = False` in the
 * body of `for p in model.parameters()`? Not when only a part is frozen
 * (`model.features.requires_grad_(False)`, a condition on the parameter's
 * name), when gradients are turned back on, or when a layer is put in after
 * the freeze (`model.fc = nn.Linear(...)`). Its forward then records no
 * graph unless its input carries one. */
bool ol_frozen_before(ol_model *m, ol_nid model, ol_nid at);

#endif
