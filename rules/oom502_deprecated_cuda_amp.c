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
#include <stdlib.h>
#include <string.h>

#include "rule.h"

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

/* Is identifier `n` a reference that resolves to import def `def`? Its
 * reaching definitions (up to `cap`) are left in defs / *count. */
static bool refers_to(ol_model *m, ol_nid n, uint32_t def, uint32_t *defs, size_t cap, size_t *count)
{
    const ol_tree *t = m->tree;
    *count = 0;
    ol_nid p = ol_parent(t, n);
    ol_field_id f = (ol_field_id)ol_node_at(t, n)->field;
    if (p != OL_NONE && ol_kind_of(t, p) == OL_N_attribute && f == OL_F_attribute)
        return false;
    if (p != OL_NONE && ol_kind_of(t, p) == OL_N_keyword_argument && f == OL_F_name)
        return false;
    /* names inside import statements are not references */
    if (p != OL_NONE && (ol_kind_of(t, p) == OL_N_dotted_name || ol_kind_of(t, p) == OL_N_aliased_import))
        return false;
    *count = ol_reaching_defs(m, m->node_scope[n], ol_node_sym(m, n), n, defs, cap);
    for (size_t i = 0; i < *count; i++)
        if (defs[i] == def)
            return true;
    return false;
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
 * call again. Adds the statements to `stmts`; false when some other
 * definition (the new torch.amp name, an assignment) reaches the use. */
static bool join_reaching_imports(ol_model *m, const ol_import *imp, const uint32_t *defs, size_t count,
                                  nid_list *stmts)
{
    for (size_t d = 0; d < count; d++) {
        if (defs[d] == imp->def)
            continue;
        const ol_import *other = NULL;
        for (size_t j = 0; j < m->imports.len && !other; j++)
            if (m->imports.items[j].def == defs[d])
                other = &m->imports.items[j];
        if (!other || other->qual != imp->qual || form_of(m, other) != form_of(m, imp))
            return false;
        if (!nid_in(stmts, other->stmt))
            ol_vec_push(stmts, other->stmt);
    }
    return true;
}

/* Builds the fix for one import statement (and any other deprecated import
 * of the same names reaching the same uses), or NULL if it cannot be fixed. */
static ol_fix *import_fix(ol_model *m, ol_nid first_stmt)
{
    const ol_tree *t = m->tree;
    ol_fix *fix = ol_fix_new(false, "Import from torch.amp and pass the device explicitly");
    bool ok = true;
    bool any = false;
    nid_list stmts = {0}, uses = {0};
    ol_vec_push(&stmts, first_stmt);
    for (size_t si = 0; si < stmts.len && ok; si++) {
        ol_nid stmt = stmts.items[si];
        for (size_t i = 0; i < m->imports.len && ok; i++) {
            const ol_import *imp = &m->imports.items[i];
            if (imp->stmt != stmt || imp->def == OL_NO_INDEX)
                continue;
            import_form form = form_of(m, imp);
            if (form == FORM_NONE || form == FORM_SUBMODULE) {
                ok = false; /* mixed with something else, or a path we do not rewrite */
                break;
            }
            any = true;
            const char *q = ol_sym_str(m, imp->qual);
            amp_kind name_kind = form == FORM_NAMES ? kind_of_name(q + strlen("torch.cuda.amp.")) : AMP_NONE;
            if (form == FORM_NAMES && name_kind == AMP_NONE) {
                ok = false;
                break;
            }
            /* every use must be a call or decorator we can rewrite */
            for (ol_nid n = 0; n < t->nodes.len && ok; n++) {
                if (ol_kind_of(t, n) != OL_N_identifier || ol_node_sym(m, n) != imp->bound ||
                    ol_contains(t, stmt, n))
                    continue;
                uint32_t defs[32];
                size_t count;
                if (!refers_to(m, n, imp->def, defs, 32, &count))
                    continue;
                if (count == 32 || !join_reaching_imports(m, imp, defs, count, &stmts)) {
                    ok = false;
                    break;
                }
                if (nid_in(&uses, n))
                    continue; /* rewritten already, through another import of the name */
                ol_vec_push(&uses, n);
                bool decorator;
                if (form == FORM_NAMES) {
                    ol_nid call = call_of_callee(t, n, &decorator);
                    if (call == OL_NONE && !decorator)
                        ok = false;
                    else
                        ok = add_argument_edits(t, fix, name_kind, call, n);
                } else {
                    ol_nid attr = ol_parent(t, n);
                    if (attr == OL_NONE || ol_kind_of(t, attr) != OL_N_attribute ||
                        ol_field(t, attr, OL_F_object) != n) {
                        ok = false;
                        break;
                    }
                    char *name = ol_node_str(t, ol_field(t, attr, OL_F_attribute));
                    amp_kind k = kind_of_name(name);
                    free(name);
                    ol_nid call = call_of_callee(t, attr, &decorator);
                    if (k == AMP_NONE || (call == OL_NONE && !decorator))
                        ok = false;
                    else
                        ok = add_argument_edits(t, fix, k, call, attr);
                }
            }
        }
    }
    ol_vec_free(&uses);
    if (!ok || !any) {
        ol_vec_free(&stmts);
        ol_fix_free(fix);
        return NULL;
    }
    /* the import lines themselves */
    for (size_t si = 0; si < stmts.len; si++) {
        ol_nid stmt = stmts.items[si];
        if (ol_kind_of(t, stmt) == OL_N_import_from_statement) {
            ol_nid module = ol_field(t, stmt, OL_F_module_name);
            const char *mq = NULL;
            for (size_t i = 0; i < m->imports.len; i++)
                if (m->imports.items[i].stmt == stmt && m->imports.items[i].def != OL_NO_INDEX)
                    mq = form_of(m, &m->imports.items[i]) == FORM_NAMES ? "torch.amp" : "torch";
            ol_fix_edit(fix, ol_node_at(t, module)->start, ol_node_at(t, module)->end, mq ? mq : "torch.amp");
        } else {
            for (size_t i = 0; i < m->imports.len; i++) {
                const ol_import *imp = &m->imports.items[i];
                if (imp->stmt == stmt && imp->def != OL_NO_INDEX)
                    ol_fix_edit(fix, ol_node_at(t, imp->name_node)->start, ol_node_at(t, imp->name_node)->end,
                                "torch.amp");
            }
        }
    }
    ol_vec_free(&stmts);
    if (!ol_fix_normalize(fix)) {
        ol_fix_free(fix);
        return NULL;
    }
    return fix;
}

/* The deprecated import statement a name reference goes through, if any. */
static ol_nid import_stmt_of_use(ol_model *m, ol_nid expr)
{
    const ol_tree *t = m->tree;
    ol_nid root = ol_unparen(t, expr);
    while (ol_kind_of(t, root) == OL_N_attribute)
        root = ol_field(t, root, OL_F_object);
    if (ol_kind_of(t, root) != OL_N_identifier)
        return OL_NONE;
    uint32_t defs[8];
    size_t count = ol_reaching_defs(m, m->node_scope[root], ol_node_sym(m, root), root, defs, 8);
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < m->imports.len; j++) {
            const ol_import *imp = &m->imports.items[j];
            if (imp->def == defs[i] && (form_of(m, imp) == FORM_NAMES || form_of(m, imp) == FORM_MODULE))
                return imp->stmt;
        }
    }
    return OL_NONE;
}

/* Version-compatibility code: the deprecated name in the fallback branch of
 * a torch version test, or in an except handler after trying the new API.
 * It only runs on PyTorch releases where nothing is deprecated. */
static bool compat_fallback(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    static const char *const markers[] = {"version", "VERSION", "hasattr", "GREATER", "LESS", "TORCH_", "_TORCH",
                                          "torch_", NULL};
    for (ol_nid p = ol_parent(t, n); p != OL_NONE; p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        ol_nid cond = OL_NONE;
        if (k == OL_N_except_clause)
            return true;
        if (k == OL_N_conditional_expression)
            cond = ol_named_child(t, p, 1);
        else if (k == OL_N_if_statement || k == OL_N_elif_clause)
            cond = ol_field(t, p, OL_F_condition);
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

static void report_use(ol_check *c, ol_nid expr, ol_nid call, const char *q)
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
    ol_fix *fix = NULL;
    ol_nid stmt = import_stmt_of_use(m, expr);
    if (stmt != OL_NONE) {
        fix = import_fix(m, stmt);
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
        uint32_t len;
        const char *name = ol_text(t, ol_field(t, n, OL_F_attribute), &len);
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
        if (kind_of_qual(q) == AMP_NONE || compat_fallback(m, n))
            continue;
        ol_diag *d = ol_report_node(c, n,
                                    "`%s` is deprecated since PyTorch 2.4; it warns on every use and will be removed",
                                    q);
        ol_diag_help(d, "%s", replacement_help(kind_of_qual(q), strrchr(q, '.') + 1));
    }
}

static void check(ol_check *c)
{
    ol_model *m = c->model;
    const ol_tree *t = c->tree;

    /* import lines, one finding per statement */
    ol_nid last_stmt = OL_NONE;
    for (size_t i = 0; i < m->imports.len; i++) {
        const ol_import *imp = &m->imports.items[i];
        import_form form = form_of(m, imp);
        if (form == FORM_NONE || imp->stmt == last_stmt || compat_fallback(m, imp->stmt))
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
        ol_diag_attach_fix(d, import_fix(m, imp->stmt));
    }

    /* calls */
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *call = &m->calls.items[i];
        const char *q = ol_qualname(m, call->callee);
        if (kind_of_qual(q) == AMP_NONE || compat_fallback(m, call->node))
            continue;
        report_use(c, ol_unparen(t, call->callee), call->node, q);
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
            report_use(c, e, OL_NONE, q);
        }
    }

    report_references(c);
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
            "the API used as a value (`ctx = torch.cuda.amp.autocast if fp16 else nullcontext`).",
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
    .tags = "deprecation,mixed-precision",
    .precision = "very-high",
    .check = check,
};
