/*
 * ask_load.c - what does this load hold? (ask.h)
 *
 * `torch.load` restores tensors onto the device they were saved from: a
 * checkpoint written on GPU 0 lands on GPU 0 in every process that loads
 * it. Whether a load can bring GPU tensors back is a question about the
 * file it reads, answered from what the code shows of it:
 *
 *   - what it is read as: pickles of plain data named for what they hold (a
 *     vocabulary, a config, parsed arguments, label maps), the state of a
 *     GradScaler or an LR scheduler (numbers, not device tensors), or what
 *     the code hands to `.numpy()`, `np.asarray`, a plot or `json.dump`,
 *     which raise on a CUDA tensor (hostuse.h), never restored or moved;
 *   - who writes it: a `torch.save` of this file with host data only
 *     (`torch.save(feats.cpu(), os.path.join(d, "feats.pth"))`), linked by a
 *     file-name literal, by the shape of the path (saves.h, ol_path_shapes)
 *     or by the keys the load is read through; or, in a run of several files,
 *     such a save in another file (the summaries record every file's saves);
 *     a per-rank file that this source writes and reads back is restored by
 *     its own rank onto its own device;
 *   - where it comes from: weights PyTorch's model zoo publishes, or
 *     weights a run that saves nothing of a device loads in code that runs
 *     without a GPU (published_for_cpu).
 *
 * The caches of one file (its saves, the uses of each loaded name, what
 * each load is read as) are built on the first question and kept in the
 * door's state until the model is freed.
 */
#include "ask_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataflow.h"
#include "facts.h"
#include "hardware.h"
#include "hostuse.h"
#include "saves.h"
#include "summary.h"

/* `n` is (through parentheses, subscripts and keywords) an argument of an
 * `x.load_state_dict(...)` call, which copies onto the model's own devices;
 * *receiver (when given) is set to x. */
static bool feeds_state_receiver(ol_model *m, ol_nid n, ol_nid *receiver)
{
    const ol_tree *t = m->tree;
    for (ol_nid p = ol_parent(t, n); p != OL_NONE; n = p, p = ol_parent(t, p)) {
        ol_kind k = ol_kind_of(t, p);
        if (k == OL_N_parenthesized_expression || k == OL_N_keyword_argument ||
            (k == OL_N_subscript && ol_field(t, p, OL_F_value) == n))
            continue;
        if (k != OL_N_argument_list)
            return false;
        uint32_t ci = ol_call_at(m, ol_parent(t, p));
        bool feeds = ci != OL_NO_INDEX && m->calls.items[ci].receiver != OL_NONE &&
                     strcmp(ol_sym_str(m, m->calls.items[ci].name), "load_state_dict") == 0;
        if (feeds && receiver)
            *receiver = ol_unparen(t, m->calls.items[ci].receiver);
        return feeds;
    }
    return false;
}

static bool feeds_load_state_dict(ol_model *m, ol_nid n)
{
    return feeds_state_receiver(m, n, NULL);
}

/* A GradScaler or an LR scheduler: their state is numbers, never tensors on
 * a device. */
static bool holds_no_device_state(ol_model *m, ol_nid receiver)
{
    ol_val v = ol_eval(m, receiver);
    if (v.kind == OL_V_SCALER || v.kind == OL_V_SCHEDULER)
        return true;
    if (v.kind == OL_V_OPTIMIZER || v.kind == OL_V_MODULE)
        return false;
    static const char *const words[] = {"scaler", "scheduler", "sched", NULL};
    const ol_tree *t = m->tree;
    ol_nid name = ol_kind_of(t, receiver) == OL_N_attribute ? ol_field(t, receiver, OL_F_attribute) : receiver;
    uint32_t len;
    const char *s = name != OL_NONE && ol_kind_of(t, name) == OL_N_identifier ? ol_text(t, name, &len) : NULL;
    return s && ol_name_looks_like(s, len, words);
}

/* `ckpt["epoch"]`, `ckpt.get("best_acc")`: bookkeeping read from a checkpoint,
 * the same on any device. */
static bool reads_metadata(ol_model *m, ol_nid use)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, use), key = OL_NONE;
    if (ol_kind_of(t, p) == OL_N_subscript && ol_field(t, p, OL_F_value) == use)
        key = ol_field(t, p, OL_F_subscript);
    else if (ol_kind_of(t, p) == OL_N_attribute && ol_text_is(t, ol_field(t, p, OL_F_attribute), "get")) {
        uint32_t ci = ol_call_at(m, ol_parent(t, p));
        if (ci != OL_NO_INDEX)
            key = ol_call_arg(m, m->calls.items[ci].node, 0, NULL);
    }
    if (key == OL_NONE || ol_kind_of(t, key) != OL_N_string)
        return false;
    static const char *const words[] = {"epoch", "step", "iter", "iteration", "best", "acc", "accuracy", "loss",
                                        "args", "config", "cfg", "lr", "score", "metric", "metrics", "version",
                                        NULL};
    char *text = ol_node_str(t, key);
    bool known = false;
    for (size_t i = 0; words[i] && !known; i++)
        known = strstr(text, words[i]) != NULL;
    free(text);
    return known;
}

static bool is_url_loader(const char *q)
{
    return q && (strcmp(q, "torch.utils.model_zoo.load_url") == 0 ||
                 strcmp(q, "torch.hub.load_state_dict_from_url") == 0);
}

static bool is_torch_load(const char *q)
{
    /* also the loaders of a checkpoint from a URL, which hand torch.load the
     * map_location they are given */
    return ol_is_torch_load(q) || is_url_loader(q);
}

#define URL_VALUES_MAX 32

/* The string values a URL argument can take: a literal, a name bound to
 * one, an entry of a dict literal bound to a name (`model_urls["resnet18"]`,
 * or any of its values for another key), a parameter given such values by
 * every call of its function here; None adds none (a table's entry for a
 * model published nowhere); false when any value is something else. */
static bool url_values(ol_model *m, ol_nid e, const char **s, uint32_t *len, size_t *n, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > 3 || *n >= URL_VALUES_MAX)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_string:
        if (!ol_string_value(t, e, &s[*n], &len[*n]))
            return false;
        ++*n;
        return true;
    case OL_N_none:
        return true; /* no URL: the load fails before it reads anything */
    case OL_N_identifier: {
        ol_nid v = ol_bound_value(m, e);
        if (v != OL_NONE)
            return url_values(m, v, s, len, n, depth + 1);
        /* a parameter: what its function's calls here pass for it
         * (`init_pretrained_weights(model, model_urls["resnet50"])`) */
        ol_nid values[OL_PARAM_SITES_MAX + 1];
        size_t nv = ol_door_name_param_values(m, e, values, OL_PARAM_SITES_MAX + 1);
        if (nv == SIZE_MAX || nv == 0)
            return false;
        for (size_t i = 0; i < nv; i++)
            if (!url_values(m, values[i], s, len, n, depth + 1))
                return false;
        return true;
    }
    case OL_N_subscript: {
        ol_nid dict = ol_bound_value(m, ol_field(t, e, OL_F_value));
        if (dict == OL_NONE || ol_kind_of(t, dict) != OL_N_dictionary)
            return false;
        ol_nid key = ol_field(t, e, OL_F_subscript);
        bool any = false;
        for (ol_nid p = ol_first_named(t, dict); p != OL_NONE; p = ol_next_named(t, p)) {
            if (ol_kind_of(t, p) != OL_N_pair)
                return false;
            ol_nid k = ol_field(t, p, OL_F_key);
            if (ol_kind_of(t, key) == OL_N_string && !ol_same_text(t, k, key))
                continue;
            if (!url_values(m, ol_field(t, p, OL_F_value), s, len, n, depth + 1))
                return false;
            any = true;
        }
        return any;
    }
    default:
        return false;
    }
}

/* Is url an entry of torchvision's own tables of model-zoo URLs
 * (`models.resnet.model_urls["resnet18"]`, `torchvision.models.vgg.
 * model_urls[arch]`, `model_urls[name]` imported from a torchvision.models
 * module)? Every URL in them is on download.pytorch.org; the tables are
 * not in this source to be read. */
static bool torchvision_zoo_url(ol_model *m, ol_nid url)
{
    const ol_tree *t = m->tree;
    url = ol_unparen(t, url);
    if (ol_kind_of(t, url) != OL_N_subscript)
        return false;
    const char *q = ol_qualname(m, ol_field(t, url, OL_F_value));
    static const char prefix[] = "torchvision.models.", suffix[] = ".model_urls";
    size_t ql = q ? strlen(q) : 0;
    return ql >= sizeof(prefix) - 1 + sizeof(suffix) - 2 && strncmp(q, prefix, sizeof(prefix) - 1) == 0 &&
           strcmp(q + ql - (sizeof(suffix) - 1), suffix) == 0;
}

/* Does a URL loader fetch weights that PyTorch's own model zoo publishes
 * (download.pytorch.org, and its first home on S3: torchvision's and
 * torchaudio's)? Those are saved
 * from the host: torchvision loads them with no map_location on machines
 * without a GPU. Weights from elsewhere may hold CUDA tensors (timm once
 * published such a checkpoint), so they stay reported. */
static bool pytorch_published(ol_model *m, ol_nid url)
{
    static const char *const hosts[] = {"https://download.pytorch.org/", "http://download.pytorch.org/",
                                        "https://s3.amazonaws.com/pytorch/", NULL};
    if (torchvision_zoo_url(m, url))
        return true;
    const char *s[URL_VALUES_MAX];
    uint32_t len[URL_VALUES_MAX];
    size_t n = 0;
    if (!url_values(m, url, s, len, &n, 0) || n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        bool ok = false;
        for (const char *const *h = hosts; *h && !ok; h++)
            ok = len[i] > strlen(*h) && strncmp(s[i], *h, strlen(*h)) == 0;
        if (!ok)
            return false;
    }
    return true;
}

/* The def a `name = torch.load(...)` statement makes, or OL_NO_INDEX.
 * def_of_target: per node, the index + 1 of the def binding it. */
static uint32_t load_def(ol_model *m, const uint32_t *def_of_target, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid stmt = ol_parent(t, call);
    if (ol_kind_of(t, stmt) != OL_N_assignment || ol_field(t, stmt, OL_F_right) != call)
        return OL_NO_INDEX;
    ol_nid target = ol_field(t, stmt, OL_F_left);
    if (ol_kind_of(t, target) != OL_N_identifier || target >= t->nodes.len)
        return OL_NO_INDEX;
    uint32_t d = def_of_target[target];
    /* the binding in the statement's own scope, as the assignment makes it */
    if (d == 0 || m->defs.items[d - 1].scope != m->node_scope[stmt])
        return OL_NO_INDEX;
    return d - 1;
}

typedef OL_VEC(ol_nid) nid_list;

/* `x.items()`, `x.values()`, `x.keys()` with x the node n: the whole dict
 * read, through whatever keys it was saved with. */
static bool iterates_dict(ol_model *m, ol_nid n)
{
    const ol_tree *t = m->tree;
    ol_nid p = ol_parent(t, n);
    if (p == OL_NONE || ol_kind_of(t, p) != OL_N_attribute || ol_field(t, p, OL_F_object) != n)
        return false;
    ol_nid attr = ol_field(t, p, OL_F_attribute);
    if (!ol_text_is(t, attr, "items") && !ol_text_is(t, attr, "values") && !ol_text_is(t, attr, "keys"))
        return false;
    ol_nid call = ol_parent(t, p);
    if (call == OL_NONE || ol_kind_of(t, call) != OL_N_call)
        return false;
    ol_nid args = ol_field(t, call, OL_F_arguments);
    return args != OL_NONE && ol_first_named(t, args) == OL_NONE;
}

/* How the uses of each loaded name's def look, found in one pass over the
 * file's identifiers (not one pass per load: a file of thousands of loads
 * stays linear). Per def: the uses after its statement that it reaches, and
 * whether any of them does more than restore state or read bookkeeping. */
typedef struct load_uses {
    uint32_t *uses;   /* per def */
    bool *other;      /* per def: a use that is neither */
    bool *not_host_state; /* per def: a use that does not restore a scaler's or scheduler's state */
    bool *not_key;        /* per def: a use that is not a read of `name["key"]` */
    bool *restores;       /* per def: a use that reaches load_state_dict */
    nid_list *keys;       /* per def: the string keys of those reads */
    nid_list *receivers;  /* per def: what its uses restore into (`model`, `optimizer`), a few */
    uint32_t *def_of_target; /* per node, see load_def */
    size_t count;            /* the entries of each per-def array (the model may be freed first) */
    /* the calls that move their receiver to the GPU (`net.cuda()`), by the
     * hash of the receiver's text, then in node order: built when first asked */
    uint64_t *move_hash;
    uint32_t *move_call;
    size_t moves_len;
    bool moves_built;
} load_uses;

static void load_uses_build(ol_model *m, load_uses *lu)
{
    const ol_tree *t = m->tree;
    lu->uses = ol_xcalloc(m->defs.len + 1, sizeof(uint32_t));
    lu->other = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    lu->not_host_state = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    lu->not_key = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    lu->restores = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    lu->keys = ol_xcalloc(m->defs.len + 1, sizeof(nid_list));
    lu->receivers = ol_xcalloc(m->defs.len + 1, sizeof(nid_list));
    lu->count = m->defs.len + 1;
    lu->def_of_target = ol_xcalloc(t->nodes.len + 1, sizeof(uint32_t));
    /* the last def of a target wins, as a scan of its chain would find */
    for (size_t d = 0; d < m->defs.len; d++)
        if (m->defs.items[d].target < t->nodes.len &&
            (!lu->def_of_target[m->defs.items[d].target] ||
             m->defs.items[d].scope == m->node_scope[m->defs.items[d].target]))
            lu->def_of_target[m->defs.items[d].target] = (uint32_t)d + 1;
    bool *is_load_def = ol_xcalloc(m->defs.len + 1, sizeof(bool));
    OL_VEC(ol_sym) names = {0};
    for (size_t i = 0; i < m->calls.len; i++) {
        if (!is_torch_load(ol_qualname(m, m->calls.items[i].callee)))
            continue;
        uint32_t d = load_def(m, lu->def_of_target, m->calls.items[i].node);
        if (d == OL_NO_INDEX || d >= m->defs.len)
            continue;
        is_load_def[d] = true;
        ol_vec_push(&names, m->defs.items[d].name);
    }
    ol_sort(names.items, names.len, sizeof(ol_sym), ol_cmp_u32);
    for (ol_nid u = 0; names.len > 0 && u < t->nodes.len; u++) {
        if (ol_kind_of(t, u) != OL_N_identifier || ol_node_at(t, u)->field == OL_F_attribute)
            continue;
        ol_sym name = ol_node_sym(m, u);
        if (!bsearch(&name, names.items, names.len, sizeof(ol_sym), ol_cmp_u32))
            continue;
        uint32_t defs[16];
        size_t n = ol_reaching_defs(m, m->node_scope[u], name, u, defs, 16);
        int benign = -1, host_state = -1, feeds = -1; /* computed once per use, when a load def is reached */
        ol_nid key = ol_read_key(t, u), receiver = OL_NONE;
        for (size_t k = 0; k < n; k++) {
            uint32_t d = defs[k];
            if (d >= m->defs.len || !is_load_def[d] || u < m->subtree_end[m->defs.items[d].stmt])
                continue;
            if (benign < 0) {
                feeds = feeds_state_receiver(m, u, &receiver);
                benign = feeds || reads_metadata(m, u);
                host_state = feeds && holds_no_device_state(m, receiver);
            }
            lu->uses[d]++;
            if (feeds) {
                lu->restores[d] = true;
                bool known = false;
                for (size_t r = 0; r < lu->receivers[d].len && !known; r++)
                    known = ol_same_text(t, lu->receivers[d].items[r], receiver);
                if (!known && !host_state && lu->receivers[d].len < 3)
                    ol_vec_push(&lu->receivers[d], receiver);
            }
            if (!benign)
                lu->other[d] = true;
            if (!host_state)
                lu->not_host_state[d] = true;
            if (key == OL_NONE) {
                if (!iterates_dict(m, u))
                    lu->not_key[d] = true;
            } else if (lu->keys[d].len < 16)
                ol_vec_push(&lu->keys[d], key);
            else
                lu->not_key[d] = true;
        }
    }
    free(is_load_def);
    ol_vec_free(&names);
}

/* The binding a load is assigned to (load_def), the uses read once first;
 * OL_NO_INDEX for none. */
static uint32_t load_binding(ol_model *m, load_uses *lu, ol_nid call)
{
    if (!lu->uses)
        load_uses_build(m, lu);
    uint32_t def = load_def(m, lu->def_of_target, call);
    return def < m->defs.len ? def : OL_NO_INDEX;
}

/* Moving the load to the CPU changes nothing when the result only reaches
 * load_state_dict (directly, or through a name whose every use does so or
 * reads bookkeeping). Anything else (a pickled model, a tensor used as is)
 * would now live on the CPU: that fix is unsafe. */
static bool only_restores_state(ol_model *m, load_uses *lu, ol_nid call)
{
    if (feeds_load_state_dict(m, call))
        return true;
    uint32_t def = load_binding(m, lu, call);
    return def != OL_NO_INDEX && lu->uses[def] > 0 && !lu->other[def];
}

/* The name a load is bound to (`vocab = torch.load(...)`, `self.cfg =
 * torch.load(...)`), or OL_NONE. */
static ol_nid bound_name(const ol_tree *t, ol_nid call)
{
    ol_nid stmt = ol_parent(t, call);
    if (ol_kind_of(t, stmt) != OL_N_assignment || ol_field(t, stmt, OL_F_right) != call)
        return OL_NONE;
    ol_nid target = ol_field(t, stmt, OL_F_left);
    if (ol_kind_of(t, target) == OL_N_attribute)
        target = ol_field(t, target, OL_F_attribute);
    return ol_kind_of(t, target) == OL_N_identifier ? target : OL_NONE;
}

/* Every use of what the load returns restores a scaler's or a scheduler's
 * state (directly, or through the name it is bound to). */
static bool restores_only_host_state(ol_model *m, load_uses *lu, ol_nid call)
{
    ol_nid receiver = OL_NONE;
    if (feeds_state_receiver(m, call, &receiver))
        return holds_no_device_state(m, receiver);
    uint32_t def = load_binding(m, lu, call);
    return def != OL_NO_INDEX && lu->uses[def] > 0 && !lu->not_host_state[def];
}

/* Plain data saved with torch.save: the load is bound to, or read from a
 * path named for, a vocabulary, a config, parsed arguments or a label map. */
static bool loads_plain_data(ol_model *m, ol_nid call, ol_nid path)
{
    static const char *const words[] = {"vocab", "vocabulary", "vocabs", "word2idx", "idx2word", "word2id",
                                        "id2word", "stoi", "itos", "tokenizer", "config", "cfg", "args",
                                        "hparams", "hyperparams", "meta", "metadata", "label2id", "id2label",
                                        "classes", "history", NULL};
    const ol_tree *t = m->tree;
    ol_nid target = bound_name(t, call);
    uint32_t len;
    if (target != OL_NONE) {
        const char *s = ol_text(t, target, &len);
        if (ol_name_looks_like(s, len, words))
            return true;
    }
    const char *s;
    /* `os.path.join(args.out, "training_args.bin")`, `Path(d) / "vocab.pt"`:
     * the file name is the last literal */
    path = path != OL_NONE ? ol_unparen(t, path) : OL_NONE;
    if (path != OL_NONE && ol_kind_of(t, path) == OL_N_call) {
        ol_nid args = ol_field(t, path, OL_F_arguments), last = OL_NONE;
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a))
            last = a;
        path = last;
    } else if (path != OL_NONE && ol_kind_of(t, path) == OL_N_binary_operator) {
        path = ol_field(t, path, OL_F_right);
    }
    if (path != OL_NONE && ol_string_value(t, path, &s, &len)) {
        /* the file name without its directory and extension */
        const char *base = s;
        for (uint32_t i = 0; i < len; i++)
            if (s[i] == '/')
                base = s + i + 1;
        uint32_t n = (uint32_t)(s + len - base);
        for (uint32_t i = 0; i < n; i++)
            if (base[i] == '.') {
                n = i;
                break;
            }
        if (n > 0 && ol_name_looks_like(base, n, words))
            return true;
    }
    return false;
}

#define FILE_LITERALS_MAX 16

typedef struct {
    const char *s[FILE_LITERALS_MAX];
    uint32_t len[FILE_LITERALS_MAX];
    size_t n;
} file_literals;

static void path_literals(ol_model *m, ol_nid e, file_literals *out)
{
    out->n = ol_path_literals(m, e, out->s, out->len, FILE_LITERALS_MAX);
}

/* Where a file-name literal's own name starts, and whether it is bare (no
 * folder but `./`). */
static uint32_t name_start(const char *s, uint32_t len, bool *bare)
{
    uint32_t start = 0;
    for (uint32_t i = 0; i < len; i++)
        if (s[i] == '/')
            start = i + 1;
    *bare = start == 0 || (start == 2 && s[0] == '.');
    return start;
}

/* Do two file-name literals name the same file? The same text, or the same
 * name where one of them is bare: `"net.pth"`, relative to wherever its
 * script runs, may be another script's `"./model/net.pth"`; two different
 * folders are two files. */
static bool same_file_literal(const char *a, uint32_t al, const char *b, uint32_t bl)
{
    if (al == bl && memcmp(a, b, al) == 0)
        return true;
    bool abare, bbare;
    uint32_t as = name_start(a, al, &abare), bs = name_start(b, bl, &bbare);
    return (abare || bbare) && al - as == bl - bs && memcmp(a + as, b + bs, al - as) == 0;
}

/* Do two paths' literals share one? */
static bool literals_meet(const file_literals *la, const file_literals *lb)
{
    for (size_t i = 0; i < la->n; i++)
        for (size_t j = 0; j < lb->n; j++)
            if (same_file_literal(la->s[i], la->len[i], lb->s[j], lb->len[j]))
                return true;
    return false;
}

/* The same text in the same function. */
static bool same_text_here(ol_model *m, ol_nid a, ol_nid b)
{
    return ol_same_text(m->tree, a, b) && ol_function_of(m, a) == ol_function_of(m, b);
}

/* Do two path expressions name the same file: the same text in the same
 * function (a `path` elsewhere is another variable), or the same file-name
 * literal in both (`join(args.dump, "feat.pth")` and `join(args.load,
 * "feat.pth")`, also through the names they are built from)? */
static bool same_file(ol_model *m, ol_nid a, ol_nid b)
{
    if (same_text_here(m, a, b))
        return true;
    file_literals la = {0}, lb = {0};
    path_literals(m, a, &la);
    if (la.n == 0)
        return false;
    path_literals(m, b, &lb);
    return literals_meet(&la, &lb);
}

/* The torch.save calls of a file, gathered once: each load compares its
 * path with these, not with every call of the file; whether each saves host
 * data only is worked out once too (host[i]: 0 not yet, 1 no, 2 yes). */
typedef struct {
    uint32_t *items;
    size_t len, cap;
    uint8_t *host;
    ol_nid *dict;   /* the dict literal each saves (ol_saved_dict), or OL_NONE */
    int cpu_only;   /* ol_file_stays_on_cpu: -1 not asked yet */
    ol_shapes *shapes; /* the shapes of each one's path (save_shapes) */
    uint8_t *shaped;   /* per save: 0 not yet, 1 none, 2 known */
    uint8_t *resave;   /* per save: 0 not yet, 1 no, 2 writes back what a load read (resaves_load) */
    ol_nid *obj;       /* per save: what it writes (`obj`), or OL_NONE */
    ol_nid *to;        /* per save: the path it writes (`f`), or OL_NONE */
    uint64_t *to_hash; /* and that path's ol_text_hash */
    file_literals *lits; /* per save: the literals of the path it writes, once lits_known */
    bool *lits_known;
} save_vec;

static void collect_saves(ol_model *m, save_vec *out)
{
    OL_VEC(ol_save_site) sites = {0};
    for (size_t i = 0; i < m->calls.len; i++) {
        ol_save_site site;
        if (ol_save_site_of(m, (uint32_t)i, &site)) {
            ol_vec_push(out, (uint32_t)i);
            ol_vec_push(&sites, site);
        }
    }
    out->cpu_only = -1;
    out->host = ol_xcalloc(out->len + 1, 1);
    out->resave = ol_xcalloc(out->len + 1, 1);
    out->dict = ol_xcalloc(out->len + 1, sizeof(ol_nid));
    out->shapes = ol_xcalloc(out->len + 1, sizeof(ol_shapes));
    out->shaped = ol_xcalloc(out->len + 1, 1);
    out->lits = ol_xcalloc(out->len + 1, sizeof(file_literals));
    out->lits_known = ol_xcalloc(out->len + 1, sizeof(bool));
    out->obj = ol_xcalloc(out->len + 1, sizeof(ol_nid));
    out->to = ol_xcalloc(out->len + 1, sizeof(ol_nid));
    out->to_hash = ol_xcalloc(out->len + 1, sizeof(uint64_t));
    for (size_t i = 0; i < out->len; i++) {
        const ol_save_site *site = &sites.items[i];
        out->obj[i] = site->obj;
        out->to[i] = site->to;
        out->dict[i] = site->obj != OL_NONE ? ol_saved_dict(m, site->obj) : OL_NONE;
        if (site->framework) {
            /* what it holds is the processes' own: never host data only,
             * never a write-back of a load */
            out->host[i] = 1;
            out->resave[i] = 1;
        }
        out->to_hash[i] = out->to[i] != OL_NONE ? ol_text_hash(m->tree, out->to[i]) : 0;
    }
    ol_vec_free(&sites);
}

/* The file-name literals of the path save i writes (to: its node). */
static const file_literals *save_literals(ol_model *m, save_vec *saves, size_t i, ol_nid to)
{
    if (!saves->lits_known[i]) {
        saves->lits_known[i] = true;
        path_literals(m, to, &saves->lits[i]);
    }
    return &saves->lits[i];
}

/* Does save i of the file write host data only? */
static bool saves_host_data(ol_model *m, save_vec *saves, size_t i)
{
    if (!saves->host[i])
        saves->host[i] = ol_save_holds_host_data(m, m->calls.items[saves->items[i]].node, &saves->cpu_only) ? 2 : 1;
    return saves->host[i] == 2;
}

/* The shapes of the path save i writes (ol_path_shapes), or NULL. A save
 * in a function that returns that path (`torch.save(d, p); return p`) is
 * also the shape of a call of that function (`path = preprocess(...)`,
 * then `torch.load(path)`). */
static const ol_shapes *save_shapes(ol_model *m, save_vec *saves, size_t i)
{
    if (!saves->shaped[i]) {
        ol_nid node = m->calls.items[saves->items[i]].node;
        ol_nid to = saves->to[i];
        ol_shapes *s = &saves->shapes[i];
        saves->shaped[i] = to != OL_NONE && ol_path_shapes(m, to, s) ? 2 : 1;
        uint32_t fn = ol_function_of(m, node);
        for (size_t r = 0; saves->shaped[i] == 2 && fn != OL_NO_INDEX && r < m->functions.items[fn].returns.len;
             r++) {
            ol_shapes ret = {0};
            bool returned = ol_path_shapes(m, m->functions.items[fn].returns.items[r], &ret) &&
                            ol_shapes_meet(&ret, s);
            ol_shapes_free(&ret);
            if (returned) {
                char call[32];
                snprintf(call, sizeof(call), "fn#%u(", fn); /* every call of it */
                ol_shapes_add(s, call);
                break;
            }
        }
    }
    return saves->shaped[i] == 2 ? &saves->shapes[i] : NULL;
}

#define RESAVE_DEPTH 4

/* Is the name at e only ever the function's parameter? */
static bool parameter(ol_model *m, ol_nid e)
{
    uint32_t defs[2];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 2);
    return n == 1 && m->defs.items[defs[0]].kind == OL_DEF_PARAM;
}

/* Is e made only from what the statement `load` bound (the names its
 * torch.load assigned), through this function's assignments: the names
 * themselves, their elements, attributes and methods (`data[idx]`,
 * `data.float()`), tuples of them, and calls given them, with settings
 * (`self._prepare_subset(data, targets, self.num_samples, count)`)? */
static bool made_from_load(ol_model *m, ol_nid e, ol_nid load, int depth)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || depth > RESAVE_DEPTH)
        return false;
    switch (ol_kind_of(t, e)) {
    case OL_N_identifier: {
        uint32_t defs[4];
        size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
        if (n == 0 || n == 4)
            return false;
        for (size_t i = 0; i < n; i++) {
            const ol_def *d = &m->defs.items[defs[i]];
            if (d->stmt == load)
                continue;
            if (d->kind != OL_DEF_ASSIGN || d->value == OL_NONE || !made_from_load(m, d->value, load, depth + 1))
                return false;
        }
        return true;
    }
    case OL_N_tuple:
    case OL_N_list:
    case OL_N_expression_list: {
        bool any = false;
        for (ol_nid x = ol_first_named(t, e); x != OL_NONE; x = ol_next_named(t, x)) {
            if (!made_from_load(m, x, load, depth + 1))
                return false;
            any = true;
        }
        return any;
    }
    case OL_N_subscript:
        return made_from_load(m, ol_field(t, e, OL_F_value), load, depth + 1);
    case OL_N_attribute:
        return made_from_load(m, ol_field(t, e, OL_F_object), load, depth + 1);
    case OL_N_call: {
        ol_nid callee = ol_unparen(t, ol_field(t, e, OL_F_function));
        if (ol_kind_of(t, callee) == OL_N_attribute && made_from_load(m, callee, load, depth + 1))
            return true; /* data.float() */
        ol_nid args = ol_field(t, e, OL_F_arguments);
        bool any = false;
        for (ol_nid a = args != OL_NONE ? ol_first_named(t, args) : OL_NONE; a != OL_NONE; a = ol_next_named(t, a)) {
            ol_nid v = ol_kind_of(t, a) == OL_N_keyword_argument ? ol_field(t, a, OL_F_value) : a;
            v = ol_unparen(t, v);
            if (ol_kind_of(t, v) != OL_N_identifier)
                continue; /* settings: self.num_samples, 0.5 */
            if (made_from_load(m, v, load, depth + 1))
                any = true;
            else if (!parameter(m, v))
                return false; /* settings may also be the function's parameters (`count`) */
        }
        return any;
    }
    default:
        return false;
    }
}

/* Does save i write back what a torch.load before it in the same function
 * read from a file of the same path (by text or shape), cut to a subset or
 * converted (a cached dataset file loaded, narrowed and saved again)? It
 * holds what that file held, and says nothing of where its tensors are:
 * the file's other writers do. */
static bool resaves_load(ol_model *m, save_vec *saves, size_t i)
{
    if (saves->resave[i])
        return saves->resave[i] == 2;
    saves->resave[i] = 1;
    const ol_tree *t = m->tree;
    ol_nid save = m->calls.items[saves->items[i]].node;
    ol_nid obj = ol_call_arg(m, save, 0, "obj"), to = ol_call_arg(m, save, 1, "f");
    uint32_t fn = ol_function_of(m, save);
    if (obj == OL_NONE || to == OL_NONE)
        return false;
    size_t first = 0;
    size_t end = ol_calls_in(m, fn == OL_NO_INDEX ? 0 : m->functions.items[fn].node, &first);
    ol_shapes written = {0};
    int shaped = -1; /* the shapes of the save's path: -1 not worked out yet */
    for (size_t k = first; k < end && m->calls.items[k].node < save && saves->resave[i] != 2; k++) {
        const ol_call *c = &m->calls.items[k];
        ol_nid from = is_torch_load(ol_qualname(m, c->callee)) ? ol_call_arg(m, c->node, 0, "f") : OL_NONE;
        if (from == OL_NONE || ol_function_of(m, c->node) != fn ||
            !made_from_load(m, obj, ol_statement_of(t, c->node), 0))
            continue;
        bool linked = same_file(m, from, to);
        if (!linked) {
            if (shaped < 0)
                shaped = ol_path_shapes(m, to, &written);
            ol_shapes read = {0};
            linked = shaped && ol_path_shapes(m, from, &read) && ol_shapes_meet(&read, &written);
            ol_shapes_free(&read);
        }
        if (linked)
            saves->resave[i] = 2;
    }
    ol_shapes_free(&written);
    return saves->resave[i] == 2;
}

/* Is what the load reads restored into a model or optimizer
 * (`load_state_dict`), directly or through the name it is bound to? */
static bool load_restores(ol_model *m, load_uses *lu, ol_nid call)
{
    if (feeds_load_state_dict(m, call))
        return true;
    uint32_t def = load_binding(m, lu, call);
    return def != OL_NO_INDEX && lu->restores[def];
}

/* The file a load reads is written in this source, and every write of it
 * saves host data only: a cache the script made itself. A write is linked
 * to the load by the same path text in the same function, a file-name
 * literal both spell, or a shape both paths take (ol_path_shapes: the
 * same f-string through a variable, `os.path.join` of the same parts, the
 * same method naming the file, a helper returning what it wrote); linked
 * by shapes alone, every shape of the load must be written here. A file
 * whose path names the rank (`f"queue{rank}.pt"`) is read back by the rank
 * that wrote it, onto its own device: its writer may hold GPU tensors. */
static bool written_here_from_host(ol_model *m, load_uses *lu, save_vec *saves, ol_nid call, ol_nid path)
{
    ol_shapes load = {0};
    bool shaped = ol_path_shapes(m, path, &load), by_text = false, ok = true;
    /* same_file's test, with each path's literals read once */
    file_literals named = {0};
    path_literals(m, path, &named);
    uint64_t path_hash = ol_text_hash(m->tree, path);
    bool covered[OL_SHAPES_MAX] = {0};
    int rank = -1;
    size_t writes = 0;
    for (size_t i = 0; i < saves->len && ok; i++) {
        ol_nid to = saves->to[i];
        if (to == OL_NONE)
            continue;
        bool text = (saves->to_hash[i] == path_hash && same_text_here(m, path, to)) ||
                    (named.n > 0 && literals_meet(&named, save_literals(m, saves, i, to))),
             shape = false;
        const ol_shapes *written = shaped ? save_shapes(m, saves, i) : NULL;
        for (size_t k = 0; written && k < load.len; k++)
            if (ol_shapes_has(written, load.items[k]))
                covered[k] = shape = true;
        if (!text && !shape)
            continue;
        if (resaves_load(m, saves, i))
            continue;
        if (!saves_host_data(m, saves, i)) {
            /* a per-rank file is excused as tensors used in place (a
             * memory bank, a queue), not as a state restored into the
             * model already on that rank's GPU: both are there at once */
            if (rank < 0)
                rank = ol_path_per_rank(m, path) && !load_restores(m, lu, call);
            if (rank != 1)
                ok = false;
        }
        by_text |= text;
        writes++;
    }
    for (size_t k = 0; ok && !by_text && k < load.len; k++)
        ok = covered[k];
    ol_shapes_free(&load);
    return ok && writes > 0;
}

/* The string keys a load is read through: `torch.load(p)["eigvec"]`, or
 * every use of the name it is bound to being `ckpt["key"]`. */
static size_t load_keys(ol_model *m, load_uses *lu, ol_nid call, ol_nid *out, size_t cap)
{
    const ol_tree *t = m->tree;
    ol_nid direct = ol_read_key(t, call);
    if (direct != OL_NONE) {
        out[0] = direct;
        return 1;
    }
    uint32_t def = load_binding(m, lu, call);
    if (def == OL_NO_INDEX || lu->uses[def] == 0 || lu->not_key[def])
        return 0;
    size_t n = lu->keys[def].len < cap ? lu->keys[def].len : cap;
    if (n > 0) /* read only through `.items()`: no key, and no array either */
        memcpy(out, lu->keys[def].items, n * sizeof(ol_nid));
    return n;
}

/* No path links the load to a write, but its keys do: this source saves a
 * dict literal holding every key the load is read through, each such dict
 * is host data only, and no other save here may hold GPU tensors
 * (`torch.save({"ckpt": path, "eigvec": v.to("cpu")}, args.out)`, then
 * `torch.load(args.factor)["eigvec"]`). */
static bool keyed_from_host(ol_model *m, load_uses *lu, save_vec *saves, ol_nid call)
{
    const ol_tree *t = m->tree;
    ol_nid keys[16];
    size_t nkeys = load_keys(m, lu, call, keys, 16);
    if (nkeys == 0)
        return false;
    size_t matched = 0;
    for (size_t i = 0; i < saves->len; i++) {
        if (saves->obj[i] == OL_NONE)
            return false;
        ol_nid dict = saves->dict[i];
        bool holds_all = dict != OL_NONE;
        for (size_t k = 0; k < nkeys && holds_all; k++)
            holds_all = ol_dict_has_key(t, dict, keys[k]);
        /* a dict without one of the keys is another file; anything else may be this one */
        if ((holds_all || dict == OL_NONE) && !saves_host_data(m, saves, i))
            return false;
        matched += holds_all;
    }
    return matched > 0;
}

/* What links a load to the saves of other files: the file-name literals
 * of its path and the keys it is read through; and what those saves are. */
typedef struct elsewhere {
    const char *files[4];
    uint32_t file_lens[4];
    size_t file_count;
    const char *keys[16];
    uint32_t key_lens[16];
    size_t key_count;
    size_t file_writers, key_writers; /* host-only writers in other files */
    bool file_gpu, key_gpu;           /* a writer that may hold GPU tensors */
} elsewhere;

static bool in_list(const char *const *list, size_t n, const char *s, uint32_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
            return true;
    return false;
}

static void visit_save(void *ctx, bool own, const ol_sum_save *sv)
{
    elsewhere *e = ctx;
    bool writes_file = false;
    for (size_t i = 0; i < e->file_count && !writes_file; i++)
        for (size_t j = 0; j < sv->file_count && !writes_file; j++)
            writes_file = same_file_literal(sv->files[j], (uint32_t)strlen(sv->files[j]), e->files[i], e->file_lens[i]);
    if (writes_file) {
        e->file_gpu |= !sv->host_only;
        e->file_writers += !own;
    }
    if (e->key_count == 0)
        return;
    bool holds_all = sv->shape == OL_SAVE_DICT;
    for (size_t i = 0; i < e->key_count && holds_all; i++)
        holds_all = in_list(sv->keys, sv->key_count, e->keys[i], e->key_lens[i]);
    if (holds_all) {
        e->key_gpu |= !sv->host_only;
        e->key_writers += !own;
    } else if (own && sv->shape == OL_SAVE_OTHER && !sv->host_only) {
        e->key_gpu = true; /* this source saves something that may be the file */
    }
}

static size_t path_literals_of(ol_model *m, ol_nid path, const char **s, uint32_t *len, size_t cap, int depth);

/* The file-name literals parameter d can hold: its default's, and what each
 * call of its function in this file passes (ol_door_param_values: a class called
 * for the parameters of its `__init__`, `Predictor(model, trt_file)` after
 * `trt_file = os.path.join(out, "model_trt.pth")`), how many, or -1 when
 * they are unknown. A default or argument of None adds nothing; one with no
 * file-name literal, a call that may fill the parameter through a splat, a
 * function with too many calls here, or no default and no call leaves the
 * files unknown. */
static long param_literals(ol_model *m, const ol_def *d, const char **s, uint32_t *len, size_t cap, int depth)
{
    const ol_tree *t = m->tree;
    ol_nid values[OL_PARAM_SITES_MAX + 1];
    size_t nv = ol_door_param_values(m, d, values, OL_PARAM_SITES_MAX + 1);
    if (nv == SIZE_MAX || nv == 0)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < nv && n < cap; i++) {
        if (ol_kind_of(t, ol_unparen(t, values[i])) == OL_N_none)
            continue;
        size_t k = path_literals_of(m, values[i], s + n, len + n, cap - n, depth + 1);
        if (k == 0)
            return -1;
        n += k;
    }
    return (long)n;
}

/* The file-name literals of a load's path (ol_file_literals), also through
 * the name it is: each binding's value, a parameter's default
 * (`pretrained_path: str = "checkpoints/7B/lit-llama.pth"`, the file the
 * code expects unless told otherwise) and what the calls of its function
 * in this file pass for it (param_literals). A binding, default or
 * argument of None adds nothing (it is replaced before the load, or the
 * load fails); one with no file-name literal leaves the name's files
 * unknown (0). */
static size_t path_literals_of(ol_model *m, ol_nid path, const char **s, uint32_t *len, size_t cap, int depth)
{
    const ol_tree *t = m->tree;
    size_t n = ol_file_literals(t, path, s, len, cap);
    ol_nid e = ol_unparen(t, path);
    if (n > 0 || ol_kind_of(t, e) != OL_N_identifier || depth > 2)
        return n;
    uint32_t defs[4];
    size_t count = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
    if (count == 0 || count == 4)
        return 0;
    for (size_t i = 0; i < count && n < cap; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind == OL_DEF_PARAM && d->path_len == 0 && !d->starred) {
            long r = param_literals(m, d, s + n, len + n, cap - n, depth);
            if (r < 0)
                return 0;
            n += (size_t)r;
            continue;
        }
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0 || d->starred || d->value == OL_NONE)
            return 0;
        if (ol_kind_of(t, ol_unparen(t, d->value)) == OL_N_none)
            continue;
        size_t k = ol_file_literals(t, d->value, s + n, len + n, cap - n);
        if (k == 0)
            return 0;
        n += k;
    }
    return n;
}

/* The file a load reads is written by another file of the run, and every
 * writer saves host data only: linked by a file-name literal both paths
 * spell (`"expert.pt"`), or by the keys the load is read through, which a
 * dict literal saved elsewhere holds (`torch.load(args.factor)["eigvec"]`
 * and `torch.save({"eigvec": v.to("cpu")}, args.out)` in the script that
 * computes it). A state dict is never linked by keys: what reaches
 * load_state_dict is a model's, whatever else shares its keys. Saves of
 * other files whose keys are unknown do not count against a key link (a
 * training script's checkpoint of `state` is rarely read through the keys
 * of a feature file), those of this source do. */
static bool written_elsewhere_from_host(ol_model *m, load_uses *lu, ol_nid call, ol_nid path)
{
    const ol_tree *t = m->tree;
    elsewhere e = {0};
    e.file_count = path_literals_of(m, path, e.files, e.file_lens, 4, 0);
    ol_nid keys[16];
    size_t nkeys = load_keys(m, lu, call, keys, 16);
    bool direct = ol_read_key(t, call) != OL_NONE;
    uint32_t def = nkeys && !direct ? load_def(m, lu->def_of_target, call) : OL_NO_INDEX;
    bool restores = direct ? feeds_load_state_dict(m, call)
                           : def != OL_NO_INDEX && def < m->defs.len && lu->restores[def];
    for (size_t k = 0; k < nkeys && !restores; k++)
        if (ol_string_value(t, keys[k], &e.keys[e.key_count], &e.key_lens[e.key_count]))
            e.key_count++;
    if (e.key_count < nkeys)
        e.key_count = 0;
    if (e.file_count == 0 && e.key_count == 0)
        return false;
    if (!ol_visit_run_saves(m, visit_save, &e))
        return false;
    return (e.file_writers > 0 && !e.file_gpu) || (e.key_writers > 0 && !e.key_gpu);
}

/* What each load's value is used as, asked at most once per load. */
typedef struct host_reads {
    uint8_t *state;      /* per call: 0 not asked yet, else 1 + USE_HOST/USE_DEVICE bits */
    nid_list host_loads; /* the call nodes of the loads read as host data, sorted (once listed) */
    bool listed;
    long budget;
} host_reads;

enum { USE_HOST = 1, USE_DEVICE = 2 };
/* siblings compared with one load at most: a file of thousands of loads in
 * one function stays linear */
#define HOST_SIBLINGS_MAX 64

static int load_use(ol_model *m, host_reads *hr, uint32_t ci)
{
    if (!hr->state) {
        hr->state = ol_xcalloc(m->calls.len + 1, 1);
        hr->budget = OL_HOSTUSE_BUDGET;
    }
    if (!hr->state[ci]) {
        ol_value_use u = ol_value_use_of(m, m->calls.items[ci].node, &hr->budget);
        hr->state[ci] = (uint8_t)(1 + (u.host ? USE_HOST : 0) + (u.device ? USE_DEVICE : 0));
    }
    return hr->state[ci] - 1;
}

/* The load is read as host data: some of what it returns reaches code that
 * raises on a CUDA tensor (`.numpy()`, `np.asarray`, a matplotlib plot,
 * `json.dump`, a function of the run that hands its parameter to one), and
 * none of it is restored into a model, moved, called or used as a module.
 * The code could not run if the file held GPU tensors. Another load of the
 * same file in the same function that is read so counts for this one too
 * (`preds = torch.load(p)` in one branch, `torch.load(p)` to test it in
 * another), unless this one is used as a model or moved. */
static bool read_as_host_data(ol_model *m, host_reads *hr, uint32_t ci, ol_nid path)
{
    int own = load_use(m, hr, ci);
    if (own & USE_DEVICE)
        return false;
    if (own & USE_HOST)
        return true;
    if (!hr->listed) {
        hr->listed = true;
        for (uint32_t k = 0; k < m->calls.len; k++)
            if (is_torch_load(ol_qualname(m, m->calls.items[k].callee)) && load_use(m, hr, k) == USE_HOST)
                ol_vec_push(&hr->host_loads, m->calls.items[k].node);
        ol_sort(hr->host_loads.items, hr->host_loads.len, sizeof(ol_nid), ol_cmp_u32);
    }
    /* the host loads inside the function's node range */
    uint32_t fn = ol_function_of(m, m->calls.items[ci].node);
    ol_nid root = fn == OL_NO_INDEX ? 0 : m->functions.items[fn].node;
    ol_nid end = fn == OL_NO_INDEX ? m->tree->nodes.len : m->subtree_end[root];
    size_t lo = ol_lower_bound_u32(hr->host_loads.items, hr->host_loads.len, root);
    int compared = 0, seen = 0;
    for (size_t i = lo; i < hr->host_loads.len && compared < HOST_SIBLINGS_MAX && seen < 16 * HOST_SIBLINGS_MAX;
         i++, seen++) {
        ol_nid other = hr->host_loads.items[i];
        if (other >= end)
            break;
        if (ol_function_of(m, other) != fn)
            continue; /* in a nested function */
        compared++;
        ol_nid p = ol_call_arg(m, other, 0, NULL);
        if (p != OL_NONE && same_file(m, p, path))
            return true;
    }
    return false;
}

/* Is a load in this notebook one that happens once, in the session that
 * saved the checkpoint, on the GPU that saved it? A notebook runs in one
 * process on one machine; a script is run elsewhere too (a machine with
 * fewer GPUs or none, a job of several processes), where a load without
 * `map_location` fails or lands on GPU 0: real fixes add it to one-process
 * scripts, so those stay reported. */
static bool loads_once(ol_model *m)
{
    return m->src->notebook && !ol_file_runs_several_processes(m);
}

/* The receivers a load is restored into (`load_state_dict`), at most 3. */
static size_t load_receivers(ol_model *m, load_uses *lu, ol_nid call, ol_nid *receivers)
{
    size_t n = 0;
    if (feeds_state_receiver(m, call, &receivers[0]))
        return 1;
    uint32_t def = load_binding(m, lu, call);
    if (def != OL_NO_INDEX)
        for (size_t i = 0; i < lu->receivers[def].len && n < 3; i++)
            receivers[n++] = lu->receivers[def].items[i];
    return n;
}

typedef struct gpu_move {
    uint64_t hash;
    uint32_t call;
} gpu_move;

static int cmp_gpu_move(const void *a, const void *b)
{
    const gpu_move *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->call > y->call) - (x->call < y->call);
}

static void moves_build(ol_model *m, load_uses *lu)
{
    const ol_tree *t = m->tree;
    gpu_move *v = ol_xcalloc(m->calls.len + 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->receiver != OL_NONE && ol_call_moves_to_gpu(m, c))
            v[n++] = (gpu_move){ol_text_hash(t, ol_unparen(t, c->receiver)), (uint32_t)i};
    }
    ol_sort(v, n, sizeof(*v), cmp_gpu_move);
    lu->move_hash = ol_xcalloc(n + 1, sizeof(uint64_t));
    lu->move_call = ol_xcalloc(n + 1, sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        lu->move_hash[i] = v[i].hash;
        lu->move_call[i] = v[i].call;
    }
    free(v);
    lu->moves_len = n;
    lu->moves_built = true;
}

/* Does the run run several processes (a process group, DDP, a launcher,
 * a rank)? Its text says so somewhere: a model file's load runs in every
 * process of a job its training script starts. */
static const char *const RUN_PROCESS_WORDS[] = {"init_process_group", "DistributedDataParallel", "local_rank",
                                                "LOCAL_RANK", "world_size", "WORLD_SIZE", "torchrun",
                                                "deepspeed", "Accelerator", "Fabric", "horovod",
                                                "FullyShardedDataParallel", "spawn"};

/* Is the first move of `model` (its text) in function fn at or after `at`
 * (OL_NONE when none is)? *before: a move of it comes earlier. */
static ol_nid move_after(ol_model *m, load_uses *lu, ol_nid model, uint32_t fn, ol_nid at, bool *before)
{
    const ol_tree *t = m->tree;
    if (!lu->moves_built)
        moves_build(m, lu);
    *before = false;
    uint64_t h = ol_text_hash(t, model);
    for (size_t k = ol_lower_bound_u64(lu->move_hash, lu->moves_len, h); k < lu->moves_len && lu->move_hash[k] == h;
         k++) {
        const ol_call *c = &m->calls.items[lu->move_call[k]];
        if (ol_function_of(m, c->node) != fn || !ol_same_text(t, ol_unparen(t, c->receiver), model))
            continue;
        if (c->node < at) {
            *before = true;
            return OL_NONE;
        }
        return c->node;
    }
    return OL_NONE;
}

/* Does expression e build a model afresh: a class called (`InceptionV4(...)`,
 * `models.ResNet(...)`) or one of torchvision's builders? A fresh model is on
 * the host until something moves it. */
static bool builds_model(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (e == OL_NONE || ol_kind_of(t, e) != OL_N_call)
        return false;
    ol_nid callee = ol_field(t, e, OL_F_function);
    ol_val v = ol_eval(m, callee);
    if (v.kind == OL_V_CLASS)
        return ol_eval(m, e).kind == OL_V_MODULE;
    if (v.kind != OL_V_EXTERN || !v.ref)
        return false;
    const char *q = ol_sym_str(m, v.ref);
    const char *dot = strrchr(q, '.');
    const char *last = dot ? dot + 1 : q;
    return (last[0] >= 'A' && last[0] <= 'Z' && ol_eval(m, e).kind == OL_V_MODULE) ||
           strncmp(q, "torchvision.models.", 19) == 0;
}

/* Is `model` at node `at` of function fn a model built afresh and not moved
 * since: a name bound here to one (builds_model) with no move of it before
 * `at`, or a parameter that every call of its function in this source
 * fills with such a model (`init_pretrained_weights(model, url)` after
 * `model = InceptionV4(...)`)? *built: where the first is built. */
static bool fresh_model(ol_model *m, load_uses *lu, ol_nid model, ol_nid at, int depth, ol_nid *built)
{
    const ol_tree *t = m->tree;
    model = ol_unparen(t, model);
    if (depth > 2 || model == OL_NONE)
        return false;
    if (ol_kind_of(t, model) == OL_N_call) {
        *built = model;
        return builds_model(m, model);
    }
    if (ol_kind_of(t, model) != OL_N_identifier)
        return false;
    uint32_t fn = ol_function_of(m, at);
    bool before;
    move_after(m, lu, model, fn, at, &before);
    if (before)
        return false;
    uint32_t defs[2];
    if (ol_reaching_defs(m, m->node_scope[model], ol_node_sym(m, model), at, defs, 2) != 1)
        return false;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind == OL_DEF_ASSIGN) {
        *built = d->value;
        return d->path_len == 0 && !d->starred && builds_model(m, d->value);
    }
    if (d->kind != OL_DEF_PARAM)
        return false;
    ol_nid values[OL_PARAM_SITES_MAX + 1];
    size_t nv = ol_door_param_values(m, d, values, OL_PARAM_SITES_MAX + 1);
    if (nv == SIZE_MAX || nv == 0 || (d->value != OL_NONE && nv == 1))
        return false; /* no call here, or only the default */
    for (size_t i = 0; i < nv; i++)
        if (values[i] == d->value || !fresh_model(m, lu, values[i], values[i], depth + 1, i == 0 ? built : &(ol_nid){0}))
            return false;
    return true;
}

/* Does the file, or the run it is linted in, run several processes? */
static bool several_processes(ol_model *m)
{
    return ol_file_runs_several_processes(m) ||
           ol_run_spells_any(m, RUN_PROCESS_WORDS, OL_ARRAY_LEN(RUN_PROCESS_WORDS)) > 0;
}

/* Does the load fetch released weights from a URL (load_state_dict_from_url,
 * model_zoo.load_url)? Published files, downloaded into a cache, not the
 * run's own checkpoints. */
static bool released_weights(ol_model *m, ol_nid call)
{
    return ol_load_kind(m, ol_field(m->tree, call, OL_F_function)) == OL_LOADER_URL;
}

/* Is the load a state restored whole into models that are not on the GPU
 * yet: each moved to it only after the load, in the load's own function and
 * outside any loop, with no move of it before (`net.load_state_dict(
 * torch.load(p))`, then `net.cuda()`), or built afresh and not moved since
 * (fresh_model: a model file's helper restoring weights into the model its
 * builder just made)? A load read through a key (`torch.load(p)["g_ema"]`)
 * takes one part of a checkpoint that holds more (the optimizers' state,
 * other networks), all of which lands on the GPU for that part: not such a
 * load. Asked only of a job of one process (for a fresh model, of a run
 * whose text never speaks of several, unless the load fetches released
 * weights from a URL: a model file's factory that builds the network and
 * restores its published weights before handing it on): with several,
 * every rank lands on the saving GPU whatever is there. *first is the first
 * such move, or where the first fresh model is built (*fresh). */
static bool restored_before_move(ol_model *m, load_uses *lu, ol_nid call, ol_nid *first, bool *fresh)
{
    if (ol_file_runs_several_processes(m))
        return false;
    ol_nid receivers[3], keys[1];
    size_t n = load_receivers(m, lu, call, receivers);
    uint32_t fn = ol_function_of(m, call);
    if (n == 0 || m->node_loop[call] != OL_NO_INDEX || load_keys(m, lu, call, keys, 1) > 0)
        return false;
    *first = OL_NONE;
    *fresh = false;
    bool fresh_only = false;
    for (size_t r = 0; r < n; r++) {
        /* the moves of a receiver spelled the same, in node order: the
         * first in the load's function decides */
        bool before;
        ol_nid after = move_after(m, lu, receivers[r], fn, call, &before);
        if (before)
            return false; /* on the GPU already */
        if (after == OL_NONE) {
            if (!fresh_model(m, lu, receivers[r], call, 0, &after))
                return false;
            fresh_only = true;
        } else if (m->node_loop[after] != OL_NO_INDEX) {
            return false;
        }
        if (*first == OL_NONE || after < *first)
            *first = after;
    }
    *fresh = fresh_only;
    /* a file linted alone (-1) has said it already; released weights
     * fetched into a model built here: a model file's factory, which the
     * processes of a job call alike, before any of them moves the model */
    return !fresh_only || released_weights(m, call) ||
           ol_run_spells_any(m, RUN_PROCESS_WORDS, OL_ARRAY_LEN(RUN_PROCESS_WORDS)) <= 0;
}

/* What restoring the load costs: restored into a model (and, on a resume,
 * its optimizer) that is already on the GPU, the loaded copy and the live
 * state are there at once, about twice that state at the peak of the load. */
static void restore_cost(ol_model *m, load_uses *lu, ol_nid call, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    ol_nid receivers[3], first;
    size_t n = load_receivers(m, lu, call, receivers);
    if (n == 0) {
        /* no model shown to receive it: what is known is what the run does
         * not show (a CPU writer, a host reader) */
        ol_because(why, m, call,
                   "nothing in the run saves this checkpoint from the CPU or reads it as host data: its tensors go "
                   "back onto the device that saved them (the GPU, for a checkpoint of GPU training)");
        return;
    }
    ol_buf names = {0};
    bool optimizer = false;
    for (size_t i = 0; i < n; i++) {
        char *text = ol_node_str_short(t, receivers[i]);
        ol_buf_printf(&names, "%s`%s`", i == 0 ? "" : i + 1 == n ? " and " : ", ", text);
        free(text);
        optimizer |= ol_eval(m, receivers[i]).kind == OL_V_OPTIMIZER;
    }
    char *list = ol_buf_take(&names);
    bool fresh;
    ol_nid built;
    if (restored_before_move(m, lu, call, &first, &fresh))
        ol_because(why, m, call, "restored into %s, which is not on the GPU yet", list);
    else if (!optimizer && n == 1 && several_processes(m) && !released_weights(m, call) &&
             m->node_loop[call] == OL_NO_INDEX &&
             load_keys(m, lu, call, (ol_nid[1]){0}, 1) == 0 && fresh_model(m, lu, receivers[0], call, 0, &built))
        ol_because(why, m, call,
                   "restored into %s, built afresh here, in a job of several processes: each of them lands the "
                   "checkpoint whole on the GPU that saved it, at once",
                   list);
    else if (optimizer)
        ol_because(why, m, call,
                   "restored into %s, a resume: a second copy of the model and optimizer state goes onto the GPU "
                   "that saved it while the live ones are there, about twice that state at the peak of the load",
                   list);
    else
        ol_because(why, m, call,
                   "restored into %s: a second copy of its state goes onto the GPU that saved it while the live one "
                   "is there, about twice that state at the peak of the load",
                   list);
    free(list);
}

/* ---- the door's answers ------------------------------------------------------------ */

typedef struct ol_door_load {
    ol_model *m;
    save_vec saves;
    bool saves_known;
    load_uses lu;
    host_reads hr;
    int8_t device_use;       /* the file's ol_device_kind, -1 until asked */
    int8_t gpu_optional;     /* published_for_cpu's two facts: -1 until asked */
    int8_t run_device_saves;
} ol_door_load;

static void door_load_free(void *p)
{
    ol_door_load *dl = p;
    save_vec saves = dl->saves;
    load_uses lu = dl->lu;
    host_reads hr = dl->hr;
    for (size_t i = 0; i < saves.len; i++)
        ol_shapes_free(&saves.shapes[i]);
    ol_vec_free(&saves);
    free(saves.host);
    free(saves.resave);
    free(saves.dict);
    free(saves.shapes);
    free(saves.shaped);
    free(saves.lits);
    free(saves.lits_known);
    free(saves.obj);
    free(saves.to);
    free(saves.to_hash);
    free(lu.uses);
    free(lu.other);
    free(lu.not_host_state);
    free(lu.not_key);
    free(lu.restores);
    for (size_t i = 0; lu.keys && i < lu.count; i++) {
        ol_vec_free(&lu.keys[i]);
        ol_vec_free(&lu.receivers[i]);
    }
    free(lu.keys);
    free(lu.receivers);
    free(lu.def_of_target);
    free(lu.move_hash);
    free(lu.move_call);
    free(hr.state);
    ol_vec_free(&hr.host_loads);
    free(dl);
}

static ol_door_load *load_state(ol_model *m)
{
    ol_door *d = ol_door_of(m);
    if (!d->load) {
        ol_door_load *dl = ol_xcalloc(1, sizeof(*dl));
        dl->m = m;
        dl->device_use = -1;
        dl->gpu_optional = -1;
        dl->run_device_saves = -1;
        d->load = dl;
        d->load_free = door_load_free;
    }
    return d->load;
}

/* ---- weights published for machines without a GPU ------------------------------- */

static void note_device_save(void *ctx, bool own, const ol_sum_save *sv)
{
    (void)own;
    if (!sv->host_only)
        *(bool *)ctx = true;
}

/* What the file says of its device (ol_file_device_use), asked once. */
static ol_device_kind device_use(ol_model *m, ol_door_load *dl)
{
    if (dl->device_use < 0) {
        ol_device_use use;
        ol_file_device_use(m, &use);
        dl->device_use = (int8_t)use.use;
    }
    return (ol_device_kind)dl->device_use;
}

/* Does the code of this file run on a machine without a GPU? It says so:
 * it asks whether one is there (`torch.cuda.is_available()`), names the
 * CPU as its device (`torch.device("cpu")`, `device="cpu"`), or moves
 * data to the CPU only. Not code a framework or a job of several processes
 * places on its devices; nor code that names no device at all (a builder
 * its callers move), which says nothing of machines without one. */
static bool runs_without_gpu(ol_model *m, ol_door_load *dl)
{
    if (dl->gpu_optional < 0) {
        ol_device_kind use = device_use(m, dl);
        bool says = use == OL_DEVICE_CPU || ol_file_gpu_check(m) != OL_NONE || ol_file_cpu_device(m) != OL_NONE;
        dl->gpu_optional = says && use != OL_DEVICE_FRAMEWORK && !ol_file_runs_several_processes(m);
    }
    return dl->gpu_optional == 1;
}

/* What writes checkpoints without a `torch.save` of the run's own: a
 * trainer's checkpoint callback (Lightning, Hugging Face), Accelerate's,
 * Fabric's and DeepSpeed's savers, a model's save_pretrained. */
static const char *const CHECKPOINT_WRITERS[] = {"Trainer",        "ModelCheckpoint", "save_checkpoint", "save_pretrained",
                                                 "save_state",     "Accelerator",     "Fabric",          "deepspeed"};

/* Does the run save data that may be on a device: a save of this file or
 * another whose data may be there, or a writer of checkpoints named
 * anywhere in the run? A run whose other files cannot be asked counts as
 * yes. */
static bool run_saves_device_data(ol_model *m, ol_door_load *dl)
{
    if (dl->run_device_saves < 0) {
        bool any = false;
        dl->run_device_saves =
            !ol_visit_run_saves(m, note_device_save, &any) || any ||
            ol_run_spells_any(m, CHECKPOINT_WRITERS, OL_ARRAY_LEN(CHECKPOINT_WRITERS)) != 0;
    }
    return dl->run_device_saves == 1;
}

/* Weights the run does not write, loaded by code that runs without a GPU:
 * nothing of the run saves data that may be on a device (the file comes
 * from elsewhere: a release, a conversion, a download), and a plain
 * `torch.load` in code meant for machines without a GPU must read the file
 * there, where one saved from a GPU does not load at all. What is
 * published for such code holds host tensors (a face detector's released
 * weights, pose weights converted from another framework). A run that
 * saves its own GPU training's state, or code that needs a GPU or does not
 * say, shows nothing of the kind. */
static bool published_for_cpu(ol_model *m, ol_door_load *dl)
{
    return runs_without_gpu(m, dl) && !run_saves_device_data(m, dl);
}

ol_loader ol_load_kind(ol_model *m, ol_nid callee)
{
    const char *q = ol_qualname(m, callee);
    return is_url_loader(q) ? OL_LOADER_URL : is_torch_load(q) ? OL_LOADER_TORCH : OL_LOADER_NONE;
}

bool ol_load_published(ol_model *m, ol_nid url)
{
    return pytorch_published(m, url);
}

bool ol_value_may_be_none(ol_model *m, ol_nid e)
{
    return ol_may_be_none(m, e);
}

bool ol_load_only_restores_state(ol_model *m, uint32_t ci)
{
    return only_restores_state(m, &load_state(m)->lu, m->calls.items[ci].node);
}

bool ol_load_in_one_session(ol_model *m)
{
    return loads_once(m);
}

bool ol_load_precedes_move(ol_model *m, uint32_t ci, ol_reasons *why)
{
    if (ci >= m->calls.len)
        return false;
    ol_door_load *dl = load_state(m);
    ol_nid first;
    bool fresh;
    if (!restored_before_move(m, &dl->lu, m->calls.items[ci].node, &first, &fresh))
        return false;
    if (fresh && released_weights(m, m->calls.items[ci].node))
        ol_because(why, m, first,
                   "released weights fetched from a URL into a model built afresh here and not moved yet: nothing "
                   "of it is on the GPU when they land, so the load costs at most one passing copy in each process, "
                   "once (published weights are saved from the host as a rule)");
    else if (fresh)
        ol_because(why, m, first,
                   "a model built afresh and not moved yet, in a run of one process: nothing of it is on the GPU "
                   "when the checkpoint lands, so the load costs one passing copy, once");
    else
        ol_because(why, m, first,
                   "the model moves to the GPU only here, after the load, in a job of one process: nothing of it is "
                   "there yet when the checkpoint lands, so the load costs one passing copy, once");
    return true;
}

bool ol_load_from_outside_run(ol_model *m, uint32_t ci, ol_reasons *why)
{
    if (ci >= m->calls.len)
        return false;
    ol_door_load *dl = load_state(m);
    if (device_use(m, dl) != OL_DEVICE_NONE || ol_file_runs_several_processes(m) || run_saves_device_data(m, dl))
        return false;
    ol_because(why, m, m->calls.items[ci].node,
               "nothing in the run saves data that may be on a device, and this file names no device: the weights "
               "come from elsewhere, and land at most once, before anything here moves the model");
    return true;
}

bool ol_load_holds_device_tensors(ol_model *m, uint32_t ci, ol_nid path, ol_reasons *why)
{
    ol_door_load *dl = load_state(m);
    if (!dl->saves_known) {
        collect_saves(m, &dl->saves);
        dl->saves_known = true;
    }
    ol_nid call = m->calls.items[ci].node;
    if (loads_plain_data(m, call, path) || restores_only_host_state(m, &dl->lu, call) ||
        written_here_from_host(m, &dl->lu, &dl->saves, call, path) || keyed_from_host(m, &dl->lu, &dl->saves, call) ||
        written_elsewhere_from_host(m, &dl->lu, call, path) || read_as_host_data(m, &dl->hr, ci, path) ||
        published_for_cpu(m, dl))
        return false;
    restore_cost(m, &dl->lu, call, why);
    if (ol_file_runs_several_processes(m))
        ol_because(why, m, call, "a job of several processes: every rank loads these tensors onto the GPU that "
                                 "saved them (GPU 0 for what rank 0 saved), a whole copy per rank");
    return true;
}

/* ---- what a load feeds ------------------------------------------------------------- */

bool ol_load_feeds_dataset(ol_model *m, uint32_t ci, ol_reasons *why)
{
    ol_door_load *dl = load_state(m);
    if (!dl->hr.state) {
        dl->hr.state = ol_xcalloc(m->calls.len + 1, 1);
        dl->hr.budget = OL_HOSTUSE_BUDGET;
    }
    ol_nid call = m->calls.items[ci].node;
    ol_value_use u = ol_value_use_of(m, call, &dl->hr.budget);
    if (u.model)
        return false; /* restored into a model, or used as one */
    if (u.dataset) {
        ol_call_builds_dataset(m, u.dataset_call, why);
        char *text = ol_node_str_short(m->tree, ol_field(m->tree, u.dataset_call, OL_F_function));
        ol_because(why, m, u.dataset_call,
                   "what it loads builds `%s(...)`: samples for a data set, not the state of a model on the GPU",
                   text);
        free(text);
        return true;
    }
    uint32_t fn = ol_function_of(m, call);
    if (fn != OL_NO_INDEX && ol_method_of_dataset(m, fn, why)) {
        char *label = ol_door_function_label(m, fn);
        ol_because(why, m, call,
                   "loaded by %s, a method of a Dataset: its samples, not the state of a model on the GPU", label);
        free(label);
        return true;
    }
    return false;
}

/* Calls named in the reasons at most: the rest go unnamed. */
#define LOCATION_CALLS_NAMED 2

bool ol_load_location_defaults_none(ol_model *m, uint32_t ci, ol_nid location, ol_reasons *why)
{
    const ol_tree *t = m->tree;
    (void)ci;
    location = ol_unparen(t, location);
    if (location == OL_NONE || ol_kind_of(t, location) != OL_N_identifier)
        return false;
    uint32_t defs[2];
    /* the parameter itself reaches the load, and nothing else does: not
     * replaced first (`if map_location is None: map_location = "cpu"`) */
    if (ol_reaching_defs(m, m->node_scope[location], ol_node_sym(m, location), location, defs, 2) != 1)
        return false;
    const ol_def *d = &m->defs.items[defs[0]];
    if (d->kind != OL_DEF_PARAM || d->starred || d->value == OL_NONE || ol_kind_of(t, ol_unparen(t, d->value)) != OL_N_none)
        return false;
    uint32_t fi = m->scopes.items[d->scope].function;
    if (fi == OL_NO_INDEX)
        return false;
    const ol_function *f = &m->functions.items[fi];
    const char *param = ol_sym_str(m, d->name);
    size_t none = 0;
    for (size_t i = 0; i < f->callsites.len; i++) {
        const ol_call *c = &m->calls.items[f->callsites.items[i]];
        bool splat;
        ol_nid arg = ol_callsite_arg(m, f, c, d, &splat);
        if (arg == OL_NONE && splat)
            continue; /* `load(*a, **kw)`: may give one */
        if (arg != OL_NONE && !ol_may_be_none(m, arg))
            continue;
        if (none++ < LOCATION_CALLS_NAMED) {
            char *text = ol_node_str_short(t, c->node);
            ol_because(why, m, c->node, "`%s` gives %s `%s`: None, the default", text, arg == OL_NONE ? "no" : "a None",
                       param);
            free(text);
        }
    }
    return none > 0;
}
