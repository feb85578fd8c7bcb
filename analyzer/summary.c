/*
 * summary.c - the cross references a file being linted reads the run's
 * per-function summaries through (the model's links), and the summaries'
 * ownership. See summary.h; summarize.c builds the summaries.
 */
#include "summary.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "flows.h"
#include "hardware.h"
#include "hostuse.h"
#include "moves.h"
#include "project.h"
#include "saves.h"

/* ---- reference counting and lookups ------------------------------------------------ */

static ol_file_summary *summary_new(void)
{
    ol_file_summary *s = ol_xcalloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    return s;
}

ol_file_summary *ol_file_summary_empty(void)
{
    return summary_new();
}

void ol_file_summary_retain(ol_file_summary *s)
{
    atomic_fetch_add(&s->refs, 1);
}

void ol_file_summary_release(ol_file_summary *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    ol_arena_free(&s->arena);
    free(s->fns);
    free(s->fn_order);
    free(s->classes);
    free(s->imports);
    ol_file_saves_release(s->saves);
    free(s);
}

void ol_file_saves_retain(ol_file_saves *s)
{
    atomic_fetch_add(&s->refs, 1);
}

void ol_file_saves_release(ol_file_saves *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    ol_arena_free(&s->arena);
    free(s);
}

static const ol_fn_summary *find_fn(const ol_file_summary *s, const char *name, size_t len)
{
    size_t lo = 0, hi = s->named_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *n = s->fns[s->fn_order[mid]].name;
        int c = strncmp(n, name, len);
        if (c == 0 && n[len] != '\0')
            c = 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->named_count) {
        const char *n = s->fns[s->fn_order[lo]].name;
        if (strncmp(n, name, len) == 0 && n[len] == '\0')
            return &s->fns[s->fn_order[lo]];
    }
    return NULL;
}

const ol_class_summary *ol_summary_class(const ol_file_summary *s, const char *name)
{
    size_t lo = 0, hi = s->class_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->classes[mid].name, name);
        if (c == 0)
            return &s->classes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const ol_sum_import *ol_summary_import(const ol_file_summary *s, const char *bound)
{
    size_t lo = 0, hi = s->import_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->imports[mid].bound, bound);
        if (c == 0)
            return &s->imports[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const ol_fn_summary *method_of(const ol_file_summary *s, const char *cls, const char *method, int depth)
{
    if (depth > 8)
        return NULL;
    ol_buf b = {0};
    ol_buf_printf(&b, "%s.%s", cls, method);
    const ol_fn_summary *f = find_fn(s, b.data, b.len);
    ol_buf_free(&b);
    if (f)
        return f;
    const ol_class_summary *c = ol_summary_class(s, cls);
    for (size_t i = 0; c && i < c->base_count; i++)
        if ((f = method_of(s, c->bases[i], method, depth + 1)))
            return f;
    return NULL;
}

const ol_fn_summary *ol_summary_function(const ol_file_summary *s, const char *qualname)
{
    const ol_fn_summary *f = find_fn(s, qualname, strlen(qualname));
    if (f)
        return f;
    const char *dot = strrchr(qualname, '.');
    if (!dot)
        return NULL;
    char *cls = ol_xstrndup(qualname, (size_t)(dot - qualname));
    f = method_of(s, cls, dot + 1, 0);
    free(cls);
    return f;
}

/* ---- cross references ---------------------------------------------------------------- */

typedef struct target {
    ol_sym qual;
    bool resolved;            /* looked up (found or not) */
    const ol_file_summary *file;
    const ol_fn_summary *fn;
    const ol_class_summary *cls;
    size_t file_index;        /* the project's index of file */
    int8_t module;            /* cls is an nn.Module through its bases: -1 not asked yet */
} target;

struct ol_xref {
    ol_links links;
    ol_model *m;
    ol_file_summary *own;
    ol_project *project;
    size_t file;
    void *worker;
    bool answering;           /* false while the file's own summary is built */
    size_t asked;             /* questions that went unanswered meanwhile */
    OL_VEC(target) targets;   /* resolved names */
    uint32_t *target_of;      /* by qual (an interned name): its index in targets + 1, 0 when not asked */
    size_t target_of_cap;
    OL_VEC(ol_file_summary *) held;
    OL_VEC(size_t) held_files;
    OL_VEC(char *) stars;     /* modules of `from module import *` at module level */
    OL_VEC(uint64_t) param_keys; /* (def << 1 | known): parameters whose run class was asked */
    OL_VEC(ol_sym) param_classes; /* their class, 0 when the run shows none (or several) */
    const char *const *roots_asked; /* the roots ol_run_imports_root last answered for, once answering */
    bool roots_found;               /* and its answer */
    /* what each call of the model runs (summary_of_call), once answering:
     * asked by several rules of every call, and answered the same each time */
    struct call_memo *calls;
    /* links_loss_part's answers by (arity, index), 2 + the answer; 0 when not asked */
    int8_t loss_parts[8][8];
};

typedef struct call_memo {
    const ol_fn_summary *fn;
    uint8_t state; /* 0: not asked yet; 1: asked; 2: asked, and fn is another file's */
} call_memo;

static const ol_file_summary *hold(ol_xref *x, size_t file)
{
    for (size_t i = 0; i < x->held_files.len; i++)
        if (x->held_files.items[i] == file)
            return x->held.items[i];
    ol_file_summary *s = ol_project_acquire(x->project, file, x->worker);
    ol_vec_push(&x->held, s);
    ol_vec_push(&x->held_files, file);
    return s;
}

/* Follows what `qual` names from file `from` through the project: `at` is
 * given each file and rest it resolves to, and says whether it found what
 * it looks for (1), gives up (-1), or wants the name followed on through the
 * imports of that file (0: a name a package's __init__.py re-exports). */
typedef int (*qual_step)(ol_xref *x, size_t file, const ol_file_summary *s, const char *rest, void *ctx);

static bool follow_qual(ol_xref *x, size_t from, const char *qual, qual_step at, void *ctx)
{
    char *owned = NULL;
    int got = 0;
    for (int hop = 0; hop < 4 && got == 0; hop++) {
        size_t file;
        const char *rest;
        if (!ol_project_resolve(x->project, from, qual, &file, &rest))
            break;
        const ol_file_summary *s = file == x->file ? x->own : hold(x, file);
        if (!s || (got = at(x, file, s, rest, ctx)) != 0 || !*rest)
            break;
        const char *dot = strchr(rest, '.');
        size_t first = dot ? (size_t)(dot - rest) : strlen(rest);
        char *name = ol_xstrndup(rest, first);
        const ol_sum_import *imp = ol_summary_import(s, name);
        free(name);
        if (!imp)
            break;
        char *next = ol_xasprintf("%s%s", imp->qual, dot ? dot : "");
        free(owned);
        owned = next;
        qual = next;
        from = file;
    }
    free(owned);
    return got == 1;
}

static int target_at(ol_xref *x, size_t file, const ol_file_summary *s, const char *rest, void *ctx)
{
    target *tg = ctx;
    if (file == x->file || !*rest)
        return -1;
    if (!strchr(rest, '.')) {
        tg->fn = find_fn(s, rest, strlen(rest));
        tg->cls = tg->fn ? NULL : ol_summary_class(s, rest);
    } else {
        tg->fn = ol_summary_function(s, rest);
    }
    if (!tg->fn && !tg->cls)
        return 0;
    tg->file = s;
    tg->file_index = file;
    return 1;
}

/* Finds what `qual` names in the project, seen from file `from`, following
 * names a package re-exports (`from .resnet import ResNet` in __init__.py). */
static void resolve_at(ol_xref *x, size_t from, target *tg, const char *qual)
{
    follow_qual(x, from, qual, target_at, tg);
}

static void resolve(ol_xref *x, target *tg, const char *qual)
{
    resolve_at(x, x->file, tg, qual);
}

typedef bool (*class_test)(ol_xref *x, size_t file, const ol_file_summary *s, const ol_class_summary *cls,
                           int depth);

/* Does `test` hold for a base of class cls of file `file`: those of its own
 * file, and those it imports, followed file by file? */
static bool some_base(ol_xref *x, size_t file, const ol_file_summary *s, const ol_class_summary *cls, int depth,
                      class_test test)
{
    for (size_t i = 0; i < cls->base_count; i++) {
        const ol_class_summary *b = ol_summary_class(s, cls->bases[i]);
        if (b && b != cls && test(x, file, s, b, depth + 1))
            return true;
    }
    for (size_t i = 0; i < cls->ext_base_count; i++) {
        target tg = {0, true, NULL, NULL, NULL, 0, -1};
        resolve_at(x, file, &tg, cls->ext_bases[i]);
        if (tg.cls && tg.file && test(x, tg.file_index, tg.file, tg.cls, depth + 1))
            return true;
    }
    return false;
}

/* Does class cls define `__call__`, or a base of it, followed file by file? */
static bool calls_own(ol_xref *x, size_t file, const ol_file_summary *s, const ol_class_summary *cls, int depth)
{
    if (cls->has_call)
        return true;
    return depth <= 4 && some_base(x, file, s, cls, depth, calls_own);
}

/* Is class cls of file `file` an nn.Module through its bases: those of its
 * own file, and those it imports, followed file by file (`CLIPTask` ->
 * `ImageTextTask` of another file -> `TrainingTask(nn.Module)` of a third)?
 * A summary says only what its file knows; the chain is followed here. A
 * class its file took for a module only because it has a base that file
 * cannot see and a forward() is not one when a base in another file
 * defines `__call__`: calling it runs that (PyG's `ToUndirected` of a
 * `BaseTransform` whose __call__ runs forward()). */
static bool module_through_bases(ol_xref *x, size_t file, const ol_file_summary *s, const ol_class_summary *cls,
                                 int depth)
{
    if (cls->is_module && !cls->module_guess)
        return true;
    if (depth > 4)
        return cls->is_module;
    if (some_base(x, file, s, cls, depth, module_through_bases))
        return true;
    return cls->module_guess && !calls_own(x, file, s, cls, 0);
}

/* The target of qual, resolved on first use. Indexed by the interned name:
 * a generated file calls tens of thousands of distinct names, and a search
 * of the list for each made its lint quadratic. */
static target *lookup(ol_xref *x, ol_sym qual)
{
    if (qual < x->target_of_cap && x->target_of[qual])
        return &x->targets.items[x->target_of[qual] - 1];
    target tg = {qual, true, NULL, NULL, NULL, 0, -1};
    if (x->project)
        resolve(x, &tg, ol_sym_str(x->m, qual));
    if (qual >= x->target_of_cap) {
        size_t cap = x->target_of_cap ? x->target_of_cap : 64;
        while (cap <= qual)
            cap *= 2;
        x->target_of = ol_xrealloc(x->target_of, cap * sizeof(uint32_t));
        memset(x->target_of + x->target_of_cap, 0, (cap - x->target_of_cap) * sizeof(uint32_t));
        x->target_of_cap = cap;
    }
    ol_vec_push(&x->targets, tg);
    if (!x->target_of[qual]) /* the first entry answers, as when the list was searched */
        x->target_of[qual] = (uint32_t)x->targets.len;
    return &ol_vec_last(&x->targets);
}

/* The function summary (qual, method) names, or NULL; *tg_out gets the
 * target when qual alone names a class (tg_out->cls). */
static const ol_fn_summary *target_fn(ol_xref *x, ol_sym qual, ol_sym method, target **tg_out)
{
    target *tg = lookup(x, qual);
    *tg_out = NULL;
    if (tg->fn)
        return method ? NULL : tg->fn;
    if (!tg->cls)
        return NULL;
    if (!method) {
        *tg_out = tg;
        return NULL;
    }
    return method_of(tg->file, tg->cls->name, ol_sym_str(x->m, method), 0);
}

/* Could qual name something of another file of the project? Pure: reads
 * no summary, so it may be asked while this file's own is being built. */
static bool may_resolve(ol_xref *x, ol_sym qual)
{
    size_t file;
    const char *rest;
    return x->project && ol_project_resolve(x->project, x->file, ol_sym_str(x->m, qual), &file, &rest) &&
           file != x->file;
}

static bool links_call(const ol_links *l, ol_model *m, ol_sym qual, ol_sym method, int index, const char *key,
                       ol_val *out)
{
    ol_xref *x = l->ctx;
    if (!x->answering) {
        /* values computed now must be computed again once it can answer */
        if (may_resolve(x, qual))
            x->asked++;
        return false;
    }
    if (!x->project)
        return false;
    target *cls;
    const ol_fn_summary *fn = target_fn(x, qual, method, &cls);
    if (cls) {
        if (index >= 0 || key)
            return false;
        if (cls->module < 0)
            cls->module = module_through_bases(x, cls->file_index, cls->file, cls->cls, 0);
        bool module = cls->module;
        ol_val v = {module ? OL_V_MODULE : OL_V_OBJECT, cls->cls->is_lossfn ? OL_VF_LOSSFN : 0,
                    module ? 0 : OL_OBJ_PROJECT, qual};
        *out = v;
        return true;
    }
    if (!fn)
        return false;
    if (index < 0 && !key) {
        *out = ol_sum_to_val(fn->ret);
        return true;
    }
    for (size_t i = 0; i < fn->elem_count; i++) {
        const ol_sum_elem *e = &fn->elems[i];
        if ((key && e->key && strcmp(e->key, key) == 0) || (!key && !e->key && e->index == index)) {
            *out = ol_sum_to_val(e->val);
            return true;
        }
    }
    (void)m;
    return false;
}

/* The project name a call runs: an imported function, or a method of an
 * instance of an imported class. */
static bool call_name(ol_model *m, uint32_t ci, ol_sym *qual, ol_sym *method)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[ci];
    ol_nid callee = ol_unparen(t, c->callee);
    if (callee == OL_NONE)
        return false;
    if (ol_kind_of(t, callee) == OL_N_attribute && c->receiver != OL_NONE) {
        ol_val rv = ol_eval(m, c->receiver);
        if ((rv.kind == OL_V_OBJECT || rv.kind == OL_V_MODULE) && rv.ref && !(rv.flags & OL_VF_LOCAL)) {
            *qual = rv.ref;
            *method = c->name;
            return true;
        }
        /* self.model_step(b) with model_step defined by a base class of another file */
        ol_val out;
        if ((rv.kind == OL_V_OBJECT || rv.kind == OL_V_MODULE || rv.kind == OL_V_INSTANCE) &&
            (rv.flags & OL_VF_LOCAL) && ol_inherited_method(m, rv.ref, c->name, qual, &out)) {
            *method = c->name;
            return true;
        }
    }
    ol_val cv = ol_eval(m, callee);
    if (cv.kind == OL_V_OBJECT && (cv.info & OL_OBJ_PROJECT) && cv.ref) {
        /* calling an instance runs its class's __call__ */
        *qual = cv.ref;
        *method = ol_model_intern(m, "__call__");
        return true;
    }
    if (cv.kind != OL_V_EXTERN)
        return false;
    *qual = cv.ref;
    *method = 0;
    return true;
}

static ol_sym param_run_class(ol_xref *x, uint32_t def);

static const ol_fn_summary *summary_of_call_uncached(ol_xref *x, uint32_t ci, bool *cross_file);

static const ol_fn_summary *summary_of_call(ol_xref *x, uint32_t ci, bool *cross_file)
{
    if (ci >= x->m->calls.len)
        return summary_of_call_uncached(x, ci, cross_file);
    if (!x->calls)
        x->calls = ol_xcalloc(x->m->calls.len, sizeof(call_memo));
    call_memo *c = &x->calls[ci];
    if (c->state) {
        *cross_file = c->state == 2;
        return c->fn;
    }
    const ol_fn_summary *fn = summary_of_call_uncached(x, ci, cross_file);
    c->fn = fn;
    c->state = *cross_file ? 2 : 1;
    return fn;
}

static const ol_fn_summary *summary_of_call_uncached(ol_xref *x, uint32_t ci, bool *cross_file)
{
    ol_model *m = x->m;
    *cross_file = false;
    uint32_t fi = ol_callee_function(m, m->calls.items[ci].node);
    if (fi != OL_NO_INDEX)
        return fi < x->own->fn_count ? &x->own->fns[fi] : NULL;
    ol_sym qual, method;
    if (!x->project)
        return NULL;
    if (!call_name(m, ci, &qual, &method)) {
        /* `predictor.predict(x)` on a parameter: the class the run's callers pass */
        const ol_call *c = &m->calls.items[ci];
        ol_nid recv = c->receiver != OL_NONE ? ol_unparen(m->tree, c->receiver) : OL_NONE;
        uint32_t defs[2];
        if (!c->name || recv == OL_NONE || ol_kind_of(m->tree, recv) != OL_N_identifier ||
            ol_reaching_defs(m, m->node_scope[recv], ol_node_sym(m, recv), recv, defs, 2) != 1 ||
            m->defs.items[defs[0]].kind != OL_DEF_PARAM || !(qual = param_run_class(x, defs[0])))
            return NULL;
        method = c->name;
    }
    target *cls;
    const ol_fn_summary *fn = target_fn(x, qual, method, &cls);
    *cross_file = fn != NULL;
    return fn;
}

/* Is the first part of dotted name q one of roots? (Compared a byte at a
 * time: asked of every import of the files a file imports, it was 4 million
 * string calls on the benchmark corpus.) */
static bool root_in(const char *q, const char *const *roots)
{
    for (const char *const *r = roots; *r; r++) {
        const char *a = q, *b = *r;
        while (*b && *a == *b) {
            a++;
            b++;
        }
        if (!*b && (*a == '.' || !*a))
            return true;
    }
    return false;
}

/* Does file `file`'s summary import one of roots, directly or through the
 * run's files it imports, up to depth more files? */
static bool file_imports_root(ol_xref *x, size_t file, const char *const *roots, int depth)
{
    const ol_file_summary *s = hold(x, file);
    if (!s)
        return false;
    for (size_t i = 0; i < s->import_count; i++)
        if (root_in(s->imports[i].qual, roots))
            return true;
    if (depth <= 0)
        return false;
    for (size_t i = 0; i < s->import_count; i++) {
        size_t next;
        const char *rest;
        if (ol_project_resolve(x->project, file, s->imports[i].qual, &next, &rest) && next != x->file &&
            next != file && file_imports_root(x, next, roots, depth - 1))
            return true;
    }
    return false;
}

bool ol_run_imports_root(ol_model *m, const char *const *roots)
{
    if (!m->links || m->links->call != links_call)
        return false;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project)
        return false;
    /* the rules ask it for every node they look at; the summaries it reads
     * do not change while the file is linted */
    if (x->roots_asked == roots)
        return x->roots_found;
    bool found = false;
    for (size_t i = 0; i < m->imports.len && !found; i++) {
        size_t file;
        const char *rest;
        found = ol_project_resolve(x->project, x->file, ol_sym_str(m, m->imports.items[i].qual), &file, &rest) &&
                file != x->file && file_imports_root(x, file, roots, 1);
    }
    x->roots_asked = roots;
    x->roots_found = found;
    return found;
}

const ol_fn_summary *ol_forward_summary(ol_model *m, uint32_t ci)
{
    if (!m->links || m->links->call != links_call)
        return NULL;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project)
        return NULL;
    const ol_call *c = &m->calls.items[ci];
    ol_sym qual = 0, method = 0;
    if (c->name == m->names.forward && c->receiver != OL_NONE) {
        if (!call_name(m, ci, &qual, &method))
            return NULL;
    } else {
        /* `model(x)` of a model whose class another file defines */
        ol_val cv = ol_eval(m, ol_unparen(m->tree, c->callee));
        if (cv.kind != OL_V_MODULE || !cv.ref || (cv.flags & OL_VF_LOCAL))
            return NULL;
        qual = cv.ref;
        method = m->names.forward;
    }
    if (method != m->names.forward)
        return NULL;
    target *cls;
    return target_fn(x, qual, method, &cls);
}

static uint32_t links_call_facts(const ol_links *l, ol_model *m, uint32_t ci)
{
    ol_xref *x = l->ctx;
    if (!x->answering) {
        x->asked++; /* not asked while summarizing today; forget to be safe if it is */
        return 0;
    }
    bool cross;
    (void)m;
    const ol_fn_summary *fs = summary_of_call(x, ci, &cross);
    return fs ? fs->facts | OL_FN_KNOWN : 0;
}

/* `from utils import *`, `from .helpers import *` at module level. */
static void collect_stars(ol_xref *x)
{
    const ol_tree *t = x->m->tree;
    if (!x->project || t->nodes.len == 0)
        return;
    for (ol_nid c = ol_first_named(t, 0); c != OL_NONE; c = ol_next_named(t, c)) {
        if (ol_kind_of(t, c) != OL_N_import_from_statement)
            continue;
        bool star = false;
        for (ol_nid k = ol_first_named(t, c); k != OL_NONE && !star; k = ol_next_named(t, k))
            star = ol_kind_of(t, k) == OL_N_wildcard_import;
        ol_nid module = ol_field(t, c, OL_F_module_name);
        if (!star || module == OL_NONE)
            continue;
        uint32_t len;
        const char *text = ol_text(t, module, &len);
        ol_buf b = {0};
        for (uint32_t i = 0; i < len; i++)
            if (text[i] != ' ' && text[i] != '\t' && text[i] != '\\' && text[i] != '\n' && text[i] != '\r')
                ol_buf_putc(&b, text[i]);
        ol_vec_push(&x->stars, ol_buf_take(&b));
    }
}

static ol_sym links_star(const ol_links *l, ol_model *m, ol_sym name)
{
    ol_xref *x = l->ctx;
    for (size_t i = 0; i < x->stars.len; i++) {
        const char *mod = x->stars.items[i];
        size_t ml = strlen(mod);
        char *q = ol_xasprintf("%s%s%s", mod, ml && mod[ml - 1] == '.' ? "" : ".", ol_sym_str(m, name));
        ol_sym qual = ol_model_intern(m, q);
        free(q);
        if (!x->answering) {
            if (may_resolve(x, qual)) {
                x->asked++;
                return 0;
            }
            continue;
        }
        target *tg = lookup(x, qual);
        if (tg->fn || tg->cls)
            return qual;
    }
    return 0;
}

static bool links_imports_root(const ol_links *l, ol_model *m, const char *const *roots)
{
    (void)l;
    return ol_run_imports_root(m, roots);
}

static bool links_param_use(const ol_links *l, ol_model *m, uint32_t ci, ol_nid arg, uint32_t *param, bool *host,
                            bool *cross_file)
{
    (void)l;
    const ol_fn_summary *s = ol_call_summary(m, ci, cross_file);
    if (!s)
        return false;
    for (uint32_t p = 0; p < s->param_count && p < OL_SUM_MAX_PARAMS; p++)
        if (ol_call_param_arg(m, ci, s, p) == arg) {
            *param = p;
            *host = (s->param_host & (1u << p)) != 0;
            return true;
        }
    return false;
}

/* Part `index` of what `fs` (a forward) returns, when it returns tuples of
 * exactly `arity` parts: 1 may carry the graph, 0 known not to, -1 not such
 * a forward or not known. */
static int forward_part(const ol_fn_summary *fs, int arity, int index)
{
    int parts = 0, found = -1;
    for (size_t i = 0; i < fs->elem_count; i++) {
        const ol_sum_elem *e = &fs->elems[i];
        if (e->key || e->index < 0)
            continue;
        if (e->index + 1 > parts)
            parts = e->index + 1;
        if (e->index == index)
            found = (e->val.flags & OL_VF_GRAPH) ? 1 : e->val.kind == OL_V_UNKNOWN ? -1 : 0;
    }
    return parts == arity ? found : -1;
}

/* Counts the loss classes of one file's summary whose part may carry the
 * graph (*graph) or is known not to (*host). A part a forward hands on
 * from what its summary could not follow (another loss of the run, called
 * through an attribute) counts neither way. */
static void loss_parts_of(const ol_file_summary *s, int arity, int index, int *graph, int *host)
{
    for (size_t i = 0; s && i < s->class_count; i++) {
        if (!s->classes[i].is_lossfn)
            continue;
        const ol_fn_summary *f = method_of(s, s->classes[i].name, "forward", 0);
        int part = f ? forward_part(f, arity, index) : -1;
        if (part == 1)
            (*graph)++;
        else if (part == 0)
            (*host)++;
    }
}

static bool links_host_instance(const ol_links *l, ol_model *m, ol_sym qual)
{
    (void)m;
    ol_xref *x = l->ctx;
    if (!x->answering) {
        if (may_resolve(x, qual))
            x->asked++; /* asked again once it can answer */
        return false;
    }
    if (!x->project || !qual)
        return false;
    target *cls;
    target_fn(x, qual, 0, &cls);
    return cls && cls->cls && cls->cls->host_only;
}

static int links_loss_part(const ol_links *l, ol_model *m, int arity, int index)
{
    (void)m;
    ol_xref *x = l->ctx;
    if (!x->answering) {
        x->asked++; /* values computed now are computed again once it can answer */
        return -1;
    }
    if (!x->project || arity < 2 || arity > 8 || index < 0 || index >= arity)
        return -1;
    if (x->loss_parts[arity - 1][index])
        return x->loss_parts[arity - 1][index] - 2;
    int graph = 0, host = 0;
    loss_parts_of(x->own, arity, index, &graph, &host);
    /* a file that cannot define a loss class with a forward is not parsed for it */
    size_t count;
    size_t *files = ol_project_may_define_files(x->project, x->file, "loss", "forward", &count);
    for (size_t k = 0; k < count && graph == 0; k++) {
        ol_file_summary *s = ol_project_acquire(x->project, files[k], x->worker);
        loss_parts_of(s, arity, index, &graph, &host);
        if (s)
            ol_file_summary_release(s);
    }
    free(files);
    int answer = graph > 0 ? 1 : host > 0 ? 0 : -1;
    x->loss_parts[arity - 1][index] = (int8_t)(answer + 2);
    return answer;
}

ol_xref *ol_xref_begin(ol_model *m, ol_project *project, size_t file, void *worker)
{
    return ol_xref_resume(m, project, file, worker, NULL);
}

ol_xref *ol_xref_resume(ol_model *m, ol_project *project, size_t file, void *worker, ol_file_summary *own)
{
    ol_xref *x = ol_xcalloc(1, sizeof(*x));
    x->m = m;
    x->project = project;
    x->file = file;
    x->worker = worker;
    x->links.ctx = x;
    x->links.call = links_call;
    x->links.call_facts = links_call_facts;
    x->links.star = links_star;
    x->links.imports_root = links_imports_root;
    x->links.param_use = links_param_use;
    x->links.loss_part = links_loss_part;
    x->links.host_instance = links_host_instance;
    collect_stars(x);
    m->links = &x->links;
    /* a model summarized before was forgotten then if it had to be */
    if (own)
        ol_file_summary_retain(own);
    x->own = own ? own : ol_summarize(m);
    if (project)
        ol_project_publish(project, file, x->own);
    x->answering = true;
    /* values computed while the links could not answer may be missing what
     * they now know */
    if (x->asked)
        ol_model_forget(m);
    return x;
}

void ol_xref_end(ol_xref *x)
{
    if (!x)
        return;
    if (x->m->links == &x->links)
        x->m->links = NULL;
    for (size_t i = 0; i < x->held.len; i++)
        if (x->held.items[i])
            ol_file_summary_release(x->held.items[i]);
    ol_vec_free(&x->held);
    ol_vec_free(&x->held_files);
    ol_vec_free(&x->targets);
    free(x->target_of);
    for (size_t i = 0; i < x->stars.len; i++)
        free(x->stars.items[i]);
    ol_vec_free(&x->stars);
    ol_vec_free(&x->param_keys);
    ol_vec_free(&x->param_classes);
    free(x->calls);
    ol_file_summary_release(x->own);
    free(x);
}

const ol_fn_summary *ol_call_summary(ol_model *m, uint32_t ci, bool *cross_file)
{
    *cross_file = false;
    if (!m->links || m->links->call != links_call)
        return NULL;
    ol_xref *x = m->links->ctx;
    if (!x->answering)
        return NULL;
    return summary_of_call(x, ci, cross_file);
}

typedef struct save_visit {
    ol_save_visitor fn;
    void *ctx;
} save_visit;

static void visit_other(void *ctx, const ol_sum_save *save)
{
    save_visit *v = ctx;
    v->fn(v->ctx, false, save);
}

bool ol_visit_run_saves(ol_model *m, ol_save_visitor fn, void *ctx)
{
    if (!m->links || m->links->call != links_call)
        return false;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project)
        return false;
    for (size_t i = 0; x->own->saves && i < x->own->saves->count; i++)
        fn(ctx, true, &x->own->saves->items[i]);
    save_visit v = {fn, ctx};
    ol_project_visit_saves(x->project, x->file, x->worker, visit_other, &v);
    return true;
}

int ol_run_spells_any(ol_model *m, const char *const *words, size_t n)
{
    if (!m->links || m->links->call != links_call)
        return -1;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project)
        return -1;
    return ol_project_spells_any(x->project, words, n);
}

/* The records of the run's calls of a name, copied out of the store (its
 * visitor runs with the store locked, and what they lead to is followed
 * after). */
typedef struct run_call {
    size_t file;
    char *root, *caller, *args;
    bool grad_off, gpu;
    uint32_t line;
    uint8_t often, use;
} run_call;

typedef OL_VEC(run_call) run_calls;

static char *copy_or_null(const char *s)
{
    return s ? ol_xstrndup(s, strlen(s)) : NULL;
}

static void collect_call(void *ctx, size_t file, const ol_sum_call *c)
{
    run_call r = {file, copy_or_null(c->root), copy_or_null(c->caller), copy_or_null(c->args),
                  c->grad_off, c->gpu, c->line, c->often, c->use};
    ol_vec_push((run_calls *)ctx, r);
}

/* The calls of the other files of the run that reach `rest` of `file`. */
static void run_calls_of(ol_xref *x, size_t file, const char *rest, run_calls *out)
{
    ol_project_visit_callers(x->project, file, rest, x->worker, collect_call, out);
}

static void run_calls_free(run_calls *v)
{
    for (size_t i = 0; i < v->len; i++) {
        free(v->items[i].root);
        free(v->items[i].caller);
        free(v->items[i].args);
    }
    ol_vec_free(v);
}

/* Can the run's records name function fi: a function of the module, or a
 * method of a class of the module? */
static bool named_in_run(const ol_model *m, const ol_xref *x, uint32_t fi)
{
    if (!x->answering || !x->project || fi >= x->own->fn_count || !x->own->fns[fi].name)
        return false;
    uint32_t outer = m->functions.items[fi].outer_scope;
    return outer == 0 || (outer != OL_NO_INDEX && m->scopes.items[outer].kind == OL_SCOPE_CLASS &&
                          m->scopes.items[outer].parent == 0);
}

/* How many calls in the other files of the run reach function `rest` of
 * `file` with autograd on and how many with it off. A call with autograd on
 * inside a function that its own file never calls counts as off when every
 * caller of that function in the run is off in turn (a @torch.no_grad()
 * entry point -> a method -> a helper of another file), followed up to
 * `depth` more files deep. The project finds the calls that name it (also
 * through a package's re-exports) without reading any summary. */
#define CALLER_DEPTH 4

/* sites[0]: the first call with autograd on, sites[1]: the first with it
 * off (file SIZE_MAX: none), in the order the files were added. */
static void count_callers(ol_xref *x, size_t file, const char *rest, int depth, size_t *grad_on, size_t *grad_off,
                          ol_run_site *sites);

/* Counts the calls in v, made in other files than `file`, with autograd
 * on or off (count_callers). */
static void tally_calls(ol_xref *x, size_t file, const run_calls *v, int depth, size_t *grad_on, size_t *grad_off,
                        ol_run_site *sites)
{
    for (size_t i = 0; i < v->len; i++) {
        const run_call *c = &v->items[i];
        bool off = c->grad_off;
        if (!off && c->root && depth > 0 && c->file != file) {
            size_t on2 = 0, off2 = 0;
            count_callers(x, c->file, c->root, depth - 1, &on2, &off2, NULL);
            off = on2 == 0 && off2 > 0;
        }
        ++*(off ? grad_off : grad_on);
        for (int k = 0; sites && k < 2; k++) {
            /* [0] the first call with autograd on, [1] off, [2] the most frequent */
            int slot = k == 0 ? (off ? 1 : 0) : 2;
            ol_run_site *site = &sites[slot];
            uint8_t often = c->often;
            bool better = site->file == SIZE_MAX ||
                          (slot == 2 && often != site->often
                               ? often > site->often
                               : c->file < site->file || (c->file == site->file && c->line < site->line));
            if (better) {
                site->file = c->file;
                site->line = c->line;
                site->often = often;
                site->through = c->root != NULL && !c->grad_off;
            }
        }
    }
}

/* The calls of the run that name method `rest` (`Class.method`) of `file`
 * on a value whose class their file cannot tell (OL_ANY_CALL records),
 * asked for a method that no call of the run reaches by its class (a
 * dataset's `multi_scale_inference()` called by the test loop of another
 * file on a dataset a factory made). Only a distinctive name
 * (ol_distinctive_method) stands for the method, and a call found by the
 * name alone is a guess at what it runs: the calls only ever excuse, so
 * they count (as count_callers counts, the first in sites[1]) when every
 * one has autograd off, and neither say that the method runs with autograd
 * on nor how often it runs. */
static void any_class_calls(ol_xref *x, size_t file, const char *rest, int depth, size_t *grad_off,
                            ol_run_site *sites)
{
    const char *dot = strchr(rest, '.');
    if (!dot || strchr(dot + 1, '.') || !ol_distinctive_method(dot + 1))
        return;
    run_calls v = {0};
    ol_project_visit_any_calls(x->project, file, dot + 1, x->worker, collect_call, &v);
    size_t on = 0, off = 0;
    ol_run_site found[3];
    for (int k = 0; k < 3; k++)
        found[k] = (ol_run_site){SIZE_MAX, NULL, 0, 0, false};
    tally_calls(x, file, &v, depth, &on, &off, found);
    run_calls_free(&v);
    if (on > 0 || off == 0)
        return;
    *grad_off += off;
    if (sites && sites[1].file == SIZE_MAX)
        sites[1] = found[1];
}

static void count_callers(ol_xref *x, size_t file, const char *rest, int depth, size_t *grad_on, size_t *grad_off,
                          ol_run_site *sites)
{
    run_calls v = {0};
    run_calls_of(x, file, rest, &v);
    tally_calls(x, file, &v, depth, grad_on, grad_off, sites);
    run_calls_free(&v);
    /* a caller's own callers (depth below the first): by the method's name
     * where none reaches it by its class */
    if (depth < CALLER_DEPTH && *grad_on == 0 && *grad_off == 0)
        any_class_calls(x, file, rest, depth, grad_off, sites);
}

/* Does class cls of file `file` have a base outside the run (a library's
 * class: `transformers.Trainer`), itself or through its bases? */
static bool base_outside_run(ol_xref *x, size_t file, const ol_file_summary *s, const ol_class_summary *cls,
                             int depth)
{
    for (size_t i = 0; i < cls->ext_base_count; i++) {
        target tg = {0, true, NULL, NULL, NULL, 0, -1};
        resolve_at(x, file, &tg, cls->ext_bases[i]);
        if (!tg.cls)
            return true;
    }
    return depth <= 4 && some_base(x, file, s, cls, depth, base_outside_run);
}

/* The calls that run method fi of a class of this file from the methods of
 * a base class in another file (the template method: `BaseRunner.train()`
 * of base.py runs `self.train_step(items)` every batch, and the subclass
 * here defines train_step with no loop of its own), into *out: the base's
 * calls of its own object (OL_OWN_CALL records) that name the method, from
 * methods this class does not define itself (a subclass that overrides the
 * loop never runs the base's). The imported bases, and the bases those
 * have in their own file, one level. A class with a library's base among
 * its own may be called by that library too, with autograd on whatever
 * the base does (a library trainer's `training_step()` calls the
 * `compute_loss()` that the project's base calls under `no_grad()` in its
 * `prediction_step()`): the base's calls with autograd off are left out
 * for it, so that they never make all of its callers off. */
static void inherited_calls(ol_xref *x, uint32_t fi, run_calls *out)
{
    ol_model *m = x->m;
    const ol_function *f = &m->functions.items[fi];
    if (!f->is_method || f->is_classmethod || f->cls == OL_NO_INDEX)
        return;
    const char *name = x->own->fns[fi].name;
    const char *dot = strchr(name, '.');
    if (!dot || strchr(dot + 1, '.'))
        return;
    char *cls_name = ol_xstrndup(name, (size_t)(dot - name));
    const ol_class_summary *cs = ol_summary_class(x->own, cls_name);
    bool outside = cs && base_outside_run(x, x->file, x->own, cs, 0);
    for (size_t i = 0; cs && i < cs->ext_base_count && i < 4; i++) {
        target tg = {0, true, NULL, NULL, NULL, 0, -1};
        resolve_at(x, x->file, &tg, cs->ext_bases[i]);
        if (!tg.cls || !tg.file || tg.file_index == x->file)
            continue;
        const ol_class_summary *chain[5] = {tg.cls};
        size_t nchain = 1;
        for (size_t k = 0; k < tg.cls->base_count && nchain < 5; k++) {
            const ol_class_summary *b = ol_summary_class(tg.file, tg.cls->bases[k]);
            if (b && b != tg.cls)
                chain[nchain++] = b;
        }
        for (size_t k = 0; k < nchain; k++) {
            char *qual = ol_xasprintf("%s%s%s", OL_OWN_CALL, chain[k]->name, dot);
            run_calls v = {0};
            ol_project_visit_own_calls(x->project, tg.file_index, qual, x->worker, collect_call, &v);
            free(qual);
            for (size_t j = 0; j < v.len; j++) {
                run_call *c = &v.items[j];
                const char *cdot = c->caller ? strrchr(c->caller, '.') : NULL;
                char *over = cdot ? ol_xasprintf("%s%s", cls_name, cdot) : NULL;
                bool keep = over && !ol_summary_function(x->own, over) && !(outside && c->grad_off);
                free(over);
                if (keep) {
                    ol_vec_push(out, *c);
                } else {
                    free(c->root);
                    free(c->caller);
                    free(c->args);
                }
            }
            ol_vec_free(&v);
        }
    }
    free(cls_name);
}

size_t ol_run_call_records(ol_model *m, uint32_t fi, ol_run_use *out, size_t cap)
{
    if (!m->links || m->links->call != links_call)
        return 0;
    ol_xref *x = m->links->ctx;
    if (!named_in_run(m, x, fi))
        return 0;
    run_calls v = {0};
    run_calls_of(x, x->file, x->own->fns[fi].name, &v);
    size_t n = 0;
    for (size_t i = 0; i < v.len && n < cap; i++, n++) {
        const char *path = ol_project_path(x->project, v.items[i].file);
        out[n].path = path ? ol_xstrndup(path, strlen(path)) : NULL;
        out[n].line = v.items[i].line;
        out[n].use = v.items[i].use;
        out[n].caller = v.items[i].caller;
        v.items[i].caller = NULL;
    }
    run_calls_free(&v);
    return n;
}

void ol_run_uses_free(ol_run_use *uses, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(uses[i].path);
        free(uses[i].caller);
    }
}

/* The class in a record's args for `key` ("0", "predictor"), or NULL (malloc'd). */
static char *arg_class(const char *args, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = args; p && *p;) {
        const char *eq = strchr(p, '='), *end = strchr(p, ';');
        if (!eq || !end || eq > end)
            return NULL;
        if ((size_t)(eq - p) == kl && strncmp(p, key, kl) == 0)
            return ol_xstrndup(eq + 1, (size_t)(end - eq - 1));
        p = end + 1;
    }
    return NULL;
}

/* The project class every call of the run passes for parameter def of a
 * function of this file (`eval_model(predictor, ...)` with `predictor =
 * Predictor(model)` in the caller's file), as this file names it; 0 when the
 * calls pass none, several, or the file cannot name it. Asked once per
 * parameter. */
static ol_sym param_run_class(ol_xref *x, uint32_t def)
{
    ol_model *m = x->m;
    for (size_t i = 0; i < x->param_keys.len; i++)
        if (x->param_keys.items[i] == def)
            return x->param_classes.items[i];
    ol_vec_push(&x->param_keys, (uint64_t)def);
    ol_vec_push(&x->param_classes, (ol_sym)0);
    size_t slot = x->param_keys.len - 1;
    const ol_def *d = &m->defs.items[def];
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX || !named_in_run(m, x, fi))
        return 0;
    const ol_function *f = &m->functions.items[fi];
    bool self = f->is_method && !f->is_staticmethod;
    if (self && d->index == 0)
        return 0; /* the receiver itself */
    const char *rest = x->own->fns[fi].name;
    /* the argument's position as the caller writes it: self is not written */
    char pos[16];
    snprintf(pos, sizeof pos, "%u", d->index - (self ? 1u : 0u));
    const char *name = ol_sym_str(m, d->name);
    run_calls v = {0};
    run_calls_of(x, x->file, rest, &v);
    char *found = NULL;
    bool agree = true;
    for (size_t i = 0; i < v.len && agree; i++) {
        char *cls = arg_class(v.items[i].args, pos);
        if (!cls)
            cls = arg_class(v.items[i].args, name);
        /* one call that passes something else: the parameter holds more than one kind */
        if (!cls || (found && strcmp(found, cls) != 0)) {
            agree = false;
            free(cls);
        } else if (!found) {
            found = cls;
        } else {
            free(cls);
        }
    }
    run_calls_free(&v);
    /* named as the caller's file names it: only an absolute name means the
     * same from this file */
    if (agree && found && found[0] != '.')
        x->param_classes.items[slot] = ol_model_intern(m, found);
    free(found);
    return x->param_classes.items[slot];
}

bool ol_run_callers(ol_model *m, uint32_t fi, size_t *grad_on, size_t *grad_off)
{
    return ol_run_callers_at(m, fi, grad_on, grad_off, NULL);
}

bool ol_run_callers_at(ol_model *m, uint32_t fi, size_t *grad_on, size_t *grad_off, ol_run_site sites[3])
{
    *grad_on = *grad_off = 0;
    if (sites) {
        for (int k = 0; k < 3; k++) {
            sites[k].file = SIZE_MAX;
            sites[k].path = NULL;
            sites[k].line = 0;
            sites[k].often = 0;
            sites[k].through = false;
        }
    }
    if (!m->links || m->links->call != links_call)
        return false;
    ol_xref *x = m->links->ctx;
    if (!named_in_run(m, x, fi))
        return false;
    count_callers(x, x->file, x->own->fns[fi].name, CALLER_DEPTH, grad_on, grad_off, sites);
    run_calls inherited = {0};
    inherited_calls(x, fi, &inherited);
    tally_calls(x, x->file, &inherited, CALLER_DEPTH, grad_on, grad_off, sites);
    run_calls_free(&inherited);
    if (*grad_on == 0 && *grad_off == 0)
        any_class_calls(x, x->file, x->own->fns[fi].name, CALLER_DEPTH, grad_off, sites);
    for (int k = 0; sites && k < 3; k++)
        if (sites[k].file != SIZE_MAX)
            sites[k].path = ol_project_path(x->project, sites[k].file);
    return true;
}

/* Does a call of name `rest` of this file come from a file of the run that
 * puts data on an accelerator? The first such call in *site. */
static bool gpu_caller_of(ol_xref *x, const char *rest, ol_run_site *site)
{
    run_calls v = {0};
    run_calls_of(x, x->file, rest, &v);
    bool found = false;
    for (size_t i = 0; i < v.len && !found; i++) {
        if (!v.items[i].gpu)
            continue;
        found = true;
        site->file = v.items[i].file;
        site->line = v.items[i].line;
        site->path = ol_project_path(x->project, site->file);
    }
    run_calls_free(&v);
    return found;
}

bool ol_run_gpu_user(ol_model *m, ol_run_site *site, const char **what)
{
    site->file = SIZE_MAX;
    site->path = NULL;
    site->line = 0;
    site->often = 0;
    site->through = false;
    *what = NULL;
    if (!m->links || m->links->call != links_call)
        return false;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project)
        return false;
    /* the module's functions and classes, and the methods of its classes */
    for (uint32_t fi = 0; fi < m->functions.len && fi < x->own->fn_count; fi++) {
        if (!named_in_run(m, x, fi))
            continue;
        const char *name = x->own->fns[fi].name;
        if (gpu_caller_of(x, name, site)) {
            *what = name;
            return true;
        }
    }
    for (size_t ci = 0; ci < m->classes.len; ci++) {
        const ol_class *c = &m->classes.items[ci];
        if (c->scope == OL_NO_INDEX || m->scopes.items[c->scope].parent != 0 || !c->name)
            continue;
        const char *name = ol_sym_str(m, c->name);
        if (gpu_caller_of(x, name, site)) {
            *what = name;
            return true;
        }
    }
    return false;
}

/* Does `name` contain `hint`, case aside? */
static bool names_hint(const char *name, const char *hint)
{
    size_t nl = strlen(name), hl = strlen(hint);
    for (size_t i = 0; i + hl <= nl; i++) {
        size_t k = 0;
        while (k < hl && tolower((unsigned char)name[i + k]) == tolower((unsigned char)hint[k]))
            k++;
        if (k == hl)
            return true;
    }
    return false;
}

const ol_fn_summary *ol_run_method_by_hint(ol_model *m, const char *hint, const char *method, const char **cls_out,
                                           const char **path_out)
{
    if (!m->links || m->links->call != links_call)
        return NULL;
    ol_xref *x = m->links->ctx;
    if (!x->answering || !x->project || strlen(hint) < 3)
        return NULL;
    /* each file's summary is taken and let go again: only the one found is
     * held, so a question does not pin the whole run's summaries */
    size_t found_file = SIZE_MAX, found_class = 0;
    const ol_fn_summary *found = NULL;
    bool several = false;
    /* a file that cannot define such a class is not parsed for it */
    size_t count;
    size_t *files = ol_project_may_define_files(x->project, x->file, hint, method, &count);
    for (size_t k = 0; k < count && !several; k++) {
        size_t file = files[k];
        ol_file_summary *s = ol_project_acquire(x->project, file, x->worker);
        for (size_t i = 0; s && i < s->class_count && !several; i++) {
            if (!names_hint(s->classes[i].name, hint))
                continue;
            const ol_fn_summary *f = method_of(s, s->classes[i].name, method, 0);
            if (!f || (found_file == file && f == found))
                continue;
            if (found_file != SIZE_MAX) {
                several = true; /* several classes named so define it differently: no guess */
                break;
            }
            found = f;
            found_file = file;
            found_class = i;
        }
        if (s)
            ol_file_summary_release(s);
    }
    free(files);
    if (several || found_file == SIZE_MAX)
        return NULL;
    const ol_file_summary *s = hold(x, found_file);
    if (!s || found_class >= s->class_count)
        return NULL;
    *cls_out = s->classes[found_class].name;
    *path_out = ol_project_path(x->project, found_file);
    return method_of(s, s->classes[found_class].name, method, 0);
}

const ol_fn_summary *ol_function_summary(ol_model *m, uint32_t fi)
{
    if (!m->links || m->links->call != links_call)
        return NULL;
    ol_xref *x = m->links->ctx;
    return x->answering && fi < x->own->fn_count ? &x->own->fns[fi] : NULL;
}

ol_nid ol_call_param_arg(ol_model *m, uint32_t ci, const ol_fn_summary *s, uint32_t param)
{
    const ol_tree *t = m->tree;
    const ol_call *c = &m->calls.items[ci];
    /* obj.method(a): the receiver fills the first parameter; Cls.method(obj, a) does not */
    uint32_t offset = 0;
    if (s->bound && c->receiver != OL_NONE) {
        ol_val rv = ol_eval(m, c->receiver);
        if (rv.kind != OL_V_CLASS && rv.kind != OL_V_EXTERN) {
            if (param == 0)
                return ol_unparen(t, c->receiver);
            offset = 1;
        }
    }
    if (param < offset || param >= s->param_count)
        return OL_NONE;
    ol_nid args = ol_field(t, c->node, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return OL_NONE;
    const char *name = s->params[param];
    uint32_t pos = 0;
    for (ol_nid a = ol_first_named(t, args); a != OL_NONE; a = ol_next_named(t, a)) {
        ol_kind k = ol_kind_of(t, a);
        if (k == OL_N_keyword_argument) {
            if (name && *name && ol_text_is(t, ol_field(t, a, OL_F_name), name))
                return ol_field(t, a, OL_F_value);
            continue;
        }
        if (k == OL_N_list_splat || k == OL_N_dictionary_splat)
            return OL_NONE;
        if (pos + offset == param)
            return a;
        pos++;
    }
    return OL_NONE;
}

size_t ol_call_kept_args(ol_model *m, uint32_t ci, ol_kept_arg *out, size_t cap)
{
    bool cross;
    const ol_fn_summary *fs = ol_call_summary(m, ci, &cross);
    if (!fs || !fs->store_count)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < fs->store_count && n < cap; i++) {
        const ol_sum_store *st = &fs->stores[i];
        ol_nid arg = ol_call_param_arg(m, ci, fs, st->param);
        if (arg == OL_NONE)
            continue;
        ol_nid holder = OL_NONE;
        if (st->into == OL_INTO_SELF) {
            /* the receiver, or the first argument of `Cls.update(meter, v)` */
            holder = fs->bound ? ol_call_param_arg(m, ci, fs, 0) : OL_NONE;
            if (holder == OL_NONE)
                continue;
        } else if (st->into != OL_INTO_GLOBAL) {
            holder = ol_call_param_arg(m, ci, fs, st->into);
            if (holder == OL_NONE)
                continue;
        }
        ol_kept_arg k = {fs, st, arg, holder == OL_NONE ? OL_NONE : ol_unparen(m->tree, holder), cross};
        out[n++] = k;
    }
    return n;
}
