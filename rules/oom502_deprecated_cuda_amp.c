/*
 * OOM502 deprecated-cuda-amp: `torch.cuda.amp.autocast`, `GradScaler`,
 * `custom_fwd` and `custom_bwd` were deprecated in PyTorch 2.4 in favour of
 * `torch.amp.*` with an explicit device. Flags the deprecated calls and
 * decorators, and the `from torch.cuda.amp import ...` /
 * `from torch.cuda import amp` lines that bring them in.
 *
 * The fix is safe: it renames the module and passes the device the old API
 * implied. torch.amp.autocast takes device_type first and orders dtype
 * before enabled, so positional arguments of the old call become keywords.
 * For imported names the fix edits the import line and every use together
 * (a renamed import without its calls would break them); if any use is
 * something the fix cannot rewrite (the name passed around as a value), no
 * fix is offered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The most edits a use's finding repeats of its import statement's fix. */
#define SHARED_FIX_MAX_EDITS 64

typedef enum amp_kind {
    AMP_NONE,
    AMP_AUTOCAST,
    AMP_SCALER,
    AMP_CUSTOM,   /* custom_fwd / custom_bwd */
    AMP_OTHER,    /* deprecated, but no automatic rewrite (submodule paths) */
} amp_kind;

static amp_kind kind_of_qual(const char *q)
{
    if (!q)
        return AMP_NONE;
    if (strcmp(q, "torch.cuda.amp.autocast") == 0)
        return AMP_AUTOCAST;
    if (strcmp(q, "torch.cuda.amp.GradScaler") == 0)
        return AMP_SCALER;
    if (strcmp(q, "torch.cuda.amp.custom_fwd") == 0 || strcmp(q, "torch.cuda.amp.custom_bwd") == 0)
        return AMP_CUSTOM;
    if (strcmp(q, "torch.cuda.amp.autocast_mode.autocast") == 0 ||
        strcmp(q, "torch.cuda.amp.grad_scaler.GradScaler") == 0 ||
        strcmp(q, "torch.cuda.amp.autocast_mode.custom_fwd") == 0 ||
        strcmp(q, "torch.cuda.amp.autocast_mode.custom_bwd") == 0)
        return AMP_OTHER;
    return AMP_NONE;
}

static amp_kind kind_of_name(const char *name)
{
    if (strcmp(name, "autocast") == 0)
        return AMP_AUTOCAST;
    if (strcmp(name, "GradScaler") == 0)
        return AMP_SCALER;
    if (strcmp(name, "custom_fwd") == 0 || strcmp(name, "custom_bwd") == 0)
        return AMP_CUSTOM;
    return AMP_NONE;
}

static const char *replacement_help(amp_kind k, const char *name)
{
    switch (k) {
    case AMP_AUTOCAST:
        return "use `torch.amp.autocast(\"cuda\", ...)`: the same context, with the device named";
    case AMP_SCALER:
        return "use `torch.amp.GradScaler(\"cuda\", ...)`";
    case AMP_CUSTOM:
        return strstr(name, "bwd") ? "use `@torch.amp.custom_bwd(device_type=\"cuda\")`"
                                   : "use `@torch.amp.custom_fwd(device_type=\"cuda\")`";
    default:
        return "use the `torch.amp` equivalent and pass the device (\"cuda\") explicitly";
    }
}

/* ---- argument rewrites ---------------------------------------------------- */

static bool is_positional(const ol_tree *t, ol_nid a)
{
    ol_kind k = ol_kind_of(t, a);
    return k != OL_N_keyword_argument && k != OL_N_dictionary_splat && k != OL_N_list_splat;
}

/* Adds the edits that make a call of the old API a call of the new one.
 * `call` is the call node, or OL_NONE for a bare decorator `expr`. */
static bool add_argument_edits(const ol_tree *t, ol_fix *fix, amp_kind kind, ol_nid call, ol_nid expr)
{
    if (call == OL_NONE) {
        if (kind != AMP_CUSTOM)
            return false;
        ol_fix_edit(fix, ol_node_at(t, expr)->end, ol_node_at(t, expr)->end, "(device_type=\"cuda\")");
        return true;
    }
    ol_nid args = ol_field(t, call, OL_F_arguments);
    if (args == OL_NONE || ol_kind_of(t, args) != OL_N_argument_list)
        return false;
    uint32_t open = ol_node_at(t, args)->start + 1;
    ol_nid first = ol_first_named(t, args);
    for (ol_nid a = first; a != OL_NONE; a = ol_next_named(t, a))
        if (ol_kind_of(t, a) == OL_N_list_splat)
            return false; /* *args: positions unknowable */
    switch (kind) {
    case AMP_AUTOCAST: {
        static const char *const names[] = {"enabled=", "dtype=", "cache_enabled="};
        ol_fix_edit(fix, first != OL_NONE ? ol_node_at(t, first)->start : open,
                    first != OL_NONE ? ol_node_at(t, first)->start : open, first != OL_NONE ? "\"cuda\", " : "\"cuda\"");
        int pos = 0;
        for (ol_nid a = first; a != OL_NONE; a = ol_next_named(t, a)) {
            if (!is_positional(t, a))
                continue;
            if (pos >= 3)
                return false;
            uint32_t at = ol_node_at(t, a)->start;
            /* the device goes in front of the first argument, the keyword right after it */
            if (a == first) {
                /* merge into the insertion already made at this point */
                ol_edit *e = &fix->edits.items[fix->edits.len - 1];
                char *merged = ol_xasprintf("%s%s", e->content, names[pos]);
                free(e->content);
                e->content = merged;
            } else {
                ol_fix_edit(fix, at, at, names[pos]);
            }
            pos++;
        }
        return true;
    }
    case AMP_SCALER:
        ol_fix_edit(fix, first != OL_NONE ? ol_node_at(t, first)->start : open,
                    first != OL_NONE ? ol_node_at(t, first)->start : open, first != OL_NONE ? "\"cuda\", " : "\"cuda\"");
        return true;
    case AMP_CUSTOM: {
        ol_nid last_positional = OL_NONE, last = OL_NONE;
        for (ol_nid a = first; a != OL_NONE; a = ol_next_named(t, a)) {
            last = a;
            if (is_positional(t, a))
                last_positional = a;
        }
        if (last_positional == OL_NONE) {
            ol_fix_edit(fix, first != OL_NONE ? ol_node_at(t, first)->start : open,
                        first != OL_NONE ? ol_node_at(t, first)->start : open,
                        first != OL_NONE ? "device_type=\"cuda\", " : "device_type=\"cuda\"");
        } else {
            uint32_t at = ol_node_at(t, last)->end;
            ol_fix_edit(fix, at, at, ", device_type=\"cuda\"");
        }
        return true;
    }
    default:
        return false;
    }
}

/* For `X.cuda.amp.name`: the edit turning it into `X.amp.name`. */
static bool add_chain_edit(const ol_tree *t, ol_fix *fix, ol_nid callee)
{
    callee = ol_unparen(t, callee);
    if (ol_kind_of(t, callee) != OL_N_attribute)
        return false;
    ol_nid amp = ol_field(t, callee, OL_F_object);
    if (ol_kind_of(t, amp) != OL_N_attribute || !ol_text_is(t, ol_field(t, amp, OL_F_attribute), "amp"))
        return false;
    ol_nid cuda = ol_field(t, amp, OL_F_object);
    if (ol_kind_of(t, cuda) != OL_N_attribute || !ol_text_is(t, ol_field(t, cuda, OL_F_attribute), "cuda"))
        return false;
    ol_nid root = ol_field(t, cuda, OL_F_object);
    if (root == OL_NONE)
        return false;
    char *root_text = ol_node_str(t, root);
    ol_fix_edit(fix, ol_node_at(t, cuda)->start, ol_node_at(t, cuda)->end, root_text);
    free(root_text);
    return true;
}

/* ---- imports ------------------------------------------------------------------ */

typedef enum import_form {
    FORM_NONE,
    FORM_NAMES,      /* from torch.cuda.amp import autocast, GradScaler */
    FORM_MODULE,     /* from torch.cuda import amp / import torch.cuda.amp as amp */
    FORM_SUBMODULE,  /* from torch.cuda.amp.autocast_mode import autocast: flagged, not fixed */
} import_form;

static import_form form_of(ol_model *m, const ol_import *imp)
{
    const char *q = ol_sym_str(m, imp->qual);
    if (imp->def == OL_NO_INDEX)
        return FORM_NONE; /* `import torch.cuda.amp` binds torch; its uses are checked as calls */
    bool from = ol_kind_of(m->tree, imp->stmt) == OL_N_import_from_statement;
    if (strcmp(q, "torch.cuda.amp") == 0)
        return (from || ol_kind_of(m->tree, ol_parent(m->tree, imp->name_node)) == OL_N_aliased_import)
                   ? FORM_MODULE
                   : FORM_NONE;
    if (!from)
        return FORM_NONE;
    if (ol_str_has_prefix(q, "torch.cuda.amp.autocast_mode.") || ol_str_has_prefix(q, "torch.cuda.amp.grad_scaler."))
        return FORM_SUBMODULE;
    if (ol_str_has_prefix(q, "torch.cuda.amp."))
        return FORM_NAMES;
    return FORM_NONE;
}

/* Is identifier `n` a name reference (not an attribute's or keyword's
 * name, not a name inside an import statement)? */
static bool is_reference(const ol_tree *t, ol_nid n)
{
    ol_nid p = ol_parent(t, n);
    ol_field_id f = (ol_field_id)ol_node_at(t, n)->field;
    if (p != OL_NONE && ol_kind_of(t, p) == OL_N_attribute && f == OL_F_attribute)
        return false;
    if (p != OL_NONE && ol_kind_of(t, p) == OL_N_keyword_argument && f == OL_F_name)
        return false;
    /* names inside import statements are not references */
    if (p != OL_NONE && (ol_kind_of(t, p) == OL_N_dotted_name || ol_kind_of(t, p) == OL_N_aliased_import))
        return false;
    return true;
}

/* What the rule needs about the file's deprecated imports, built once per
 * file so that a file with thousands of them stays linear: the import
 * statements as groups of ol_import, each def's import, each import def's
 * uses (identifiers it reaches), and each statement's fix, made once and
 * copied to every finding that offers it. */
typedef struct amp_index {
    uint32_t *group_of_import;  /* import -> group */
    OL_VEC(uint32_t) group_first; /* group -> first import; imports of a statement are contiguous */
    uint32_t *import_of_def;    /* def -> import index + 1, or 0 */
    uint32_t *use_begin;        /* def -> its uses in uses[use_begin[d], use_begin[d + 1]) */
    ol_nid *uses;
    ol_fix **fix;               /* group -> fix (owned), valid where fix_made */
    bool *fix_made;
} amp_index;

typedef struct def_use {
    uint32_t def;
    ol_nid node;
} def_use;

static import_form form_of(ol_model *m, const ol_import *imp);

static void index_build(ol_model *m, amp_index *ix)
{
    const ol_tree *t = m->tree;
    memset(ix, 0, sizeof(*ix));
    size_t ndefs = m->defs.len;
    ix->group_of_import = ol_xcalloc(m->imports.len + 1, sizeof(uint32_t));
    ix->import_of_def = ol_xcalloc(ndefs + 1, sizeof(uint32_t));
    for (size_t i = 0; i < m->imports.len; i++) {
        const ol_import *imp = &m->imports.items[i];
        if (i == 0 || imp->stmt != m->imports.items[i - 1].stmt)
            ol_vec_push(&ix->group_first, (uint32_t)i);
        ix->group_of_import[i] = (uint32_t)(ix->group_first.len - 1);
        if (imp->def < ndefs)
            ix->import_of_def[imp->def] = (uint32_t)i + 1;
    }
    ix->fix = ol_xcalloc(ix->group_first.len + 1, sizeof(ol_fix *));
    ix->fix_made = ol_xcalloc(ix->group_first.len + 1, sizeof(bool));
    /* the names deprecated imports bind, sorted, to test identifiers against */
    OL_VEC(ol_sym) names = {0};
    for (size_t i = 0; i < m->imports.len; i++) {
        import_form form = form_of(m, &m->imports.items[i]);
        if (form == FORM_NAMES || form == FORM_MODULE)
            ol_vec_push(&names, m->imports.items[i].bound);
    }
    ol_sort(names.items, names.len, sizeof(ol_sym), ol_cmp_u32);
    OL_VEC(def_use) pairs = {0};
    if (names.len > 0) {
        for (ol_nid n = 0; n < t->nodes.len; n++) {
            if (ol_kind_of(t, n) != OL_N_identifier)
                continue;
            ol_sym sym = ol_node_sym(m, n);
            if (!bsearch(&sym, names.items, names.len, sizeof(ol_sym), ol_cmp_u32) || !is_reference(t, n))
                continue;
            uint32_t defs[32];
            size_t count = ol_reaching_defs(m, m->node_scope[n], sym, n, defs, 32);
            for (size_t k = 0; k < count; k++) {
                if (defs[k] >= ndefs || !ix->import_of_def[defs[k]])
                    continue;
                def_use du = {defs[k], n};
                ol_vec_push(&pairs, du);
            }
        }
    }
    /* counting sort by def into use_begin/uses */
    ix->use_begin = ol_xcalloc(ndefs + 2, sizeof(uint32_t));
    for (size_t i = 0; i < pairs.len; i++)
        ix->use_begin[pairs.items[i].def + 1]++;
    for (size_t d = 0; d < ndefs + 1; d++)
        ix->use_begin[d + 1] += ix->use_begin[d];
    ix->uses = ol_xmalloc((pairs.len + 1) * sizeof(ol_nid));
    uint32_t *fill = ol_xmalloc((ndefs + 1) * sizeof(uint32_t));
    memcpy(fill, ix->use_begin, (ndefs + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < pairs.len; i++) /* pairs are in node order: so is each def's list */
        ix->uses[fill[pairs.items[i].def]++] = pairs.items[i].node;
    free(fill);
    ol_vec_free(&pairs);
    ol_vec_free(&names);
}

static void index_free(amp_index *ix)
{
    for (size_t g = 0; g < ix->group_first.len; g++)
        ol_fix_free(ix->fix[g]);
    free(ix->fix);
    free(ix->fix_made);
    free(ix->group_of_import);
    ol_vec_free(&ix->group_first);
    free(ix->import_of_def);
    free(ix->use_begin);
    free(ix->uses);
    memset(ix, 0, sizeof(*ix));
}

/* The call whose callee is `expr`, or OL_NONE; sets *decorator when `expr`
 * is a bare decorator expression. */
static ol_nid call_of_callee(const ol_tree *t, ol_nid expr, bool *decorator)
{
    *decorator = false;
    ol_nid p = ol_parent(t, expr);
    if (p == OL_NONE)
        return OL_NONE;
    if (ol_kind_of(t, p) == OL_N_call && ol_field(t, p, OL_F_function) == expr)
        return p;
    if (ol_kind_of(t, p) == OL_N_decorator)
        *decorator = true;
    return OL_NONE;
}

typedef OL_VEC(ol_nid) nid_list;

static bool nid_in(const nid_list *l, ol_nid n)
{
    for (size_t i = 0; i < l->len; i++)
        if (l->items[i] == n)
            return true;
    return false;
}

/* A use may be reached by several imports of the name (`if ...: from
 * torch.cuda.amp import GradScaler` / `else: ...` the same, or the line
 * twice). Its call can be rewritten only if every definition reaching it is
 * such a deprecated import, and then all of those import lines must change
 * in the same fix: each statement's own fix would add the device to the
 * call again. Adds their groups to `groups`; false when some other
 * definition (the new torch.amp name, an assignment) reaches the use. */
static bool join_reaching_imports(ol_model *m, const amp_index *ix, const ol_import *imp, const uint32_t *defs,
                                  size_t count, nid_list *groups)
{
    for (size_t d = 0; d < count; d++) {
        if (defs[d] == imp->def)
            continue;
        uint32_t j = defs[d] < m->defs.len ? ix->import_of_def[defs[d]] : 0;
        if (!j)
            return false;
        const ol_import *other = &m->imports.items[j - 1];
        if (other->qual != imp->qual || form_of(m, other) != form_of(m, imp))
            return false;
        uint32_t g = ix->group_of_import[j - 1];
        if (!nid_in(groups, g))
            ol_vec_push(groups, g);
    }
    return true;
}

static ol_fix *build_import_fix(ol_model *m, const amp_index *ix, uint32_t group);

/* The fix for one import statement (a copy the caller owns), or NULL if it
 * cannot be fixed or has more than max_edits edits. */
static ol_fix *import_fix(ol_model *m, amp_index *ix, uint32_t group, size_t max_edits)
{
    if (!ix->fix_made[group]) {
        ix->fix[group] = build_import_fix(m, ix, group);
        ix->fix_made[group] = true;
    }
    const ol_fix *f = ix->fix[group];
    return f && f->edits.len <= max_edits ? ol_fix_copy(f) : NULL;
}

/* The imports of a group (statement): [*first, *last). */
static void group_range(const ol_model *m, const amp_index *ix, uint32_t group, size_t *first, size_t *last)
{
    *first = ix->group_first.items[group];
    ol_nid stmt = m->imports.items[*first].stmt;
    *last = *first;
    while (*last < m->imports.len && m->imports.items[*last].stmt == stmt)
        (*last)++;
}

/* Rewrites every use of one deprecated import (a call or decorator), or
 * returns false. Uses reached by several imports are rewritten once (uses),
 * and those imports' statements join the fix (groups). */
static bool rewrite_uses(ol_model *m, const amp_index *ix, const ol_import *imp, ol_fix *fix, nid_list *groups,
                         nid_list *uses)
{
    const ol_tree *t = m->tree;
    import_form form = form_of(m, imp);
    const char *q = ol_sym_str(m, imp->qual);
    amp_kind name_kind = form == FORM_NAMES ? kind_of_name(q + strlen("torch.cuda.amp.")) : AMP_NONE;
    if (form == FORM_NONE || form == FORM_SUBMODULE || (form == FORM_NAMES && name_kind == AMP_NONE))
        return false; /* mixed with something else, or a path we do not rewrite */
    uint32_t from = imp->def < m->defs.len ? ix->use_begin[imp->def] : 0;
    uint32_t to = imp->def < m->defs.len ? ix->use_begin[imp->def + 1] : 0;
    for (uint32_t u = from; u < to; u++) {
        ol_nid n = ix->uses[u];
        if (ol_contains(t, imp->stmt, n))
            continue;
        uint32_t defs[32];
        size_t count = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, 32);
        if (count == 32 || !join_reaching_imports(m, ix, imp, defs, count, groups))
            return false;
        if (count > 1) {
            if (nid_in(uses, n))
                continue; /* rewritten already, through another import of the name */
            ol_vec_push(uses, n);
        }
        bool decorator;
        if (form == FORM_NAMES) {
            ol_nid call = call_of_callee(t, n, &decorator);
            if ((call == OL_NONE && !decorator) || !add_argument_edits(t, fix, name_kind, call, n))
                return false;
        } else {
            ol_nid attr = ol_parent(t, n);
            if (attr == OL_NONE || ol_kind_of(t, attr) != OL_N_attribute || ol_field(t, attr, OL_F_object) != n)
                return false;
            ol_nid attr_name = ol_field(t, attr, OL_F_attribute);
            if (attr_name == OL_NONE)
                return false; /* `amp.` cut short by a syntax error */
            char *name = ol_node_str(t, attr_name);
            amp_kind k = kind_of_name(name);
            free(name);
            ol_nid call = call_of_callee(t, attr, &decorator);
            if (k == AMP_NONE || (call == OL_NONE && !decorator) || !add_argument_edits(t, fix, k, call, attr))
                return false;
        }
    }
    return true;
}

/* Rewrites an import statement's line to torch.amp. */
static bool rewrite_import_line(ol_model *m, size_t first, size_t last, ol_fix *fix)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = m->imports.items[first].stmt;
    if (ol_kind_of(t, stmt) == OL_N_import_from_statement) {
        ol_nid module = ol_field(t, stmt, OL_F_module_name);
        if (module == OL_NONE)
            return false;
        const char *mq = NULL;
        for (size_t i = first; i < last; i++)
            if (m->imports.items[i].def != OL_NO_INDEX)
                mq = form_of(m, &m->imports.items[i]) == FORM_NAMES ? "torch.amp" : "torch";
        ol_fix_edit(fix, ol_node_at(t, module)->start, ol_node_at(t, module)->end, mq ? mq : "torch.amp");
    } else {
        for (size_t i = first; i < last; i++) {
            const ol_import *imp = &m->imports.items[i];
            if (imp->def != OL_NO_INDEX)
                ol_fix_edit(fix, ol_node_at(t, imp->name_node)->start, ol_node_at(t, imp->name_node)->end,
                            "torch.amp");
        }
    }
    return true;
}

/* Builds the fix for one import statement (and any other deprecated import
 * of the same names reaching the same uses), or NULL if it cannot be fixed. */
static ol_fix *build_import_fix(ol_model *m, const amp_index *ix, uint32_t group)
{
    ol_fix *fix = ol_fix_new(false, "Import from torch.amp and pass the device explicitly");
    bool ok = true;
    bool any = false;
    nid_list groups = {0}, uses = {0};
    ol_vec_push(&groups, group);
    for (size_t gi = 0; gi < groups.len && ok; gi++) {
        size_t first, last;
        group_range(m, ix, (uint32_t)groups.items[gi], &first, &last);
        for (size_t i = first; i < last && ok; i++) {
            const ol_import *imp = &m->imports.items[i];
            if (imp->def == OL_NO_INDEX)
                continue;
            any = true;
            ok = rewrite_uses(m, ix, imp, fix, &groups, &uses);
        }
    }
    /* the import lines themselves */
    for (size_t gi = 0; gi < groups.len && ok && any; gi++) {
        size_t first, last;
        group_range(m, ix, (uint32_t)groups.items[gi], &first, &last);
        ok = rewrite_import_line(m, first, last, fix);
    }
    ol_vec_free(&groups);
    ol_vec_free(&uses);
    if (!ok || !any || !ol_fix_normalize(fix)) {
        ol_fix_free(fix);
        return NULL;
    }
    return fix;
}

/* The group of the deprecated import statement a name reference goes
 * through, or UINT32_MAX. */
static uint32_t import_group_of_use(ol_model *m, const amp_index *ix, ol_nid expr)
{
    const ol_tree *t = m->tree;
    ol_nid root = ol_unparen(t, expr);
    while (ol_kind_of(t, root) == OL_N_attribute)
        root = ol_field(t, root, OL_F_object);
    if (ol_kind_of(t, root) != OL_N_identifier)
        return UINT32_MAX;
    uint32_t defs[8];
    size_t count = ol_reaching_defs(m, m->node_scope[root], ol_node_sym(m, root), root, defs, 8);
    for (size_t i = 0; i < count; i++) {
        if (defs[i] >= m->defs.len || !ix->import_of_def[defs[i]])
            continue;
        uint32_t j = ix->import_of_def[defs[i]] - 1;
        import_form form = form_of(m, &m->imports.items[j]);
        if (form == FORM_NAMES || form == FORM_MODULE)
            return ix->group_of_import[j];
    }
    return UINT32_MAX;
}

/* Is cond a test that the deprecated API exists (`hasattr(torch.cuda.amp,
 * "autocast")`, `hasattr(torch.cuda, "amp") and ...`), every part of it,
 * none negated? Its true branch runs on every release that has the API, all
 * of 2.x included: the API used there is the API in use, not a fallback. */
static bool probes_deprecated(ol_model *m, ol_nid cond)
{
    const ol_tree *t = m->tree;
    cond = ol_unparen(t, cond);
    ol_kind k = ol_kind_of(t, cond);
    if (k == OL_N_boolean_operator) {
        ol_nid op = ol_field(t, cond, OL_F_operator);
        return op != OL_NONE && ol_text_is(t, op, "and") && probes_deprecated(m, ol_field(t, cond, OL_F_left)) &&
               probes_deprecated(m, ol_field(t, cond, OL_F_right));
    }
    if (k != OL_N_call || !ol_text_is(t, ol_field(t, cond, OL_F_function), "hasattr"))
        return false;
    const char *q = ol_qualname(m, ol_call_arg(m, cond, 0, NULL));
    ol_nid attr = ol_call_arg(m, cond, 1, NULL);
    const char *s;
    uint32_t len;
    if (!q || attr == OL_NONE || !ol_string_value(t, attr, &s, &len))
        return false;
    if (strcmp(q, "torch.cuda") == 0)
        return len == 3 && memcmp(s, "amp", 3) == 0;
    return strcmp(q, "torch.cuda.amp") == 0 || ol_str_has_prefix(q, "torch.cuda.amp.");
}

/* Version-compatibility code: the deprecated name in the fallback branch of
 * a torch version test, or in an except handler after trying the new API.
 * It only runs on PyTorch releases where nothing is deprecated. The branch
 * a test of the deprecated API's own existence selects (probes_deprecated)
 * is not: it runs wherever the API exists. */
static bool compat_fallback(ol_model *m, ol_nid n, ol_nid *guard)
{
    *guard = OL_NONE;
    const ol_tree *t = m->tree;
    static const char *const markers[] = {"version", "VERSION", "hasattr", "GREATER", "LESS", "TORCH_", "_TORCH",
                                          "torch_", NULL};
    for (ol_nid a = n, p = ol_parent(t, n); p != OL_NONE; a = p, p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        ol_nid cond = OL_NONE;
        if (k == OL_N_except_clause)
            return true;
        if (k == OL_N_conditional_expression) {
            cond = ol_named_child(t, p, 1);
            if (a == ol_named_child(t, p, 0) && probes_deprecated(m, cond)) {
                *guard = cond;
                continue;
            }
        } else if (k == OL_N_if_statement || k == OL_N_elif_clause) {
            cond = ol_field(t, p, OL_F_condition);
            if (a == ol_field(t, p, OL_F_consequence) && probes_deprecated(m, cond)) {
                *guard = cond;
                continue;
            }
        }
        else if (k == OL_N_else_clause) {
            ol_nid owner = ol_parent(t, p);
            cond = owner != OL_NONE ? ol_field(t, owner, OL_F_condition) : OL_NONE;
        }
        if (cond == OL_NONE)
            continue;
        uint32_t len;
        const char *s = ol_text(t, cond, &len);
        for (const char *const *mk = markers; *mk; mk++) {
            size_t ml = strlen(*mk);
            for (uint32_t i = 0; i + ml <= len; i++)
                if (memcmp(s + i, *mk, ml) == 0)
                    return true;
        }
    }
    return false;
}

/* ---- the check -------------------------------------------------------------- */

/* The evidence of a use behind a guard that tests for the deprecated API
 * itself (compat_fallback's guard). */
static void note_guard(ol_check *c, ol_diag *d, ol_nid guard)
{
    if (guard == OL_NONE)
        return;
    ol_reasons why = {0};
    char *text = ol_node_str_short(c->tree, guard);
    ol_because(&why, c->model, guard,
               "`%s` holds on every release that has the deprecated API, PyTorch 2.4 and later included: this "
               "branch runs there",
               text);
    free(text);
    ol_diag_because(d, c->model, &why);
}

static void report_use(ol_check *c, amp_index *ix, ol_nid expr, ol_nid call, const char *q, ol_nid guard)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    amp_kind kind = kind_of_qual(q);
    const char *name = strrchr(q, '.') + 1;
    char *written = ol_node_str(t, expr);
    ol_diag *d;
    if (strcmp(written, q) == 0)
        d = ol_report_node(c, expr, "`%s` is deprecated since PyTorch 2.4; it warns on every use and will be removed",
                           q);
    else
        d = ol_report_node(c, expr,
                           "`%s` is `%s`, deprecated since PyTorch 2.4; it warns on every use and will be removed",
                           written, q);
    free(written);
    ol_diag_help(d, "%s", replacement_help(kind, name));
    note_guard(c, d, guard);
    ol_fix *fix = NULL;
    uint32_t group = import_group_of_use(m, ix, expr);
    if (group != UINT32_MAX) {
        /* the statement's fix rewrites every use: each use's finding offers
         * it too, unless it is so big that repeating it on every use would
         * make the report grow with the square of the uses (the import
         * line's finding always offers it) */
        fix = import_fix(m, ix, group, SHARED_FIX_MAX_EDITS);
    } else if (kind != AMP_OTHER) {
        fix = ol_fix_new(false, "Use torch.amp with an explicit device");
        if (!add_chain_edit(t, fix, expr) || !add_argument_edits(t, fix, kind, call, expr)) {
            ol_fix_free(fix);
            fix = NULL;
        }
    }
    ol_diag_attach_fix(d, fix);
}

/* `torch.cuda.amp.autocast` used as a value, not called on the spot:
 * `ctx = torch.cuda.amp.autocast if fp16 else nullcontext`, then `with
 * ctx():`. The call that runs it is a plain name, so the calls above miss
 * it. No fix: the torch.amp replacement needs a device where it is called. */
static void report_references(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        if (ol_kind_of(t, n) != OL_N_attribute)
            continue;
        ol_nid attr = ol_field(t, n, OL_F_attribute);
        if (attr == OL_NONE)
            continue; /* `amp.` cut short by a syntax error */
        uint32_t len;
        const char *name = ol_text(t, attr, &len);
        if (!ol_mem_eq_cstr(name, len, "autocast") && !ol_mem_eq_cstr(name, len, "GradScaler") &&
            !ol_mem_eq_cstr(name, len, "custom_fwd") && !ol_mem_eq_cstr(name, len, "custom_bwd"))
            continue;
        ol_nid up = n, p = ol_parent(t, n);
        while (p != OL_NONE && ol_kind_of(t, p) == OL_N_parenthesized_expression)
            up = p, p = ol_parent(t, p);
        ol_kind pk = p != OL_NONE ? ol_kind_of(t, p) : OL_N_module;
        if ((pk == OL_N_call && ol_field(t, p, OL_F_function) == up) || pk == OL_N_decorator ||
            (pk == OL_N_attribute && ol_field(t, p, OL_F_object) == up))
            continue; /* called or decorating: reported above; or a deeper path */
        const char *q = ol_qualname(m, n);
        ol_nid guard;
        if (kind_of_qual(q) == AMP_NONE || compat_fallback(m, n, &guard))
            continue;
        ol_diag *d = ol_report_node(c, n,
                                    "`%s` is deprecated since PyTorch 2.4; it warns on every use and will be removed",
                                    q);
        ol_diag_help(d, "%s", replacement_help(kind_of_qual(q), strrchr(q, '.') + 1));
        note_guard(c, d, guard);
    }
}

/* Does an edit of the fix change a line that names GradScaler (the import
 * of it, a call of it)? */
static bool fix_touches_scaler(const ol_source *src, const ol_fix *fix)
{
    for (size_t i = 0; i < fix->edits.len; i++) {
        uint32_t line = ol_source_line_index(src, fix->edits.items[i].start);
        uint32_t len;
        const char *text = ol_source_line(src, line, &len);
        for (uint32_t k = 0; text && k + 10 <= len; k++)
            if (memcmp(text + k, "GradScaler", 10) == 0)
                return true;
    }
    return false;
}

/* `torch.amp.GradScaler("cuda")` exists from PyTorch 2.3: a fix that writes
 * it is unsafe in a project that declares an older torch floor
 * (requirements, pyproject.toml, setup.py, ...: torchfloor.h). */
static void scaler_fixes_need_torch_2_3(ol_check *c, size_t first)
{
    unsigned floor = 0;
    bool known = false;
    for (size_t i = first; i < c->out->len; i++) {
        ol_fix *fix = c->out->items[i].fix;
        if (!fix || fix->unsafe || !fix_touches_scaler(c->src, fix))
            continue;
        if (!known) {
            floor = ol_project_torch_floor(c->src->path);
            known = true;
        }
        /* no declared floor: the code is written for whatever torch is at
         * hand, and the deprecation warning says that one has torch.amp */
        if (floor == 0 || floor >= 203)
            continue;
        ol_fix_unsafe_because(fix, "`torch.amp.GradScaler(\"cuda\")` needs PyTorch 2.3, and the project allows "
                                   "torch %u.%u",
                              floor / 100, floor % 100);
    }
}

/* torch.cpu.amp's deprecated names, also as the modules that define them. */
static const char *const CPU_AMP[] = {"torch.cpu.amp.autocast", "torch.cpu.amp.GradScaler",
                                      "torch.cpu.amp.autocast_mode.autocast",
                                      "torch.cpu.amp.grad_scaler.GradScaler", NULL};

static void check(ol_check *c)
{
    size_t first_diag = c->out->len;
    ol_model *m = c->model;
    const ol_tree *t = c->tree;
    amp_index ix;
    index_build(m, &ix);

    /* import lines, one finding per statement */
    ol_nid last_stmt = OL_NONE;
    for (size_t i = 0; i < m->imports.len; i++) {
        const ol_import *imp = &m->imports.items[i];
        import_form form = form_of(m, imp);
        ol_nid guard;
        if (form == FORM_NONE || imp->stmt == last_stmt || compat_fallback(m, imp->stmt, &guard))
            continue;
        last_stmt = imp->stmt;
        char *line = ol_node_str(t, imp->stmt);
        /* quote only the first line of a parenthesized import */
        char *nl = strchr(line, '\n');
        if (nl)
            strcpy(nl, " ...");
        ol_diag *d = ol_report_node(c, imp->stmt, "`%s` imports the CUDA AMP API deprecated since PyTorch 2.4", line);
        free(line);
        ol_diag_help(d, "import from `torch.amp` and pass the device: `autocast(\"cuda\", ...)`, "
                        "`GradScaler(\"cuda\")`, `@custom_fwd(device_type=\"cuda\")`");
        note_guard(c, d, guard);
        ol_diag_attach_fix(d, import_fix(m, &ix, ix.group_of_import[i], SIZE_MAX));
    }

    /* calls */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        const char *q = ol_qualname(m, call->callee);
        ol_nid guard;
        if (kind_of_qual(q) == AMP_NONE || compat_fallback(m, call->node, &guard))
            continue;
        report_use(c, &ix, ol_unparen(t, call->callee), call->node, q, guard);
    }

    /* bare decorators: @torch.cuda.amp.custom_fwd */
    for (size_t i = 0; i < m->functions.len; i++) {
        ol_nid dec = m->functions.items[i].decorated;
        if (dec == OL_NONE)
            continue;
        for (ol_nid d = ol_first_named(t, dec); d != OL_NONE; d = ol_next_named(t, d)) {
            if (ol_kind_of(t, d) != OL_N_decorator)
                continue;
            ol_nid e = ol_first_named(t, d);
            if (ol_kind_of(t, e) == OL_N_call)
                continue; /* a call: reported above */
            const char *q = ol_qualname(m, e);
            if (kind_of_qual(q) == AMP_NONE)
                continue;
            report_use(c, &ix, e, OL_NONE, q, OL_NONE);
        }
    }

    /* torch.cpu.amp.autocast / GradScaler: deprecated the same way, for the CPU */
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!ol_call_is(m, m->calls.items[i].node, CPU_AMP))
            continue;
        bool scaler = strstr(ol_qualname(m, m->calls.items[i].callee), "GradScaler") != NULL;
        ol_diag *d = ol_report_node(c, m->calls.items[i].node,
                                    "`%s` is deprecated since PyTorch 2.4; it warns on every use and will be "
                                    "removed",
                                    scaler ? "torch.cpu.amp.GradScaler" : "torch.cpu.amp.autocast");
        ol_diag_help(d, "%s", scaler ? "use `torch.amp.GradScaler(\"cpu\")`"
                                     : "use `torch.amp.autocast(\"cpu\", ...)` (bfloat16 by default on the CPU)");
    }
    report_references(c);
    index_free(&ix);
    scaler_fixes_need_torch_2_3(c, first_diag);
}

const ol_rule ol_rule_oom502 = {
    .code = "OOM502",
    .name = "deprecated-cuda-amp",
    .severity = OL_SEV_WARNING,
    .in_tests = true,
    .summary = "Uses the deprecated `torch.cuda.amp` API instead of `torch.amp` with an explicit device.",
    .what = "Flags `torch.cuda.amp.autocast(...)`, `torch.cuda.amp.GradScaler(...)`, "
            "`@torch.cuda.amp.custom_fwd` / `custom_bwd`, however they are imported "
            "(`from torch.cuda.amp import autocast`, `from torch.cuda import amp`, `import torch as T`), "
            "the `from torch.cuda.amp import ...` / `from torch.cuda import amp` lines themselves, and "
            "the API used as a value (`ctx = torch.cuda.amp.autocast if fp16 else nullcontext`). "
            "`torch.cpu.amp.autocast(...)` and `torch.cpu.amp.GradScaler(...)`, deprecated the same way, "
            "are flagged too (without a fix).",
    .why = "Since PyTorch 2.4 these emit a FutureWarning on every call (once per training step for "
           "autocast) and are slated for removal; the replacement names the device, so the same code "
           "also runs mixed precision on CPU, XPU or MPS by changing one string. The old autocast takes "
           "`enabled` as its first positional argument while the new one takes the device, so a "
           "careless rename changes behaviour; the fix rewrites positional arguments as keywords.",
    .example = "from torch.cuda.amp import autocast, GradScaler\n\n"
               "scaler = GradScaler()\n"
               "for x, y in loader:\n"
               "    with autocast():\n"
               "        loss = criterion(model(x), y)\n"
               "    scaler.scale(loss).backward()",
    .instead = "from torch.amp import autocast, GradScaler\n\n"
               "scaler = GradScaler(\"cuda\")\n"
               "for x, y in loader:\n"
               "    with autocast(\"cuda\"):\n"
               "        loss = criterion(model(x), y)\n"
               "    scaler.scale(loss).backward()",
    .fix = "Safe: renames `torch.cuda.amp` to `torch.amp`, adds the \"cuda\" device, and turns "
           "positional autocast arguments into keywords. For imported names, the import line and every "
           "use are fixed together; no fix is offered when a use cannot be rewritten.",
    .fix_safety = "Safe: `torch.amp.autocast(\"cuda\", ...)` and `torch.amp.GradScaler(\"cuda\", ...)` are what "
                  "the deprecated `torch.cuda.amp` names call, with the same arguments. But "
                  "`torch.amp.GradScaler` exists from PyTorch 2.3: a fix that writes it is unsafe, and says so, "
                  "when the project's declared torch floor (the nearest requirements*.txt, pyproject.toml, "
                  "setup.cfg, setup.py or environment.yml above the file that bounds torch from below) is older.",
    .tags = "deprecation,mixed-precision",
    .precision = "very-high",
    .check = check,
};
