/*
 * devices.c - the hardware a file is written for (see devices.h), read
 * from its imports, device strings and the arguments of `.to()` calls.
 */
#include "devices.h"

#include <ctype.h>
#include <string.h>

bool ol_file_names_accelerator(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_string) {
            const char *s;
            uint32_t len;
            if (ol_string_value(t, n, &s, &len) && len >= 4 && memcmp(s, "cuda", 4) == 0)
                return true;
        } else if (k == OL_N_attribute) {
            ol_nid attr = ol_field(t, n, OL_F_attribute);
            if (ol_text_is(t, attr, "cuda")) {
                const char *q = ol_qualname(m, n);
                if (!q || strcmp(q, "torch.cuda") == 0 || ol_str_has_prefix(q, "torch."))
                    return true;
            } else if (ol_text_is(t, attr, "accelerator")) {
                const char *q = ol_qualname(m, n);
                if (q && strcmp(q, "torch.accelerator") == 0)
                    return true;
            }
        }
    }
    for (size_t i = 0; i < m->imports.len; i++)
        if (ol_str_has_prefix(ol_sym_str(m, m->imports.items[i].qual), "torch.accelerator"))
            return true;
    return false;
}

static const char *const DEVICE_WORDS[] = {"device", "dev", NULL};

bool ol_is_device_variable(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    ol_kind k = ol_kind_of(t, e);
    if (k != OL_N_identifier && k != OL_N_attribute)
        return false;
    ol_val v = ol_eval(m, e);
    if (v.kind == OL_V_DEVICE)
        return true;
    if (v.kind != OL_V_UNKNOWN && v.kind != OL_V_OBJECT)
        return false;
    ol_nid name = k == OL_N_attribute ? ol_field(t, e, OL_F_attribute) : e;
    uint32_t len;
    const char *s = ol_text(t, name, &len);
    return ol_name_looks_like(s, len, DEVICE_WORDS);
}

/* The device a variable is bound to is the CPU: `device = "cpu"`,
 * `device = torch.device("cpu")` (every reaching binding). */
static bool bound_to_cpu(ol_model *m, ol_nid e)
{
    const ol_tree *t = m->tree;
    e = ol_unparen(t, e);
    if (ol_kind_of(t, e) != OL_N_identifier)
        return false;
    uint32_t defs[4];
    size_t n = ol_reaching_defs(m, m->node_scope[e], ol_node_sym(m, e), e, defs, 4);
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        const ol_def *d = &m->defs.items[defs[i]];
        if (d->kind != OL_DEF_ASSIGN || d->path_len != 0)
            return false;
        ol_nid v = ol_unparen(t, d->value);
        if (ol_kind_of(t, v) == OL_N_call)
            v = ol_call_arg(m, v, 0, "type");
        const char *s;
        uint32_t len;
        if (v == OL_NONE || !ol_string_value(t, v, &s, &len) || !ol_mem_eq_cstr(s, len, "cpu"))
            return false;
    }
    return true;
}

bool ol_file_moves_to_device_variable(ol_model *m)
{
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        ol_nid dev = OL_NONE;
        if (c->name == m->names.to && c->receiver != OL_NONE)
            dev = ol_call_arg(m, c->node, 0, "device");
        else
            dev = ol_call_arg(m, c->node, -1, "device");
        if (dev != OL_NONE && ol_is_device_variable(m, dev) && !bound_to_cpu(m, dev))
            return true;
    }
    return false;
}

bool ol_file_is_xla_only(ol_model *m)
{
    bool xla = false;
    for (size_t i = 0; i < m->imports.len && !xla; i++)
        xla = ol_str_has_prefix(ol_sym_str(m, m->imports.items[i].qual), "torch_xla");
    return xla && !ol_file_names_accelerator(m);
}

/* Does text hold word, ignoring case (word in lower case)? A short word
 * must not follow a letter ("tpu" is not in "outputs"). */
static bool has_word_nocase(const char *text, size_t len, const char *word)
{
    size_t n = strlen(word);
    bool short_word = n <= 3;
    for (size_t i = 0; i + n <= len; i++) {
        if (short_word && i > 0 && isalpha((unsigned char)text[i - 1]))
            continue;
        size_t k = 0;
        while (k < n && tolower((unsigned char)text[i + k]) == word[k])
            k++;
        if (k != n)
            continue;
        /* nor run into a longer word ("xla" in "set_xlabel", "ddp" in
         * "ddpm"), a plural aside ("gpus") */
        size_t after = i + n;
        if (short_word && after < len && isalpha((unsigned char)text[after]) &&
            !(tolower((unsigned char)text[after]) == 's' &&
              (after + 1 >= len || !isalpha((unsigned char)text[after + 1]))))
            continue;
        return true;
    }
    return false;
}

/* Does a name or string of the code (comments do not count) hold one of the
 * words? A word of three letters or fewer counts only apart from other
 * letters (has_word_nocase). `whole`, when given, is a word that counts only as a whole name
 * ("rank", not "rank" in "ranking" or a string). */
static bool code_says(ol_model *m, const char *const *words, const char *whole)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k != OL_N_identifier && k != OL_N_string)
            continue;
        uint32_t len;
        const char *s = ol_text(t, n, &len);
        for (const char *const *w = words; *w; w++) {
            if (!has_word_nocase(s, len, *w))
                continue;
            if (whole && strcmp(*w, whole) == 0 && !(k == OL_N_identifier && len == strlen(whole)))
                continue;
            return true;
        }
    }
    return false;
}

bool ol_file_stays_on_cpu(ol_model *m)
{
    static const char *const words[] = {"device", "cuda", "gpu", "tpu", "xla", "mps", "accelerat", "fabric",
                                        "deepspeed", "trainer", "prepare", NULL};
    return !code_says(m, words, NULL) && !ol_file_names_accelerator(m) && !ol_file_moves_to_device_variable(m);
}

bool ol_file_runs_several_processes(ol_model *m)
{
    /* words of process groups and launchers; short ones ("ddp") must not
     * follow a letter, and "rank" alone is also a matrix's rank: only as a
     * whole name */
    static const char *const words[] = {"distributed", "init_process_group", "local_rank", "global_rank",
                                        "world_size", "rank", "ddp", "spawn", "accelerat", "deepspeed",
                                        "fabric", "torchrun", "horovod", "fsdp", NULL};
    return code_says(m, words, "rank");
}
