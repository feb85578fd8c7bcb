/*
 * eval.h - the evaluator: what an expression holds (ol_eval), what a call
 * calls (ol_qualname, ol_call_is, the known callables of callables.c), the
 * classes of the file (classes.c), what a container holds (elements.c),
 * grad mode and autocast at a node (grad.c), and the model's last steps,
 * which need values (resolve.c). It sits above the model and the dataflow
 * (model.h, dataflow.h) and below the facts (facts.h): see the engine's
 * layers in docs/how-it-works.md.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/eval.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_EVAL_H
#define OL_PUBLIC_EVAL_H

#include "model.h"

/* Value of an expression, at its own position. */
ol_val ol_eval(ol_model *m, ol_nid expr);
/* Value a def binds. */
ol_val ol_def_value(ol_model *m, uint32_t def);
/* Full dotted name an expression refers to (`T.cuda.amp.autocast` ->
 * "torch.cuda.amp.autocast"), or NULL. */
const char *ol_qualname(ol_model *m, ol_nid expr);

/* Innermost autocast context around a node, or OL_NO_INDEX. */
uint32_t ol_autocast_at(const ol_model *m, ol_nid n);
/* Innermost except-clause context around a node, or OL_NO_INDEX. */
uint32_t ol_except_at(const ol_model *m, ol_nid n);

/* The value a name is bound to by `name = <value>`, when that is the only
 * binding reaching it (no unpacking, no star), unwrapped of parentheses;
 * OL_NONE otherwise. */
ol_nid ol_bound_value(ol_model *m, ol_nid name);
bool ol_class_is_module(ol_model *m, uint32_t cls);
/* Is class ci the class `base` of this file, or derived from it through the
 * bases of this file's classes (classes.c)? */
bool ol_class_derives(ol_model *m, uint32_t ci, uint32_t base);
ol_hook ol_function_hook(ol_model *m, uint32_t fn);

/* A loop that draws batches: it iterates a loader (also through enumerate,
 * tqdm, zip, ...) or runs backward() / an optimizer step each iteration. */
bool ol_loop_is_data_loop(ol_model *m, uint32_t loop);

/* Kind tests used by rules. */
bool ol_val_is_graph(ol_val v);

/* The argument call site c passes for parameter def d of function f (`self.m(a)`
 * passes a as the second parameter), or OL_NONE; *splat tells whether a `*args`
 * or `**kwargs` came first, after which positions are unknown. */
ol_nid ol_callsite_arg(ol_model *m, const ol_function *f, const ol_call *c, const ol_def *d, bool *splat);
/* True when the call's callee resolves to one of the dotted names given
 * (NULL-terminated list). */
bool ol_call_is(ol_model *m, ol_nid call, const char *const *quals);

/* The function of this file a call runs (`f(x)`, `self.step(b)`,
 * `meter.update(v)` for a local class), or OL_NO_INDEX. */
uint32_t ol_callee_function(ol_model *m, ol_nid call);
/* What function fi returns, all its returns joined. */
ol_val ol_function_result(ol_model *m, uint32_t fi);

#endif
