/*
 * names.c - what an identifier's spelling says, for the model and every
 * layer above it: its tokens (`teacher_model` is teacher, model; `netG` is
 * net, g), whether it names a model or a loss function. A name is the last
 * resort, read only where no binding or import tells what a value is; it
 * sits below the evaluator so that dataflow and the model may ask it too.
 */
#include "model.h"

#include <ctype.h>
#include <string.h>

/* Splits an identifier into lowercase tokens at '_' and lower->Upper steps. */
static size_t name_tokens(const char *name, size_t len, char tokens[][24], size_t max_tokens)
{
    size_t count = 0, tl = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? name[i] : '_';
        bool boundary = c == '_' || (i > 0 && isupper((unsigned char)c) && islower((unsigned char)name[i - 1]));
        if (boundary && tl > 0) {
            if (count < max_tokens)
                tokens[count++][tl] = '\0';
            tl = 0;
        }
        if (c == '_')
            continue;
        if (count < max_tokens && tl < 23)
            tokens[count][tl++] = (char)tolower((unsigned char)c);
    }
    return count;
}

bool ol_name_looks_like(const char *name, size_t len, const char *const *words)
{
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i < n; i++)
        for (const char *const *w = words; *w; w++)
            if (ol_str_eq(tokens[i], *w))
                return true;
    return false;
}

static const char *const MODEL_WORDS[] = {"model", "net", "network", "encoder", "decoder", "generator",
                                          "discriminator", "backbone", "classifier", "critic", "teacher",
                                          "student", "unet", "vae", "autoencoder", "netg", "netd", "module", NULL};
static const char *const CRITERION_WORDS[] = {"criterion", "criterium", "criteria", "crit", NULL};

/* Does the name call something a model (`model`, `teacher_model`, `netG`,
 * `model_ema`, `model_without_ddp`)? Not when a verb comes first
 * (`create_model_card`, `get_model`, `build_model`: a function about a
 * model) or when the model word only qualifies another noun after it
 * (`model_card`, `model_name`, `model_path`, `model_config`). */
bool ol_name_is_model(const char *name, size_t len)
{
    static const char *const verbs[] = {"create", "make", "build", "get", "load", "save", "init", "initialize",
                                        "setup", "prepare", "set", "wrap", "unwrap", "push", "freeze", "log",
                                        "print", "export", "convert", "compile", "update", "copy", "reset",
                                        "register", "is", "has", "num", "count", "check", "download", "upload",
                                        "write", "read", "store", "restore", "resolve", "select", NULL};
    static const char *const nouns[] = {"card", "name", "names", "path", "paths", "dir", "file", "files", "id",
                                        "ids", "type", "types", "config", "cfg", "conf", "args", "kwargs",
                                        "params", "parameters", "output", "outputs", "out", "state", "states",
                                        "dict", "url", "hub", "repo", "version", "size", "dim", "kind", "info",
                                        "summary", "key", "keys", "list", "dtype", "device", "inputs", "input",
                                        "tokenizer", "optimizer", "ckpt", "checkpoint", "weights", "str", "tag",
                                        "hash", "index", "registry", "zoo", NULL};
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i < n; i++) {
        bool word = false;
        for (const char *const *w = MODEL_WORDS; *w && !word; w++)
            word = ol_str_eq(tokens[i], *w);
        if (!word)
            continue;
        for (size_t k = 0; k < i; k++)
            for (const char *const *v = verbs; *v; v++)
                if (ol_str_eq(tokens[k], *v))
                    return false;
        for (size_t k = i + 1; k < n; k++)
            for (const char *const *v = nouns; *v; v++)
                if (ol_str_eq(tokens[k], *v))
                    return false;
        return true;
    }
    return false;
}

bool ol_name_is_loss_fn(const char *name, size_t len)
{
    if (ol_name_looks_like(name, len, CRITERION_WORDS))
        return true;
    char tokens[8][24];
    size_t n = name_tokens(name, len, tokens, 8);
    for (size_t i = 0; i + 1 < n; i++)
        if (strcmp(tokens[i], "loss") == 0 &&
            (strcmp(tokens[i + 1], "fn") == 0 || strcmp(tokens[i + 1], "func") == 0 ||
             strcmp(tokens[i + 1], "function") == 0 || strcmp(tokens[i + 1], "fcn") == 0 ||
             strcmp(tokens[i + 1], "module") == 0))
            return true;
    return n == 1 && strcmp(tokens[0], "lossfn") == 0;
}

static bool skip_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\';
}

bool ol_same_text(const ol_tree *t, ol_nid a, ol_nid b)
{
    if (a == OL_NONE || b == OL_NONE)
        return false;
    uint32_t la, lb;
    const char *sa = ol_text(t, a, &la), *sb = ol_text(t, b, &lb);
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < la && skip_space(sa[i]))
            i++;
        while (j < lb && skip_space(sb[j]))
            j++;
        if (i == la || j == lb)
            return i == la && j == lb;
        if (sa[i] != sb[j])
            return false;
        i++;
        j++;
    }
}

bool ol_mentions(const ol_tree *t, ol_nid e, ol_nid x)
{
    if (e == OL_NONE || x == OL_NONE)
        return false;
    const ol_node *xn = ol_node_at(t, x);
    uint32_t xl = xn->end - xn->start;
    const ol_node *n = ol_node_at(t, e);
    /* the subtree is a contiguous run of the pre-order node array */
    for (ol_nid i = e; i < t->nodes.len; i++) {
        const ol_node *c = ol_node_at(t, i);
        if (c->start >= n->end && i != e)
            break;
        if (c->end - c->start >= xl && ol_same_text(t, i, x))
            return true;
    }
    return false;
}

uint64_t ol_text_hash(const ol_tree *t, ol_nid n)
{
    uint32_t len;
    const char *s = ol_text(t, n, &len);
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < len; i++) {
        if (skip_space(s[i]))
            continue;
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- the file's identifiers by spelling ------------------------------------------- */

/* Every identifier of the file, grouped by its text's hash, in node order
 * within a group: "where is this name used between here and there" in
 * logarithmic time, so that a rule asking it of each of thousands of
 * statements stays linear. Built on the first question, in linear time:
 * one pass files each identifier under its name's group, one lays the
 * groups out (sorting the identifiers by hash cost more). 4 bytes per
 * identifier and 16 per distinct name, kept with the model. */
typedef struct name_group {
    uint64_t hash;
    uint32_t start, len; /* its identifiers: nodes[start .. start + len) */
} name_group;

struct ol_name_index {
    ol_nid *nodes;
    size_t count; /* of nodes */
    OL_VEC(name_group) groups;
    uint32_t *slots; /* open addressing by hash: a group's index + 1, 0: empty */
    size_t mask;
};

/* The slot of `hash`: its group's, or the empty one where it would go. */
static size_t name_slot(const struct ol_name_index *ix, uint64_t hash)
{
    size_t i = (size_t)(hash ^ (hash >> 29)) & ix->mask;
    while (ix->slots[i] && ix->groups.items[ix->slots[i] - 1].hash != hash)
        i = (i + 1) & ix->mask;
    return i;
}

/* The group of `hash`, added if new (the table kept at most half full). */
static uint32_t name_group_of(struct ol_name_index *ix, uint64_t hash)
{
    size_t at = name_slot(ix, hash);
    if (ix->slots[at])
        return ix->slots[at] - 1;
    name_group g = {hash, 0, 0};
    ol_vec_push(&ix->groups, g);
    if (ix->groups.len * 2 > ix->mask + 1) {
        free(ix->slots);
        ix->mask = ix->mask * 2 + 1;
        ix->slots = ol_xcalloc(ix->mask + 1, sizeof(uint32_t));
        for (size_t k = 0; k < ix->groups.len; k++)
            ix->slots[name_slot(ix, ix->groups.items[k].hash)] = (uint32_t)k + 1;
    } else {
        ix->slots[at] = (uint32_t)ix->groups.len;
    }
    return (uint32_t)ix->groups.len - 1;
}

static struct ol_name_index *name_index_of(ol_model *m)
{
    if (m->name_index)
        return m->name_index;
    const ol_tree *t = m->tree;
    struct ol_name_index *ix = ol_xcalloc(1, sizeof(*ix));
    size_t n = 0;
    for (ol_nid i = 0; i < t->nodes.len; i++)
        n += t->nodes.items[i].kind == OL_N_identifier;
    ix->mask = 63;
    ix->slots = ol_xcalloc(ix->mask + 1, sizeof(uint32_t));
    ix->nodes = ol_xmalloc((n ? n : 1) * sizeof(ol_nid));
    ix->count = n;
    /* first each identifier's group, where its node will go */
    uint32_t *group_of = ol_xmalloc((n ? n : 1) * sizeof(uint32_t));
    size_t k = 0;
    for (ol_nid i = 0; i < t->nodes.len; i++)
        if (t->nodes.items[i].kind == OL_N_identifier) {
            uint32_t g = name_group_of(ix, ol_text_hash(t, i));
            ix->groups.items[g].len++;
            group_of[k++] = g;
        }
    uint32_t next = 0;
    for (size_t g = 0; g < ix->groups.len; g++) {
        ix->groups.items[g].start = next;
        next += ix->groups.items[g].len;
        ix->groups.items[g].len = 0;
    }
    /* then the nodes, in node order: each group's ascend */
    k = 0;
    for (ol_nid i = 0; i < t->nodes.len; i++)
        if (t->nodes.items[i].kind == OL_N_identifier) {
            name_group *g = &ix->groups.items[group_of[k++]];
            ix->nodes[g->start + g->len++] = i;
        }
    free(group_of);
    m->name_index = ix;
    return ix;
}

void ol_name_index_free(struct ol_name_index *ix)
{
    if (!ix)
        return;
    free(ix->nodes);
    free(ix->slots);
    ol_vec_free(&ix->groups);
    free(ix);
}

size_t ol_name_uses_total(ol_model *m)
{
    return name_index_of(m)->count;
}

const ol_nid *ol_name_uses(ol_model *m, ol_nid id, ol_nid from, ol_nid to, size_t *len, size_t *at)
{
    const struct ol_name_index *ix = name_index_of(m);
    const ol_tree *t = m->tree;
    size_t slot = name_slot(ix, ol_text_hash(t, id));
    name_group none = {0, 0, 0};
    const name_group *g = ix->slots[slot] ? &ix->groups.items[ix->slots[slot] - 1] : &none;
    ol_nid bound[2] = {from, to};
    size_t pos[2];
    for (int b = 0; b < 2; b++) {
        size_t l = 0, h = g->len;
        while (l < h) {
            size_t mid = l + (h - l) / 2;
            if (ix->nodes[g->start + mid] < bound[b])
                l = mid + 1;
            else
                h = mid;
        }
        pos[b] = g->start + l;
    }
    *len = pos[1] > pos[0] ? pos[1] - pos[0] : 0;
    if (at)
        *at = pos[0];
    return ix->nodes + pos[0];
}
