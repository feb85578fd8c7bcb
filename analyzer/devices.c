/*
 * devices.c - the hardware a file is written for (see devices.h), read
 * from its imports, device strings and the arguments of `.to()` calls.
 */
#include "devices.h"

#include <ctype.h>
#include <string.h>

/* The first node that names CUDA or torch.accelerator, or OL_NONE. */
static ol_nid accelerator_node(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k == OL_N_string) {
            const char *s;
            uint32_t len;
            if (ol_string_value(t, n, &s, &len) && len >= 4 && memcmp(s, "cuda", 4) == 0)
                return n;
        } else if (k == OL_N_attribute) {
            ol_nid attr = ol_field(t, n, OL_F_attribute);
            if (ol_text_is(t, attr, "cuda")) {
                const char *q = ol_qualname(m, n);
                if (!q || strcmp(q, "torch.cuda") == 0 || ol_str_has_prefix(q, "torch."))
                    return n;
            } else if (ol_text_is(t, attr, "accelerator")) {
                const char *q = ol_qualname(m, n);
                if (q && strcmp(q, "torch.accelerator") == 0)
                    return n;
            }
        }
    }
    for (size_t i = 0; i < m->imports.len; i++) {
        const char *q = ol_sym_str(m, m->imports.items[i].qual);
        if (ol_str_has_prefix(q, "torch.accelerator") || ol_str_has_prefix(q, "torch.cuda"))
            return m->imports.items[i].stmt;
    }
    return OL_NONE;
}

bool ol_file_names_accelerator(ol_model *m)
{
    return accelerator_node(m) != OL_NONE;
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

/* The first call that moves data to a device held in a variable not bound
 * to the CPU, or OL_NONE. *cpu_move: some move goes to a device bound to
 * the CPU or to "cpu" itself (when given). */
static ol_nid device_move_node(ol_model *m, bool *cpu_move)
{
    const ol_tree *t = m->tree;
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        ol_nid dev = OL_NONE;
        if (c->name == m->names.to && c->receiver != OL_NONE)
            dev = ol_call_arg(m, c->node, 0, "device");
        else
            dev = ol_call_arg(m, c->node, -1, "device");
        if (dev == OL_NONE)
            continue;
        const char *s;
        uint32_t len;
        if (cpu_move && ol_string_value(t, ol_unparen(t, dev), &s, &len) && ol_mem_eq_cstr(s, len, "cpu"))
            *cpu_move = true;
        if (!ol_is_device_variable(m, dev))
            continue;
        if (!bound_to_cpu(m, dev))
            return c->node;
        if (cpu_move)
            *cpu_move = true;
    }
    return OL_NONE;
}

bool ol_file_moves_to_device_variable(ol_model *m)
{
    return device_move_node(m, NULL) != OL_NONE;
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
static ol_nid code_says_at(ol_model *m, const char *const *words, const char *whole)
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
            return n;
        }
    }
    return OL_NONE;
}

static bool code_says(ol_model *m, const char *const *words, const char *whole)
{
    return code_says_at(m, words, whole) != OL_NONE;
}

/* Words of code that may put data on an accelerator another way than a
 * device the file names: a framework that places the model itself. */
static const char *const FRAMEWORK_WORDS[] = {"accelerat", "fabric", "deepspeed", "trainer", "prepare", "device_map",
                                              NULL};
static const char *const DEVICE_WORDS_ALL[] = {"device", "cuda", "gpu", "tpu", "xla", "mps", "accelerat", "fabric",
                                               "deepspeed", "trainer", "prepare", NULL};

bool ol_file_stays_on_cpu(ol_model *m)
{
    return !code_says(m, DEVICE_WORDS_ALL, NULL) && !ol_file_names_accelerator(m) &&
           !ol_file_moves_to_device_variable(m);
}

/* words of process groups and launchers; short ones ("ddp") must not
 * follow a letter, and "rank" alone is also a matrix's rank: only as a
 * whole name */
static const char *const PROCESS_WORDS[] = {"distributed", "init_process_group", "local_rank", "global_rank",
                                            "world_size", "rank", "ddp", "spawn", "accelerat", "deepspeed",
                                            "fabric", "torchrun", "horovod", "fsdp", NULL};

void ol_file_device_use(ol_model *m, ol_device_use *out)
{
    out->node = accelerator_node(m);
    if (out->node != OL_NONE) {
        out->use = OL_DEVICE_NAMED;
        return;
    }
    bool cpu_move = false;
    out->node = device_move_node(m, &cpu_move);
    if (out->node != OL_NONE) {
        out->use = OL_DEVICE_VARIABLE;
        return;
    }
    out->node = code_says_at(m, FRAMEWORK_WORDS, NULL);
    if (out->node == OL_NONE)
        out->node = code_says_at(m, PROCESS_WORDS, "rank"); /* every process of a job has its device */
    if (out->node != OL_NONE) {
        out->use = OL_DEVICE_FRAMEWORK;
        return;
    }
    ol_nid word = code_says_at(m, DEVICE_WORDS_ALL, NULL);
    if (cpu_move) {
        /* every device the file moves data to is the CPU */
        out->use = OL_DEVICE_CPU;
        out->node = word;
        return;
    }
    out->node = word;
    out->use = word != OL_NONE ? OL_DEVICE_WORD : OL_DEVICE_NONE;
}

bool ol_file_runs_several_processes(ol_model *m)
{
    return code_says(m, PROCESS_WORDS, "rank");
}
