/*
 * hardware.c - the hardware a file is written for (see hardware.h), read
 * from its imports, device strings and the arguments of `.to()` calls.
 */
#include "hardware.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

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

/* The words of code that speak of devices, processes and frameworks, found
 * in one pass over the file's names and strings (comments do not count) and
 * kept per file: the questions below ask about different lists of them, and
 * a scan per question and word cost more than the parse. A word of three
 * letters or fewer counts only apart from other letters ("tpu" is not in
 * "outputs", "xla" not in "set_xlabel", "ddp" not in "ddpm"; a plural
 * "gpus" counts); "rank" counts only as a whole name (not in "ranking", not
 * in a string). */
enum {
    W_DEVICE, W_CUDA, W_GPU, W_TPU, W_XLA, W_MPS, W_ACCELERAT, W_FABRIC, W_DEEPSPEED, W_TRAINER, W_PREPARE,
    W_DEVICE_MAP, W_DISTRIBUTED, W_INIT_PROCESS_GROUP, W_LOCAL_RANK, W_GLOBAL_RANK, W_WORLD_SIZE, W_RANK, W_DDP,
    W_SPAWN, W_TORCHRUN, W_HOROVOD, W_FSDP, W_COUNT
};

static const char *const WORD_TEXT[W_COUNT] = {
    "device", "cuda", "gpu", "tpu", "xla", "mps", "accelerat", "fabric", "deepspeed", "trainer", "prepare",
    "device_map", "distributed", "init_process_group", "local_rank", "global_rank", "world_size", "rank", "ddp",
    "spawn", "torchrun", "horovod", "fsdp",
};

typedef struct device_words {
    ol_nid first[W_COUNT]; /* the first node holding each word, or OL_NONE */
} device_words;

static void device_words_free(void *p)
{
    free(p);
}

static bool letter(unsigned char c)
{
    return (c | 32) >= 'a' && (c | 32) <= 'z';
}

/* The words each pair of letters starts (a mask of W_*), case aside, and
 * their lengths: most letters of a name start no word, and the first two
 * letters rule out all but one or two. A byte's letter index is 0-25, or
 * NOT_LETTER, whose row and column start nothing. */
#define NOT_LETTER 26
static uint32_t starts_with[NOT_LETTER + 1][NOT_LETTER + 1];
static uint8_t letter_index[256];
static uint8_t lower[256];
static uint8_t word_len[W_COUNT];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
    for (int c = 0; c < 256; c++) {
        lower[c] = (uint8_t)(c >= 'A' && c <= 'Z' ? c | 32 : c);
        letter_index[c] = (uint8_t)(lower[c] >= 'a' && lower[c] <= 'z' ? lower[c] - 'a' : NOT_LETTER);
    }
    for (int w = 0; w < W_COUNT; w++) {
        word_len[w] = (uint8_t)strlen(WORD_TEXT[w]);
        starts_with[WORD_TEXT[w][0] - 'a'][WORD_TEXT[w][1] - 'a'] |= 1u << w;
    }
}

/* Does s[0..n) spell the word, case aside? */
static bool spells(const unsigned char *s, const char *word, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (lower[s[k]] != (unsigned char)word[k])
            return false;
    return true;
}

/* Sets bit w of *found for every word the text holds, case aside. */
static void words_in(const unsigned char *s, size_t len, bool identifier, uint32_t *found)
{
    if (len < 2)
        return;
    unsigned next = letter_index[s[0]];
    for (size_t i = 0; i + 1 < len; i++) {
        unsigned here = next;
        next = letter_index[s[i + 1]];
        uint32_t cand = starts_with[here][next] & ~*found;
        while (cand) {
            int w = __builtin_ctz(cand);
            cand &= cand - 1;
            size_t n = word_len[w];
            if (i + n > len || !spells(s + i, WORD_TEXT[w], n))
                continue;
            if (w == W_RANK) {
                if (identifier && len == n)
                    *found |= 1u << w;
                continue;
            }
            if (n <= 3) {
                if (i > 0 && letter(s[i - 1]))
                    continue;
                size_t after = i + n;
                if (after < len && letter(s[after]) &&
                    !(lower[s[after]] == 's' && (after + 1 >= len || !letter(s[after + 1]))))
                    continue;
            }
            *found |= 1u << w;
        }
    }
}

static const device_words *words_of(ol_model *m)
{
    if (m->devices_cache)
        return m->devices_cache;
    pthread_once(&tables_once, make_tables);
    device_words *dw = ol_xcalloc(1, sizeof(*dw));
    for (int w = 0; w < W_COUNT; w++)
        dw->first[w] = OL_NONE;
    const ol_tree *t = m->tree;
    uint32_t all = (1u << W_COUNT) - 1, found = 0;
    for (ol_nid n = 0; n < t->nodes.len && found != all; n++) {
        ol_kind k = ol_kind_of(t, n);
        if (k != OL_N_identifier && k != OL_N_string)
            continue;
        uint32_t len;
        const char *s = ol_text(t, n, &len);
        uint32_t before = found;
        words_in((const unsigned char *)s, len, k == OL_N_identifier, &found);
        for (int w = 0; found != before && w < W_COUNT; w++)
            if ((found & ~before) & (1u << w))
                dw->first[w] = n;
    }
    m->devices_cache = dw;
    m->devices_cache_free = device_words_free;
    return dw;
}

/* The first node of the code holding one of the words (a mask of W_*). */
static ol_nid code_says_at(ol_model *m, uint32_t words)
{
    const device_words *dw = words_of(m);
    ol_nid first = OL_NONE;
    for (int w = 0; w < W_COUNT; w++)
        if ((words & (1u << w)) && dw->first[w] < first)
            first = dw->first[w];
    return first;
}

static bool code_says(ol_model *m, uint32_t words)
{
    return code_says_at(m, words) != OL_NONE;
}

#define BIT(w) (1u << (w))
/* Words of code that may put data on an accelerator another way than a
 * device the file names: a framework that places the model itself. */
static const uint32_t FRAMEWORK_WORDS = BIT(W_ACCELERAT) | BIT(W_FABRIC) | BIT(W_DEEPSPEED) | BIT(W_TRAINER) |
                                        BIT(W_PREPARE) | BIT(W_DEVICE_MAP);
static const uint32_t DEVICE_WORDS_ALL = BIT(W_DEVICE) | BIT(W_CUDA) | BIT(W_GPU) | BIT(W_TPU) | BIT(W_XLA) |
                                         BIT(W_MPS) | BIT(W_ACCELERAT) | BIT(W_FABRIC) | BIT(W_DEEPSPEED) |
                                         BIT(W_TRAINER) | BIT(W_PREPARE);
/* words of process groups and launchers */
static const uint32_t PROCESS_WORDS = BIT(W_DISTRIBUTED) | BIT(W_INIT_PROCESS_GROUP) | BIT(W_LOCAL_RANK) |
                                      BIT(W_GLOBAL_RANK) | BIT(W_WORLD_SIZE) | BIT(W_RANK) | BIT(W_DDP) |
                                      BIT(W_SPAWN) | BIT(W_ACCELERAT) | BIT(W_DEEPSPEED) | BIT(W_FABRIC) |
                                      BIT(W_TORCHRUN) | BIT(W_HOROVOD) | BIT(W_FSDP);

bool ol_file_stays_on_cpu(ol_model *m)
{
    return !code_says(m, DEVICE_WORDS_ALL) && !ol_file_names_accelerator(m) &&
           !ol_file_moves_to_device_variable(m);
}

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
    out->node = code_says_at(m, FRAMEWORK_WORDS);
    if (out->node == OL_NONE)
        out->node = code_says_at(m, PROCESS_WORDS); /* every process of a job has its device */
    if (out->node != OL_NONE) {
        out->use = OL_DEVICE_FRAMEWORK;
        return;
    }
    ol_nid word = code_says_at(m, DEVICE_WORDS_ALL);
    if (cpu_move) {
        /* every device the file moves data to is the CPU */
        out->use = OL_DEVICE_CPU;
        out->node = word;
        return;
    }
    out->node = word;
    out->use = word != OL_NONE ? OL_DEVICE_WORD : OL_DEVICE_NONE;
}

ol_nid ol_file_gpu_check(ol_model *m)
{
    for (size_t i = 0; i < m->calls.len; i++) {
        const ol_call *c = &m->calls.items[i];
        if (c->name == 0 || strcmp(ol_sym_str(m, c->name), "is_available") != 0)
            continue;
        const char *q = ol_qualname(m, c->callee);
        if (q && strcmp(q, "torch.cuda.is_available") == 0)
            return c->node;
    }
    return OL_NONE;
}

/* Does e (a name, or an attribute ending in one) look like `device`? */
static bool device_name(const ol_tree *t, ol_nid e)
{
    ol_nid name = ol_tail_name(t, e);
    if (name == OL_NONE)
        return false;
    uint32_t len;
    const char *s = ol_text(t, name, &len);
    return ol_name_looks_like(s, len, DEVICE_WORDS);
}

ol_nid ol_file_cpu_device(ol_model *m)
{
    const ol_tree *t = m->tree;
    for (ol_nid n = 0; n < t->nodes.len; n++) {
        const char *s;
        uint32_t len;
        if (ol_kind_of(t, n) != OL_N_string || !ol_string_value(t, n, &s, &len) || len != 3 || memcmp(s, "cpu", 3) != 0)
            continue;
        ol_nid up = ol_parent(t, n);
        switch (ol_kind_of(t, up)) {
        case OL_N_argument_list: {
            ol_nid call = ol_parent(t, up);
            const char *q = ol_kind_of(t, call) == OL_N_call ? ol_qualname(m, ol_field(t, call, OL_F_function)) : NULL;
            if (q && strcmp(q, "torch.device") == 0 && ol_first_named(t, up) == n)
                return call;
            break;
        }
        case OL_N_assignment:
            if (ol_field(t, up, OL_F_right) == n && device_name(t, ol_field(t, up, OL_F_left)))
                return up;
            break;
        case OL_N_default_parameter:
        case OL_N_typed_default_parameter:
            if (device_name(t, ol_field(t, up, OL_F_name)))
                return up;
            break;
        default:
            break;
        }
    }
    return OL_NONE;
}

bool ol_file_runs_several_processes(ol_model *m)
{
    return code_says(m, PROCESS_WORDS);
}
