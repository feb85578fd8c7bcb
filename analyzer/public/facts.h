/*
 * facts.h - higher-level questions about a training script, answered from
 * the semantic model and shared by several rules:
 *
 *   - which calls run backward, step an optimizer, zero gradients, or run a
 *     model's forward pass (and for which optimizer: GANs have several);
 *   - how long an accumulator or collection lives: does it outlive the
 *     iterations of a loop that draws batches, or is it reset inside it?
 *   - the calls inside a subtree, found by range in the pre-order call list.
 *
 * Everything here is computed on demand from the model (model.h, eval.c);
 * nothing walks the tree from scratch.
 *
 * In analyzer/public/, the rules' side of the engine: this half declares
 * what rules may use; the engine's own declarations of the same part are
 * in analyzer/facts.h, which includes this one. Rules are compiled with
 * analyzer/public/ alone on their include path.
 */
#ifndef OL_PUBLIC_FACTS_H
#define OL_PUBLIC_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "eval.h"
#include "steps.h"

/* ol_same_text, ol_mentions, ol_text_hash (names.c) and ol_calls_in (model.c)
 * are declared in model.h: the layers below the facts use them too. */

/* The optimizer an optimizer-step call steps (`opt.step()`,
 * `scaler.step(opt)`), or OL_NONE (`scheduler.step()`, `env.step()`). */
ol_nid ol_step_optimizer(ol_model *m, uint32_t call);
/* The object whose gradients a zero_grad-like call clears (`opt.zero_grad()`,
 * `model.zero_grad()`), or OL_NONE. */
ol_nid ol_zero_grad_target(ol_model *m, uint32_t call);
/* Every module whose parameters an optimizer was built over
 * (`Adam(list(G.parameters()) + list(D.parameters()))` -> G, D); writes at
 * most cap to out and returns the count. */
size_t ol_optimizer_modules(ol_model *m, ol_nid optimizer_expr, ol_nid *out, size_t cap);

/* ---- accumulators ---------------------------------------------------------- */

typedef struct ol_accumulator {
    ol_nid target;   /* the full target: total, self.total, stats["loss"] */
    ol_nid holder;   /* identifier or self-attribute whose binding matters */
    bool is_attr;    /* holder is self.<attr> */
    bool is_item;    /* target is holder[...] */
} ol_accumulator;

/* Describes the accumulator an expression names; false when it is not one
 * we can follow (a call result, an attribute of another object, ...). */
bool ol_accumulator_of(ol_model *m, ol_nid target, ol_accumulator *acc);
/* The innermost loop that draws batches and whose iterations the
 * accumulator outlives (it is not reset inside), seen from statement stmt;
 * OL_NO_INDEX when none. */
uint32_t ol_accumulator_outlived_loop(ol_model *m, const ol_accumulator *acc, ol_nid stmt);
/* Is stmt in a per-batch framework hook (Lightning's training_step) with an
 * attribute accumulator that outlives the call? */
bool ol_accumulator_in_step_hook(ol_model *m, const ol_accumulator *acc, ol_nid stmt);

/* Is the buffer `holder` (`self.data`, or a local list), filled at stmt, one
 * that a backward consumes and that is then cleared: a function (a method of
 * the same class for an attribute, else stmt's own) iterates it or
 * backwards through it, calls backward(), and empties or rebinds it? REINFORCE
 * keeps each step's log-probability this way until the episode ends. */
bool ol_buffer_backwarded(ol_model *m, ol_nid holder, ol_nid stmt);

/* Does `holder` (an accumulator expression; OL_NONE for a module-level name)
 * keep what it holds across the iterations of a loop that draws batches
 * around stmt, or across calls of Lightning's training_step? */
bool ol_holder_outlives_batches(ol_model *m, ol_nid holder, ol_nid stmt);

/* ---- training events ---------------------------------------------------------- */

typedef enum ol_event_kind {
    OL_EV_BACKWARD,
    OL_EV_STEP,      /* target: the optimizer */
    OL_EV_ZERO,      /* target: what zero_grad() was called on (optimizer or module) */
    OL_EV_ZERO_ALL,  /* p.grad = None, p.grad.zero_(): clears whatever it loops over */
} ol_event_kind;

typedef struct ol_event {
    ol_event_kind kind;
    uint32_t call;   /* the call (OL_NO_INDEX for assignments) */
    ol_nid node;     /* the call or assignment */
    ol_nid site;     /* where it happens in the region: itself, or the call of a
                      * local function that does it */
    ol_nid target;
} ol_event;

typedef OL_VEC(ol_event) ol_event_vec;

/* The same events, computed once per region and kept by the model (rules
 * ask about the loop around each of its calls: copying or recomputing the
 * loop's events each time grows with the square of the loop), with what
 * rules look up in them. Valid until ol_model_free. */
typedef struct ol_region_events {
    ol_event_vec events;
    bool has_backward, has_step;
    OL_VEC(uint32_t) zeros;     /* indexes of OL_EV_ZERO and OL_EV_ZERO_ALL events */
    OL_VEC(uint32_t) backwards; /* indexes of OL_EV_BACKWARD events */
    OL_VEC(uint32_t) steps;     /* indexes of OL_EV_STEP events, by their call (ascending) */
} ol_region_events;

const ol_region_events *ol_events_of(ol_model *m, ol_nid region);
/* The index of the step event of `call` in re, or re->events.len. */
size_t ol_events_step_of(const ol_region_events *re, uint32_t call);

/* Node texts compared as ol_same_text does (whitespace ignored), hashed:
 * "is any of these expressions spelled like x" in about constant time. */
typedef struct ol_text_entry {
    uint64_t hash;
    ol_nid node;
} ol_text_entry;
typedef struct ol_text_index {
    OL_VEC(ol_text_entry) entries; /* sorted by hash once sealed */
    bool sealed;
} ol_text_index;

void ol_text_index_add(ol_text_index *ix, const ol_tree *t, ol_nid n);
/* Is a node spelled like n in the index? (Seals it on first use.) */
bool ol_text_index_has(ol_text_index *ix, const ol_tree *t, ol_nid n);
void ol_text_index_free(ol_text_index *ix);
/* Does zeroing `zero_target` clear the gradients `optimizer` steps with?
 * The same optimizer, or the module it was built over (when that module is
 * not known, any module counts). */
bool ol_zero_clears(ol_model *m, ol_nid zero_target, ol_nid optimizer);

/* Could `optimizer` update parameters of `module`: it was built over the
 * module, a part of it (`model.fc.parameters()`), or something that
 * contains it, or what it holds is not known? */
bool ol_optimizer_may_train(ol_model *m, ol_nid optimizer, ol_nid module);

/* A loss that is one number: produced by a loss function, without
 * reduction="none" in the call that made it. */
bool ol_is_scalar_loss(ol_model *m, ol_nid value, ol_val v);
/* A primary expression a method call can follow without parentheses. */
bool ol_is_primary(const ol_tree *t, ol_nid n);
/* Adds the edits that call `suffix` (".item()", ".detach()") on expr,
 * wrapping it in parentheses when it is not primary. */
struct ol_fix;
void ol_fix_call_on(struct ol_fix *fix, const ol_tree *t, ol_nid expr, const char *suffix);

/* Does the loop surely run no model: every call in it a builtin, a torch
 * function, a method of tensors, containers, strings or loggers, or a
 * function of the file whose calls are all such (two levels deep)? What it
 * cuts out of a tensor is then stored or rearranged, not fed to a model
 * batch by batch (a replay buffer filled group by group). */
bool ol_loop_runs_no_model(ol_model *m, uint32_t loop);

/* Does a statement after n leave the iteration (continue, break, return,
 * raise) before `later` runs? Looked for in n's block and each enclosing
 * block up to `stop` (a loop or a function body), only among statements
 * that come before `later`: `if not finite: opt.zero_grad(); continue`
 * skips the batch, it does not clear gradients that a later step in the
 * same iteration applies. `later` may be OL_NONE (no bound). */
bool ol_leaves_before(const ol_tree *t, ol_nid n, ol_nid later, ol_nid stop);
/* Is n in the body of an except clause below `stop` (OL_NONE: anywhere)?
 * A handler runs when something failed, not every iteration. */
bool ol_in_handler(const ol_tree *t, ol_nid n, ol_nid stop);

/* How often the code at n runs, as far as this file shows (ask.h's
 * ol_how_often adds what the run's callers show): the loops around it (one
 * that draws batches or runs a model each iteration: per step; one around
 * such a loop: per epoch), then its function: `__init__` once, a forward or a
 * per-batch hook per step, otherwise as often as its most frequent call site
 * in the file (a few levels up), or per call when the file does not call it. */
void ol_often_explain(ol_model *m, ol_nid n, ol_often_local *out);
/* The condition of the `if` between n and the loop (or block) top that makes
 * n run only every so many iterations (`if step % every == 0:`, `if not
 * it % 100:`), or OL_NONE. */
ol_nid ol_periodic_branch(const ol_tree *t, ol_nid n, ol_nid top);

/* Does the file import PyTorch or a library built on it (or `from x import
 * *`, which may bring it, or a module of the run that imports one)? Without one there is no autograd graph: a call
 * named like a model is something else (a Keras layer, a numpy course's
 * hand-written network with its own forward and backward). */
bool ol_imports_torch_family(ol_model *m);
/* The same, or an import of a module that is neither the standard library's
 * nor a known library without torch (numpy, pandas, matplotlib, scikit-learn,
 * TensorFlow, JAX, ...): a module of the project may bring torch in. */
bool ol_may_use_torch(ol_model *m);
/* Is the file another framework's code: it imports PaddlePaddle, TensorFlow,
 * Keras, JAX, MXNet, MindSpore, OneFlow, Jittor, MegEngine or Chainer and
 * nothing of PyTorch's family itself? Its `optimizer.step()`, `.cuda()` and
 * `load()` are that framework's, which the rules do not speak of. */
bool ol_other_framework(ol_model *m);

/* Local name bound to the torch module (`torch`, or `T` after `import torch
 * as T`) visible at n, or NULL. */
const char *ol_torch_alias(ol_model *m, ol_nid n);

#endif
