/*
 * summary.h - what each function of a file does, in a form other files can
 * read: the whole-program facts of oomlint.
 *
 * Real training code spreads one loop over several functions and files: the
 * loss comes back from `self.model_step(batch)`, `evaluate()` lives in
 * utils.py, `batchify()` returns `data.to(device)`, an AverageMeter's
 * `update(val)` does `self.sum += val * n`. A summary records, per function
 * and method:
 *   - what its return value is (kind, whether it carries the autograd graph or
 *     is a loss), also element by element for returned tuples and dicts, so
 *     `loss, aux = step(batch)` keeps `aux` apart from `loss`, and a helper
 *     returning `loss.item(), acc` hands back a Python number;
 *   - whether it runs a model's forward with autograd on, calls `.eval()`,
 *     `.train()`, `zero_grad()`, an optimizer step or `backward()` (also
 *     through the local functions it calls: a fixed point within the file);
 *   - whether it returns a tensor it moved to a device;
 *   - which parameters it adds or appends into state that outlives the call
 *     (`self.sum += val * n`, `self.vals.append(v)`, `self.d[k] = v`, a global
 *     list, a container passed in), which it indexes batch by batch, and
 *     which reach code that raises on a CUDA tensor (`json.dump(preds)`).
 * Classes record whether they are nn.Modules; module-level imports are kept
 * so that names re-exported by a package's __init__.py can be followed.
 *
 * A summary depends on its own file only, so it can be computed before any
 * other file is read and published at once (project.h). Rules then read the
 * summaries of the functions their file calls: through the model's links
 * (eval.c asks them for calls it cannot see into) and through the questions
 * at the end of this header. Across files the facts reach one level: a
 * summary never uses another file's summary.
 */
#ifndef OL_SUMMARY_H
#define OL_SUMMARY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct ol_project;

/* A value as a summary keeps it: a kind (ol_vkind) and OL_VF_* flags. */
typedef struct ol_sum_val {
    uint8_t kind;
    uint8_t flags;
} ol_sum_val;

/* One element of a returned tuple (index >= 0) or dict (key). */
typedef struct ol_sum_elem {
    const char *key;
    int16_t index;
    ol_sum_val val;
} ol_sum_elem;

enum { OL_STORE_ADD = 1, OL_STORE_COLLECT = 2 };
#define OL_INTO_SELF 0xFEu   /* the object the method was called on */
#define OL_INTO_GLOBAL 0xFFu /* a module-level name */

/* A parameter kept beyond the call: added into a running total, or
 * collected into a list or dict. */
typedef struct ol_sum_store {
    uint8_t param;    /* parameter position (self is 0 in a method) */
    uint8_t into;     /* OL_INTO_SELF, OL_INTO_GLOBAL, or the position of the parameter holding the container */
    uint8_t how;      /* OL_STORE_ADD or OL_STORE_COLLECT */
    const char *what; /* the statement that keeps it (shortened), for messages */
} ol_sum_store;

#define OL_SUM_MAX_PARAMS 32

typedef struct ol_fn_summary {
    const char *name;     /* "evaluate", "AverageMeter.update", "main.step" (nested); NULL for lambdas */
    ol_sum_elem *elems;
    const char **params;  /* their names, for keyword arguments (one text per name in a file); NULL when none */
    ol_sum_store *stores;
    uint32_t facts;       /* OL_FN_* */
    uint32_t param_sliced; /* bit i: parameter i is cut into a batch (`source[i:i + n]`): per call */
    uint32_t param_batched; /* bit i: the function itself draws batch after batch from parameter i */
    uint32_t param_host;  /* bit i: parameter i reaches code that raises on a CUDA tensor (hostuse.h) */
    ol_sum_val ret;       /* the return value, all returns joined */
    uint8_t elem_count;
    uint8_t param_count;  /* positional parameters, self included */
    bool bound;           /* a method: the receiver fills parameter 0 */
    uint8_t store_count;
} ol_fn_summary;

typedef struct ol_class_summary {
    const char *name;
    bool is_module;       /* an nn.Module (also through local bases) */
    bool module_guess;    /* is_module only because a base is unseen and it defines forward() */
    bool has_call;        /* defines __call__ (also through local bases) */
    bool is_lossfn;       /* a module named like a loss (`...Loss`, `...Criterion`) */
    bool host_only;       /* its instances hold host data only (ol_class_holds_host_data) */
    size_t base_count;
    const char **bases;   /* bases defined in the same file, for inherited methods */
    size_t ext_base_count;
    const char **ext_bases; /* bases imported from elsewhere, by qualified name (`pkg.base.Task`) */
} ol_class_summary;

/* A module-level import: `bound` names `qual` (dotted; relative ones keep
 * their leading dots). */
typedef struct ol_sum_import {
    const char *bound;
    const char *qual;
} ol_sum_import;

/* A `torch.save` of the file, as a load in another file needs it: what
 * was saved (a dict literal with these string keys, a literal that has no
 * string keys, or something else), whether it can hold a GPU tensor, and
 * the file-name literals of its path (`"feats.pth"`). */
enum { OL_SAVE_OTHER = 0, OL_SAVE_DICT = 1, OL_SAVE_UNKEYED = 2 };
typedef struct ol_sum_save {
    uint8_t shape;
    bool host_only;
    uint8_t key_count;    /* OL_SAVE_DICT: its keys */
    uint8_t file_count;
    const char **keys;
    const char **files;
} ol_sum_save;

/* A call this file makes of a function or method that may be defined in
 * another file of the run, with the grad mode it runs in: the callee's file
 * reads them to know how the run calls it (`dynamic_infer()` of utils.py
 * called only under `torch.no_grad()` in the scripts; `validate()` of a base
 * trainer called with autograd on by a subclass in another file). `qual` is
 * what the callee names from this file: an imported name's dotted name
 * (`pkg.utils.infer`, `.utils.infer`), or for `self.method()` of a class
 * whose method comes from a base of another file, that base's dotted name
 * and the method (`pkg.base.Trainer.validate`). A method's call of its own
 * object is also recorded, as OL_OWN_CALL, its class and the method
 * (`self:Runner.train_step`), for subclasses in other files that define the
 * method (ol_run_callers_at). One record per qual and grad mode. */
#define OL_OWN_CALL "self:"
/* A call of a method on a value whose class the calling file cannot tell
 * (a parameter, a value made by `eval()` or a factory), when the method's
 * name is distinctive (ol_distinctive_method): also recorded by the name
 * alone, as OL_ANY_CALL and the method (`any:multi_scale_inference`), for a
 * method that no call of the run reaches by its class
 * (ol_project_visit_any_calls). */
#define OL_ANY_CALL "any:"
/* A method name distinctive enough to stand for the one class of the run
 * that defines it (`forward_test_wikikg`, not `update` or `predict`): an
 * underscore and ten characters or more, not a special method. */
bool ol_distinctive_method(const char *name);
typedef struct ol_sum_call {
    const char *qual;
    const char *name; /* its last part */
    const char *root; /* autograd on at the call, and decided by the callers in other files of this
                       * function of the file (its name as in ol_fn_summary), which nothing here
                       * calls; NULL otherwise */
    const char *caller; /* the calling function (its name as in ol_fn_summary); NULL at module level */
    const char *args;   /* the project classes of the instances it passes: "0=pkg.Predictor;loader=pkg.Loader;"
                         * (positions count the arguments written); NULL when none */
    uint32_t line;    /* of the first such call in its file, 1-based */
    bool grad_off;    /* autograd is off at the call (a context, a decorator, the callers of this file) */
    uint8_t often;    /* how often the call runs, as its file shows it (ol_often) */
    bool gpu;         /* the calling file puts data on an accelerator (hardware.h) */
    uint8_t use;      /* what the calling code does with the result (OL_USE_*, ask.h) */
} ol_sum_call;

/* The saves of a file, and its calls of other files' functions. Shared by
 * reference count: the project keeps them when it drops the rest of the
 * summary for its budget (they are small, and a load, or a function's
 * callers, may ask about every file of the run). */
typedef struct ol_file_saves {
    atomic_int refs;
    ol_arena arena;
    size_t count;
    ol_sum_save *items;
    size_t call_count;
    ol_sum_call *calls;
} ol_file_saves;

void ol_file_saves_retain(ol_file_saves *s);
void ol_file_saves_release(ol_file_saves *s);

/* The summary of one file. Immutable once built; shared by reference count
 * between the project store and the files that read it. */
typedef struct ol_file_summary {
    atomic_int refs;
    ol_arena arena;
    ol_fn_summary *fns;           /* one per function of the model, by function index */
    size_t fn_count;
    uint32_t *fn_order;           /* indices of named functions, sorted by name */
    size_t named_count;
    ol_class_summary *classes;    /* sorted by name */
    size_t class_count;
    ol_sum_import *imports;       /* sorted by bound name */
    size_t import_count;
    ol_file_saves *saves;         /* its torch.save calls; NULL when it has none */
    size_t bytes;                 /* the memory it holds, for the project's budget */
} ol_file_summary;

/* Builds the summary of a model's functions and classes (one reference,
 * owned by the caller). Reads only this file: m->links must not answer
 * while it runs (ol_xref_begin sees to that). */
ol_file_summary *ol_summarize(ol_model *m);
/* An empty summary (a file that could not be read or parsed). */
ol_file_summary *ol_file_summary_empty(void);
void ol_file_summary_retain(ol_file_summary *s);
void ol_file_summary_release(ol_file_summary *s);

/* Lookups by name; NULL when absent. `qualname` is "f" or "Cls.method"
 * (methods are also found through bases defined in the same file). */
const ol_fn_summary *ol_summary_function(const ol_file_summary *s, const char *qualname);
const ol_class_summary *ol_summary_class(const ol_file_summary *s, const char *name);
const ol_sum_import *ol_summary_import(const ol_file_summary *s, const char *bound);

/* ---- reading summaries while linting a file --------------------------------- */

/* The cross references of one file being linted: its own summary, the run's
 * project store (NULL when the file is linted alone) and a cache of the
 * names it resolved. Installs itself as the model's links. */
typedef struct ol_xref ol_xref;

/* Summarizes the model, publishes the summary to the project (as file
 * `file`, when project is not NULL), then lets the model's questions see
 * other functions' facts. `worker` is passed to the project when a callee's
 * file must be processed first (see project.h). */
ol_xref *ol_xref_begin(ol_model *m, struct ol_project *project, size_t file, void *worker);
/* The same for a model whose file was summarized before, by an ol_xref that
 * has ended (its tree kept for the file's lint, lint.h, and the model
 * built again from it): `own` is that summary (a new reference is taken),
 * so nothing is summarized again. */
ol_xref *ol_xref_resume(ol_model *m, struct ol_project *project, size_t file, void *worker, ol_file_summary *own);
/* Detaches from the model and frees the cross references. */
void ol_xref_end(ol_xref *x);

/* The summary of the function a call runs: a function or method of this
 * file, or of another file of the run reached through its imports; NULL when
 * unknown. *cross_file says which. The pointer lives as long as the model's
 * links. */
const ol_fn_summary *ol_call_summary(ol_model *m, uint32_t ci, bool *cross_file);
/* Does a file of the run that this file imports import one of roots
 * (top-level package names), itself or through a file of the run it
 * imports (`import onmt.inputters` whose __init__.py imports
 * onmt.inputters.inputter, which imports torch)? False outside a run of
 * several files. */
bool ol_run_imports_root(ol_model *m, const char *const *roots);

/* The summary of the forward() a model's call runs (`model(x)`,
 * `self.model.forward(x)`) when another file of the run defines the
 * model's class; NULL when unknown. */
const ol_fn_summary *ol_forward_summary(ol_model *m, uint32_t ci);
/* The argument a call passes for parameter `param` of callee s, or OL_NONE. */
ol_nid ol_call_param_arg(ol_model *m, uint32_t ci, const ol_fn_summary *s, uint32_t param);
/* An argument a call keeps beyond itself, per its callee's summary. */
typedef struct ol_kept_arg {
    const ol_fn_summary *fn;
    const ol_sum_store *store;
    ol_nid arg;      /* the argument kept */
    ol_nid holder;   /* what keeps it, at the call: the receiver or an argument; OL_NONE for a global */
    bool cross_file;
} ol_kept_arg;
/* The arguments call ci keeps (`meter.update(loss)` when update does
 * `self.sum += val * n`); returns how many were written (at most cap). */
size_t ol_call_kept_args(ol_model *m, uint32_t ci, ol_kept_arg *out, size_t cap);

/* Calls fn with each save recorded by the files of the run (this file's
 * own first, with own set), as far as they are known: the other files are
 * those whose text calls a `save(`, summarized first where they were not
 * yet. Returns false, calling nothing, outside a run of several files. */
typedef void (*ol_save_visitor)(void *ctx, bool own, const ol_sum_save *save);
bool ol_visit_run_saves(ol_model *m, ol_save_visitor fn, void *ctx);

/* May a file of the run (this one included) spell one of the n words
 * (ol_project_spells_any)? -1 outside a run of several files. */
int ol_run_spells_any(ol_model *m, const char *const *words, size_t n);

/* How the other files of the run call function fi of this model (a
 * function or method of the module or a class, not a nested one): how many
 * of their call records run it with autograd on (*grad_on) and off
 * (*grad_off). Every file of the run is summarized first, as for saves.
 * Returns false, counting nothing, outside a run of several files. */
bool ol_run_callers(ol_model *m, uint32_t fi, size_t *grad_on, size_t *grad_off);
/* The same, with calls as evidence: sites[0] the first with autograd on,
 * sites[1] the first with it off, sites[2] the one that runs most often
 * (file SIZE_MAX when there is none). `through`: autograd is on at the call
 * itself, and the callers of its own function decided (followed into
 * further files). */
typedef struct ol_run_site {
    size_t file;       /* the project's index of the calling file */
    const char *path;  /* its path (the project's, absolute), or NULL */
    uint32_t line;
    uint8_t often;     /* ol_often at the call */
    bool through;
} ol_run_site;
bool ol_run_callers_at(ol_model *m, uint32_t fi, size_t *grad_on, size_t *grad_off, ol_run_site sites[3]);

/* The calls of function fi in the other files of the run, with what each
 * calling function does with the result: up to cap of them in out (path
 * and caller malloc'd, for ol_run_uses_free); returns how many were
 * written. Every file of the run is summarized first, as for saves. */
typedef struct ol_run_use {
    char *path;        /* the calling file, as the project names it */
    uint32_t line;
    uint8_t use;       /* OL_USE_* */
    char *caller;      /* the calling function, or NULL at module level */
} ol_run_use;
size_t ol_run_call_records(ol_model *m, uint32_t fi, ol_run_use *out, size_t cap);
void ol_run_uses_free(ol_run_use *uses, size_t n);

/* Does a file of the run that puts data on an accelerator call one of this
 * file's functions, methods or classes? True with the first such call in
 * *site and the name it calls in *what. False outside a run of several files. */
bool ol_run_gpu_user(ol_model *m, ol_run_site *site, const char **what);

/* A method call on an object whose class the file does not show
 * (`self.task.train_step(...)`, the task handed in): the summary of the one
 * method `method` that classes of the other files of the run define whose
 * names contain `hint` (`task` -> `TranslationTask`), case aside; NULL when
 * none or several different ones do. *cls_out and *path_out name the class
 * and its file. */
const ol_fn_summary *ol_run_method_by_hint(ol_model *m, const char *hint, const char *method, const char **cls_out,
                                           const char **path_out);

/* The summary of function fi of this model, or NULL outside a lint run. */
const ol_fn_summary *ol_function_summary(ol_model *m, uint32_t fi);

/* An ol_val from its summarized form (kind and flags). */
static inline ol_val ol_sum_to_val(ol_sum_val v)
{
    ol_val r = {v.kind, v.flags, 0, 0};
    return r;
}

#endif
