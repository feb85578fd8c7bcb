/*
 * eval.h - the declarations of this part of the engine that only the
 * engine uses: building the model's last steps, grad mode within one file
 * and its explanation, the classes' module guesses. What rules may use of
 * it is declared in public/eval.h, included here, so each thing is
 * declared once and rules, whose include path holds only
 * analyzer/public/, see only their half (docs/how-it-works.md).
 */
#ifndef OL_EVAL_H
#define OL_EVAL_H


#include "model.h"

#include "public/eval.h"

/* Builds the model of a tree: model.c's walk (ol_model_bind), then the steps
 * that need values (resolve.c). */
void ol_model_build(ol_model *m, const ol_tree *t);

/* Is autograd disabled at this node (no_grad, inference_mode,
 * set_grad_enabled(False or a condition), a no-grad decorator, a Lightning
 * eval hook, or a function only ever called under one of these)? */
bool ol_grad_disabled(ol_model *m, ol_nid n);

/* Looks once for what can switch autograd anywhere in the file
 * (`torch.set_grad_enabled(...)` as a statement, a callable wrapped as
 * `torch.no_grad()(f)`). Done while the model is built: looked for on the
 * way, in the middle of evaluating an expression, the scan evaluated calls
 * whose values depend on that expression, and what they got (an unknown
 * for the expression still being evaluated) stayed cached, so a value
 * depended on which question came first. */
void ol_grad_find_switches(ol_model *m);

/* Does the file's text spell `set_grad_enabled` anywhere? While the model
 * is built, names are evaluated from this file alone (other files'
 * summaries answer only afterwards), so a call can resolve to
 * torch.set_grad_enabled only where the text spells it: a file that does
 * not needs none of its calls evaluated to know it makes no such call. */
bool ol_grad_setters_spelled(const ol_model *m);

/* Is call n `torch.set_grad_enabled(...)` (or its spellings under
 * torch.autograd) made as a statement (an expression statement holds it)?
 * The one test that grad.c's scans of blocks and resolve.c's of the
 * module ask. */
bool ol_grad_setter_statement(ol_model *m, ol_nid call);
/* Does the file make any such statement? Looked for once per model, and
 * only in a file that spells the name (ol_grad_setters_spelled). */
bool ol_grad_any_setter_statements(ol_model *m);

/* Why ol_grad_disabled answers as it does at n, within this file. */
void ol_grad_explain(ol_model *m, ol_nid n, ol_grad_local *out);

/* The function whose callers decide the grad mode at n: n's function when no
 * context, statement, decorator or framework hook of the file decides it
 * (its callers in the file do, or it has none); else OL_NO_INDEX. */
uint32_t ol_grad_root(ol_model *m, ol_nid n);

/* The functions of the file that nothing in it calls and whose callers, in
 * other files, decide the grad mode in function fi: fi's callers in the
 * file are followed up to them. Fills *tops (malloc'd, *n entries) and
 * returns true when every path up from fi with autograd on ends at one of
 * them; false when the file itself runs fi with autograd on somewhere (a
 * context, a decorator, module code) or a path is too deep. */
bool ol_grad_tops(ol_model *m, uint32_t fi, uint32_t **tops, size_t *n);

/* Is the module answer for cls a guess (a base that cannot be seen, and a
 * forward())? Another file of the run may show that base. */
bool ol_class_module_guessed(ol_model *m, uint32_t cls);

/* Does class cls, or a base of this file it inherits from, define
 * `__call__`? Then calling an instance runs that, not nn.Module's. */
bool ol_class_defines_call(ol_model *m, uint32_t cls);
bool ol_class_is_lightning(ol_model *m, uint32_t cls);

/* A loop whose iterable is a loader (also through enumerate, tqdm, zip, ...). */
bool ol_loop_draws_batches(ol_model *m, uint32_t loop);
bool ol_is_optimizer_expr(ol_model *m, ol_nid expr);

/* A method that local class ci inherits from a class of another file of the
 * project (through the links): true with the base's dotted name and what
 * calling the method returns. */
bool ol_inherited_method(ol_model *m, uint32_t ci, ol_sym method, ol_sym *base_qual, ol_val *out);

/* Element `index` (key NULL) or `key` of the tuples or dicts function fi
 * returns; false when some return cannot be read element by element. */
bool ol_function_element(ol_model *m, uint32_t fi, int index, const char *key, ol_val *out);

/* The stores `name["key"] = value` into the dict literal that def binds,
 * found in its scope: writes up to cap (key string, value) node pairs and
 * returns how many, or (size_t)-1 when the dict may change otherwise (a
 * computed key, `update()`, passed to a call, held by another name, the
 * name bound again) or there are more. */
size_t ol_dict_stores(ol_model *m, uint32_t def, ol_nid *keys, ol_nid *values, size_t cap);

/* Least upper bound of two possible values. */
ol_val ol_val_join(ol_val a, ol_val b);

/* The argument the call node passes for parameter def d of its function, as
 * ol_callsite_arg: `shift` when the call fills no `self` (a method called on
 * an object, a class called for its `__init__`). */
ol_nid ol_call_arg_for(ol_model *m, ol_nid call, bool shift, const ol_def *d, bool *splat);

#endif
