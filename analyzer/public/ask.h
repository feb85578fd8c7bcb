/*
 * ask.h - the door: the questions rules ask about the code, each answered in
 * one place for the whole run, with the evidence of its answer.
 *
 * A memory finding is only as right as the facts it stands on: is autograd
 * on where the model runs, does this code reach a GPU, what does this value
 * hold, how often does this line run, is this training, evaluation or test
 * code. Each question has one owner here, so two rules asking about the same
 * node get the same answer, and each answer looks as far as the run lets it:
 * the blocks and decorators around the node, the function's callers in this
 * file and in every other file of the run (their summaries, summary.h),
 * framework hooks, the devices the project names.
 *
 * Every question takes an optional ol_reasons: the places the answer rests
 * on, each with a short message ("called under `torch.no_grad()` from
 * `validate()` at eval.py:41"), and, when the answer rests on a guess (a
 * name's spelling, a base class the run does not show), what it guessed
 * from. A rule hands the reasons of the facts it used to its finding
 * (ol_diag_because), and every output shows them: the text output's notes,
 * JSON's evidence, SARIF's related locations and code flows, the language
 * server's related information.
 *
 * Rules include rule.h, which includes this; the whole door is declared in
 * analyzer/public/, the one folder of the engine on the rules' include
 * path, beside the rule-facing halves of the headers below it (the includes
 * here are theirs). The engine's own headers (eval.h, summary.h,
 * hardware.h, ...) are not on that path.
 */
#ifndef OL_ASK_H
#define OL_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "flows.h"
#include "eval.h"

/* ---- reasons ------------------------------------------------------------------ */

#define OL_REASONS_MAX 4

/* One fact an answer stands on. */
typedef struct ol_reason {
    ol_nid node;       /* in this file; OL_NONE when the fact is in another file */
    const char *path;  /* the other file, as the run names it (NULL: this file) */
    uint32_t line;     /* in `path`, 1-based */
    const char *text;  /* what it shows; lives as long as the model */
    bool step;         /* a step of a chain through calls (a caller, its caller...) */
} ol_reason;

typedef struct ol_reasons {
    ol_reason items[OL_REASONS_MAX];
    uint8_t len;
    const char *guess; /* NULL: read from the code; else what the answer guesses from */
} ol_reasons;

/* Adds the reasons to a finding as notes (and its guess as the finding's). */
void ol_diag_because(ol_diag *d, ol_model *m, const ol_reasons *why);
/* Adds a fact a rule established itself (the loop an accumulator outlives,
 * the container that keeps a value) at node, in this file. */
void ol_because(ol_reasons *why, ol_model *m, ol_nid node, const char *fmt, ...) OL_PRINTF(4, 5);

/* ---- is autograd on here? ------------------------------------------------------ */

/* Whether operations at node n record an autograd graph: the `with` blocks
 * and `set_grad_enabled` statements around it, its function's decorators,
 * framework hooks that run without grad (Lightning's validation, test and
 * predict steps and evaluation callbacks), and the function's callers, in
 * this file and in the other files of the run: a function every caller runs
 * under no_grad runs without it; one called with autograd on anywhere runs
 * with it. */
bool ol_grad_on(ol_model *m, ol_nid n, ol_reasons *why);

/* Does the model a forward call runs have a `forward()` (in another file of
 * the run) that runs without autograd (`@torch.no_grad()`)? Then it records
 * no graph. */
bool ol_forward_runs_without_grad(ol_model *m, uint32_t ci, ol_reasons *why);

/* The same, or through what it runs: a function of the file that does (a
 * method `self.cac_grad(out)` that calls torch.autograd.grad, a few calls
 * deep), or another file's function whose summary backwards or steps. The
 * reason names the call and the function it goes through. */
bool ol_call_computes_gradients(ol_model *m, uint32_t ci, ol_reasons *why);
/* The first call of region (a function's body, a loop, or 0 for the module;
 * its own code, not nested defs) after `after` and before `before` (each
 * OL_NONE for no bound) that computes gradients, or OL_NONE. */
ol_nid ol_gradient_call_in(ol_model *m, ol_nid region, ol_nid after, ol_nid before, ol_reasons *why);
/* Does the module forward call ci runs hold no parameter: a parameter-free
 * torch.nn module (`nn.Softmax()`, pooling, dropout), an image transform or
 * augmentation (kornia.augmentation, torchvision.transforms), a container of
 * such (`nn.Sequential(...)`), a class of the file that makes none? Applied
 * to data it records no graph of its own: not a model's forward. */
bool ol_call_runs_no_parameters(ol_model *m, uint32_t ci);
/* Does the optimizer `opt` step a container that may hold `model`: one
 * handed in by the caller (`SGD(trainable.parameters())`, trainable a
 * parameter: its caller may have put `model.get_feat_modules()` in it), or
 * one the code fills with a part of the model (`trainable.append(model.fc)`)?
 * Then the model is trained there, though the optimizer names it not. */
bool ol_optimizer_may_hold(ol_model *m, ol_nid opt, ol_nid model);
/* Is the model forward call ci runs frozen whole before it
 * (`model.eval().requires_grad_(False)`, `p.requires_grad = False` over all
 * of `model.parameters()`, or in its class's `__init__`), with inputs that
 * carry no graph? Then autograd records nothing there, no_grad or not. */
bool ol_forward_frozen(ol_model *m, uint32_t ci);

/* ---- does this run on a GPU? ------------------------------------------------------ */

typedef enum ol_gpu {
    OL_GPU_YES,    /* a CUDA or other accelerator device is chosen here, or by a file of the run that imports this one */
    OL_GPU_CPU,    /* every device the file names is the CPU */
    OL_GPU_NEVER,  /* no device is named, here or by a file of the run that imports this one */
} ol_gpu;

/* Can the code of this file put tensors on a GPU (or another accelerator)?
 * Answered per file. */
ol_gpu ol_runs_on_gpu(ol_model *m, ol_reasons *why);
/* Imports torch_xla and names no CUDA device: the tensors live on TPUs. */
bool ol_runs_on_xla_only(ol_model *m);

/* ---- what does this value hold? --------------------------------------------------- */

/* Does the value of expression e carry an autograd graph: a model's output
 * or a loss (also through the helpers and files it comes from), computed
 * where autograd is on? The reasons name where the graph is made and why
 * autograd is on there. */
bool ol_holds_graph(ol_model *m, ol_nid e, ol_reasons *why);
/* Does the program itself show that the name bound at stmt holds no graph
 * when it runs: a later use, reached by that binding, turned into a NumPy
 * array without being detached (`mu.cpu().numpy()`, `feats.double().numpy()`)?
 * PyTorch raises on `.numpy()` of a tensor that requires grad, so code that
 * works never does it to one (the model it comes from has frozen parameters,
 * as a pickled detector or EMA copy often has). The `.numpy()` call, with a
 * reason, or OL_NONE. */
ol_nid ol_numpy_shows_no_graph(ol_model *m, ol_nid target, ol_nid stmt, ol_reasons *why);
/* For a value the evaluator says carries a graph, itself or in its elements
 * (a tuple of outputs): is autograd on where that graph is made? True when
 * the origin cannot be followed. The reasons name the origin and why
 * autograd is on there. */
bool ol_graph_made_with_grad(ol_model *m, ol_nid e, ol_reasons *why);
/* The call that makes the graph e carries (a forward, a loss), followed
 * through names, arithmetic, methods and the file's functions; OL_NONE when
 * e carries none or it cannot be followed. */
ol_nid ol_graph_origin(ol_model *m, ol_nid e);

/* Does e hold data read from disk or converted from an array or a table
 * (`torch.from_numpy(a)`, `np.load`, `pd.read_csv`, `frame.values`,
 * `load_dataset(...)`), directly or through the names it uses? */
bool ol_value_read_from_data(ol_model *m, ol_nid e);
/* Is e made up by a factory or a literal (buffers, noise, constants:
 * `torch.zeros(...)`, `torch.randn(...)`), not data? */
bool ol_value_made_up(ol_model *m, ol_nid e);
/* Does a subscript index draw a batch (`X[i:i + bs]`, a permutation's
 * slice, random indices drawn in the loop)? */
bool ol_index_draws_batch(ol_model *m, ol_nid index);
/* The base of a method chain: `torch.from_numpy(a).float().cuda()` -> `torch.from_numpy(a)`. */
ol_nid ol_method_chain_base(ol_model *m, ol_nid e);
/* Is e's value the result of call, possibly followed by more method calls? */
bool ol_method_chain_holds(ol_model *m, ol_nid e, ol_nid call);
/* Does this call move what it is given to the GPU (`.cuda()`, `.to(dev)`, `device=dev`)? */
bool ol_call_moves_to_gpu(ol_model *m, const ol_call *c);
/* Is the name e a batch the loop around it leaves in host memory: bound only
 * by the target of a loop that draws batches from a loader, not moved since,
 * while the loop moves another item of the same batch to the GPU
 * (`for x, y in loader: x = x.to(device)`, y then)? The loader hands out host
 * tensors, and this one stays there. The reasons name the sibling's move. */
bool ol_batch_left_on_host(ol_model *m, ol_nid e, ol_reasons *why);
/* Is e a device held in a variable (`device`, `args.device`, `x.device`)? */
bool ol_names_device_variable(ol_model *m, ol_nid e);
/* Does the file itself choose an accelerator: CUDA named, or data moved to a
 * device variable not bound to the CPU (not a framework that does it)? */
bool ol_file_chooses_device(ol_model *m);
/* Does the call build a dataset, or a DataLoader over one: a class of
 * `torch.utils.data` or `torchvision.datasets`, a class of the file derived
 * from one, or one with items by index and a length (`__getitem__` and
 * `__len__`) that is not a module? A class of elsewhere named `...Dataset`
 * counts as a guess (why->guess). */
bool ol_call_builds_dataset(ol_model *m, ol_nid call, ol_reasons *why);
/* Is the class that holds method fn a Dataset, as ol_call_builds_dataset
 * reads a class? */
bool ol_method_of_dataset(ol_model *m, uint32_t fn, ol_reasons *why);

/* ---- what does this call do? ---------------------------------------------------------- */

/* A function or method of the project that a call runs, as its summary
 * describes it (in this file or another file of the run). */
typedef struct ol_callee {
    const char *name;          /* "evaluate", "Trainer.step" */
    uint32_t facts;            /* OL_FN_* (model.h) */
    bool bound;                /* a method: the receiver fills parameter 0 */
    bool cross_file;
    uint8_t param_count;
    const char **params;       /* their names */
    uint32_t param_sliced;     /* bit i: parameter i is cut into a batch per call */
    uint32_t param_batched;    /* bit i: the function draws batch after batch from parameter i */
    const void *summary;       /* the door's own */
} ol_callee;

bool ol_callee_of(ol_model *m, uint32_t ci, ol_callee *out);
/* The argument call ci passes for the callee's parameter `param`, or OL_NONE. */
ol_nid ol_callee_arg(ol_model *m, uint32_t ci, const ol_callee *callee, uint32_t param);

/* A method call on an object whose class the file does not show (`self.task
 * .train_step(...)`, the task a trainer is handed): the method of that name
 * of the one class of the run named for the receiver (`task` ->
 * `TranslationTask`), as its summary describes it. A guess from names: the
 * reasons get a step naming the class, and the guess. */
bool ol_callee_by_receiver_name(ol_model *m, uint32_t ci, ol_callee *out, ol_reasons *why);
/* Does what the callee returns carry the autograd graph: all of it (index
 * -1, key NULL), element `index` of the tuple it returns, or entry `key` of
 * its dict? */
bool ol_callee_returns_graph(const ol_callee *callee, int index, const char *key);

/* An argument a call keeps beyond itself (`meter.update(loss)` where update
 * does `self.sum += val * n`). */
typedef struct ol_kept {
    ol_nid arg;          /* the argument kept */
    ol_nid holder;       /* what keeps it at the call: the receiver or an argument; OL_NONE for a global */
    bool adds;           /* added into a running total */
    bool collects;       /* collected into a list or dict */
    const char *callee;  /* the function's name */
    const char *what;    /* the statement that keeps it, shortened */
    bool cross_file;
} ol_kept;

size_t ol_call_keeps(ol_model *m, uint32_t ci, ol_kept *out, size_t cap);
/* Does call ci hand its callee a value for which test holds: its receiver,
 * or an argument written at the call (a keyword's value; not a splat),
 * which are what ol_call_keeps can report as kept? Read from this file
 * alone: ask it first, since what the callee keeps may need the callers of
 * this file's functions in every file of the run (the class a parameter
 * holds). */
bool ol_call_hands(ol_model *m, uint32_t ci, bool (*test)(ol_model *m, ol_nid value));

/* ---- what does this load hold? ------------------------------------------------------- */

typedef enum ol_loader {
    OL_LOADER_NONE,
    OL_LOADER_TORCH,  /* torch.load, torch.serialization.load */
    OL_LOADER_URL,    /* a loader of a checkpoint from a URL that hands torch.load its map location */
} ol_loader;

/* Which loader a call's callee is. */
ol_loader ol_load_kind(ol_model *m, ol_nid callee);
/* Can the file a load reads (its path expression `path`) hold tensors on a
 * GPU, as far as the code shows? False when it is read as plain data or as
 * host data, holds only a scaler's or scheduler's state, or every writer
 * the run shows saves host data only. The reasons say what the load costs
 * where it is true. */
bool ol_load_holds_device_tensors(ol_model *m, uint32_t ci, ol_nid path, ol_reasons *why);
/* Does what the load returns feed a data set rather than a model: handed,
 * through names, unpacking and moves, to a Dataset or DataLoader
 * (`TensorDataset(*torch.load(p))`, `MyDataset(data)` after `data =
 * torch.load(p)`; ol_call_builds_dataset), or loaded by a method of a
 * Dataset class (its `__init__` reading its shards), and never restored into
 * a model or used as one? The reasons name the Dataset. */
bool ol_load_feeds_dataset(ol_model *m, uint32_t ci, ol_reasons *why);
/* A map location that is a parameter of the load's function, defaulting to
 * None and handed straight to the load (`def load_ckpt(path,
 * map_location=None): return torch.load(path, map_location=map_location)`):
 * is it None at some call? True when a call of the function in this file
 * gives none (or None); false when every call gives one, nothing here calls
 * it (a library's loader leaves the choice to its callers), or the
 * parameter is replaced before the load. The reasons name the calls that
 * give none. */
bool ol_load_location_defaults_none(ol_model *m, uint32_t ci, ol_nid location, ol_reasons *why);
/* Weights PyTorch's model zoo publishes (download.pytorch.org). */
bool ol_load_published(ol_model *m, ol_nid url);
/* Is what the load returns only restored through `load_state_dict()`? */
bool ol_load_only_restores_state(ol_model *m, uint32_t ci);
/* A notebook of one process: its loads restore once, in the session that
 * saved the checkpoint. */
bool ol_load_in_one_session(ol_model *m);
/* A job of one process whose load is restored (`load_state_dict`) into
 * models that its function moves to the GPU only after the load, outside
 * any loop (`net.load_state_dict(torch.load(p))`, then `net.cuda()`): the
 * checkpoint lands on a GPU that holds nothing of the model yet, a passing
 * copy, once. The reasons name the move. */
bool ol_load_precedes_move(ol_model *m, uint32_t ci, ol_reasons *why);
/* A load in a file that names no device at all, of a run of several files
 * that saves nothing that may be on a device: the file comes from outside
 * the run (released or converted weights), and whatever it holds lands at
 * most once, before anything here moves the model. The reasons say so. */
bool ol_load_from_outside_run(ol_model *m, uint32_t ci, ol_reasons *why);
/* May e be None: the literal, a conditional with a None branch, a local one
 * of whose reaching bindings is one of these. */
bool ol_value_may_be_none(ol_model *m, ol_nid e);

/* ---- how often does this run? ----------------------------------------------------- */

/* ol_often (model.h): once, per call, per epoch, per step. The loops around
 * n and its function's callers in this file decide, and, for a function
 * nothing here calls, the call sites of the run: a helper that another
 * file's batch loop calls runs per step. */
ol_often ol_how_often(ol_model *m, ol_nid n, ol_reasons *why);

/* Does each iteration of loop li (an index into m->loops) build the model
 * it runs: a new model bound in the iteration by a constructor, a factory
 * or a copy, then run (a batch-size search, a sweep over configurations,
 * folds)? Its iterations are trials, not steps; ol_how_often answers
 * OL_PER_EPOCH for what runs in one. A loop that draws batches from a loader
 * never is. */
bool ol_loop_runs_trials(ol_model *m, uint32_t li, ol_reasons *why);

/* Is function fi a closure an optimizer step runs (`optimizer.step(closure)`,
 * the closure defined here or returned by a function of the file that makes
 * it) where that step runs in a loop? Returns the loop, or OL_NONE; the
 * reasons name the step call. An optimizer runs its closure once or more per
 * step: what it keeps, it keeps every iteration. */
ol_nid ol_closure_stepped_in_loop(ol_model *m, uint32_t fi, ol_reasons *why);

/* Does n run only in a debugging branch (`if args.debug:`, a function or
 * class named for it)? */
bool ol_only_when_debugging(ol_model *m, ol_nid n);

/* ---- what kind of code is this? --------------------------------------------------- */

typedef enum ol_code_kind {
    OL_CODE_OTHER,
    OL_CODE_TRAINING,   /* computes gradients (backward(), an optimizer step, torch.autograd.grad, itself or
                         * through the functions it calls), is a framework's training step, or a caller
                         * backwards through what it returns or hands it on to code that trains (in this
                         * file, or per the run's call records): whatever its name says */
    OL_CODE_TEST,       /* a pytest test or fixture, a unittest case, wherever it lives */
} ol_code_kind;

ol_code_kind ol_code_kind_at(ol_model *m, ol_nid n, ol_reasons *why);
/* Does a model built at n stay in code that trains nothing: a file with no
 * call of `backward`, `zero_grad`, `step`, `grad`, `fit`, `manual_backward`
 * or of anything named for training or an optimizer (`model.train()`,
 * `train_epoch(...)`, `make_optimizer(...)`), no `training_step`, and n's
 * statement binds it to a name its function does not return (nothing hands
 * the model to a trainer elsewhere)? A test, demo, sampling or scoring
 * script. The reasons say so. */
bool ol_wrapper_stays_untrained(ol_model *m, ol_nid n, ol_reasons *why);

/* Is `module` (a module expression: `model`, `self.model_`) in evaluation
 * mode at `at`: the last `.eval()`/`.train()` on it before `at` in the
 * function is `.eval()`, or, for an attribute of self, the class's methods
 * put it in evaluation mode (in `__init__`, or where it is bound:
 * `self.model_ = model.eval().to(device)`) and none switches it back or
 * computes gradients? Returns the `.eval()` call, or OL_NONE. */
ol_nid ol_module_in_eval_mode(ol_model *m, ol_nid module, ol_nid at, ol_reasons *why);
/* The calls of function fi in the other files of the run, with what each
 * calling function does with the result: up to cap of them in out, how many
 * written returned (none outside a run of several files). The texts live
 * as long as the model. */
typedef struct ol_caller_use {
    const char *path;   /* the calling file, as the run names it */
    uint32_t line;
    unsigned use;       /* OL_USE_* */
    const char *caller; /* the calling function ("validate", "Trainer.step"); NULL at module level */
    bool test;          /* the caller is test code: a test module, a `test_*` function, a `Test*` class */
} ol_caller_use;
size_t ol_run_caller_uses(ol_model *m, uint32_t fi, ol_caller_use *out, size_t cap);
/* Adds such a call, in its file, as a step of a finding's reasons. */
void ol_because_caller(ol_reasons *why, ol_model *m, const ol_caller_use *use, const char *fmt, ...) OL_PRINTF(4, 5);
/* An nn.Module class, also through a base class of another file of the
 * run (`class Learned(GaussianDiffusion)`, GaussianDiffusion a module in
 * diffusion.py: its summary says so). */
bool ol_class_is_module_in_run(ol_model *m, uint32_t ci);

/* ---- the project ------------------------------------------------------------------ */

/* The lowest torch version the project of the file at path declares
 * (major * 100 + minor), or 0 when it declares none. */
unsigned ol_project_torch_floor(const char *path);

#endif
