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
