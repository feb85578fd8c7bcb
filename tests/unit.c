/*
 * unit.c - unit tests of the engine's building blocks: decoding, positions,
 * suppression comments, rule selection, the syntax tree, the semantic model,
 * value evaluation, TOML and project configuration. Each TEST is a
 * function; CHECK records a failure with its line and keeps going. Prints
 * "N passed, N failed".
 */
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <tree_sitter/api.h>

/* the runtime's own view of a tree (test_unbalanced_parse) */
#include "subtree.h"
#include "tree.h"

#include "config.h"
#include "glob.h"
#include "moves.h"
#include "diag.h"
#include "emit.h"
#include "eval.h"
#include "explain.h"
#include "fix.h"
#include "flows.h"
#include "lint.h"
#include "model.h"
#include "notebook.h"
#include "probe_internal.h"
#include "parse_arena.h"
#include "portable.h"
#include "project.h"
#include "words.h"
#include "pyfloor.h"
#include "rule.h"
#include "saves.h"
#include "select.h"
#include "server.h"
#include "server_docs.h"
#include "server_rpc.h"
#include "source.h"
#include "summary.h"
#include "suppress.h"
#include "syntax.h"
#include "syntax_gaps.h"
#include "toml.h"
#include "torchfloor.h"

static int checks_failed;
static const char *current_test;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "FAIL %s (%s:%d): %s\n", current_test, __FILE__, __LINE__, #cond);    \
            checks_failed++;                                                                      \
        }                                                                                         \
    } while (0)

static bool decode(const char *bytes, size_t n, ol_source *src, ol_buf *err)
{
    char *copy = ol_xmalloc(n + 1);
    memcpy(copy, bytes, n);
    copy[n] = '\0';
    return ol_source_init(src, "t.py", copy, n, err);
}

static void test_utf8_plain(void)
{
    ol_source s;
    ol_buf err = {0};
    CHECK(decode("x = 1\ny = 'é'\n", 15, &s, &err));
    CHECK(s.line_count == 3);
    CHECK(s.encoding == NULL);
    ol_pos p = ol_source_pos(&s, 10); /* the quote before é is at byte 10 */
    CHECK(p.line == 2 && p.col == 5);
    p = ol_source_pos(&s, 13); /* after é (2 bytes): one column on */
    CHECK(p.col == 7 && p.col16 == 7);
    ol_source_free(&s);
    ol_buf_free(&err);
}

static void test_bom_and_crlf(void)
{
    ol_source s;
    ol_buf err = {0};
    CHECK(decode("\xEF\xBB\xBFx = 1\r\ny = 2\r\n", 17, &s, &err));
    CHECK(s.bom);
    CHECK(s.crlf);
    CHECK(s.text[0] == 'x');
    uint32_t len;
    const char *line = ol_source_line(&s, 0, &len);
    CHECK(len == 5 && memcmp(line, "x = 1", 5) == 0);
    ol_source_free(&s);
    ol_buf_free(&err);
}

static void test_latin1_declared(void)
{
    ol_source s;
    ol_buf err = {0};
    const char *src = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n";
    CHECK(decode(src, strlen(src), &s, &err));
    CHECK(s.encoding != NULL);
    CHECK(strstr(s.text, "caf\xc3\xa9") != NULL);
    /* writing back restores latin-1 */
    ol_buf out = {0}, why = {0};
    CHECK(ol_source_encode(&s, s.text, s.len, NULL, 0, &out, &why));
    CHECK(out.len == strlen(src) && memcmp(out.data, src, out.len) == 0);
    /* a change is spliced in, encoded: caf\xe9 -> th\xe9 */
    uint32_t at = (uint32_t)(strstr(s.text, "caf") - s.text);
    char *changed = ol_xasprintf("%.*sth\xc3\xa9%s", (int)at, s.text, s.text + at + 5);
    ol_text_change c = {at, at + 5, at, at + 4};
    CHECK(ol_source_encode(&s, changed, strlen(changed), &c, 1, &out, &why));
    CHECK(out.len == strlen(src) - 1 && memcmp(out.data + at, "th\xe9'", 4) == 0);
    /* a character latin-1 lacks cannot be written */
    char *snow = ol_xasprintf("%.*s\xe2\x98\x83%s", (int)at, s.text, s.text + at + 5);
    ol_text_change c2 = {at, at + 5, at, at + 3};
    CHECK(!ol_source_encode(&s, snow, strlen(snow), &c2, 1, &out, &why));
    CHECK(why.data && strstr(why.data, "cannot be written back"));
    free(changed);
    free(snow);
    ol_buf_free(&out);
    ol_buf_free(&why);
    ol_source_free(&s);
}

static void test_invalid_utf8_reports_where(void)
{
    ol_source s;
    ol_buf err = {0};
    const char *src = "x = 1\ny = 'caf\xe9'\n";
    CHECK(!decode(src, strlen(src), &s, &err));
    CHECK(err.data && strstr(err.data, "line 2, column 9"));
    CHECK(err.data && strstr(err.data, "0xE9"));
    ol_source_free(&s);
    ol_buf_free(&err);
}

/* The ASCII fast path reads eight bytes at a time: a bad byte is found
 * wherever it falls in or after such a block. */
static void test_utf8_validate_every_offset(void)
{
    char text[40];
    for (size_t at = 0; at < 24; at++) {
        memset(text, 'a', sizeof text);
        text[at] = (char)0xE9; /* a lead byte with no continuation */
        CHECK(ol_utf8_validate(text, sizeof text) == at);
        CHECK(ol_utf8_validate(text, at) == at); /* the bad byte just past the end */
        memcpy(text + at, "\xc3\xa9", 2);             /* a good two-byte sequence there */
        CHECK(ol_utf8_validate(text, sizeof text) == sizeof text);
        CHECK(ol_utf8_validate(text, at + 1) == at); /* cut inside it */
    }
}

/* The byte-wise helpers the rules compare names with. */
static void test_string_helpers(void)
{
    CHECK(ol_mem_eq_cstr("cuda", 4, "cuda"));
    CHECK(!ol_mem_eq_cstr("cuda", 4, "cud"));
    CHECK(!ol_mem_eq_cstr("cud", 3, "cuda"));
    CHECK(!ol_mem_eq_cstr("cu\0a", 4, "cu"));
    CHECK(ol_mem_eq_cstr("", 0, ""));
    CHECK(!ol_mem_eq_cstr("x", 1, ""));
    CHECK(ol_str_has_prefix("torch.cuda", "torch."));
    CHECK(ol_str_has_prefix("torch", "torch"));
    CHECK(ol_str_has_prefix("torch", ""));
    CHECK(!ol_str_has_prefix("tor", "torch"));
    CHECK(!ol_str_has_prefix("numpy", "torch"));
    const char *c = "# NoQa: OOM101";
    CHECK(ol_find_ci(c, strlen(c), "noqa") == c + 2);
    CHECK(ol_find_ci(c, strlen(c), "oom101") == c + 8);
    CHECK(ol_find_ci(c, strlen(c), ": ") == c + 6);
    CHECK(ol_find_ci(c, strlen(c), "oom102") == NULL);
    CHECK(ol_find_ci(c, 5, "noqa") == NULL); /* only within the length given */
    CHECK(ol_find_ci(c, 6, "noqa") == c + 2);
    CHECK(ol_find_ci(c, strlen(c), "") == c);
    CHECK(ol_find_ci("ab", 2, "abc") == NULL);
    CHECK(ol_find(c, strlen(c), "OOM101") == c + 8);
    CHECK(ol_find(c, strlen(c), "oom101") == NULL); /* case kept */
    CHECK(ol_find(c, 13, "OOM101") == NULL);        /* only within the length given */
    CHECK(ol_find(c, 14, "OOM101") == c + 8);
    CHECK(ol_find(c, strlen(c), "") == c);
    CHECK(ol_find("ab", 2, "abc") == NULL);
}

static void test_nul_and_unknown_encoding(void)
{
    ol_source s;
    ol_buf err = {0};
    CHECK(!decode("ab\0cd", 5, &s, &err));
    CHECK(err.data && strstr(err.data, "NUL"));
    ol_source_free(&s);
    ol_buf_clear(&err);
    const char *src = "# coding: no-such-codec-x\nx = 1\n";
    CHECK(!decode(src, strlen(src), &s, &err));
    CHECK(err.data && strstr(err.data, "unknown encoding"));
    ol_source_free(&s);
    ol_buf_clear(&err);
    /* future-fstrings' codec reads UTF-8 source */
    src = "# -*- coding: future-fstrings -*-\nx = f'{1}'\n";
    CHECK(decode(src, strlen(src), &s, &err));
    ol_source_free(&s);
    ol_buf_free(&err);
}

static void test_coding_only_on_first_two_lines(void)
{
    ol_source s;
    ol_buf err = {0};
    /* a declaration on line 3 does not count: the bytes must be UTF-8 */
    const char *src = "x = 1\ny = 2\n# coding: latin-1\nz = '\xe9'\n";
    CHECK(!decode(src, strlen(src), &s, &err));
    ol_source_free(&s);
    ol_buf_free(&err);
}

static void test_utf16_columns(void)
{
    ol_source s;
    ol_buf err = {0};
    /* an emoji is one code point and two UTF-16 units */
    const char *src = "s = '\xF0\x9F\x98\x80' + x\n";
    CHECK(decode(src, strlen(src), &s, &err));
    ol_pos p = ol_source_pos(&s, (uint32_t)(strchr(src, '+') - src));
    CHECK(p.col == 9);
    CHECK(p.col16 == 10);
    CHECK(ol_source_offset(&s, 1, 9) == (uint32_t)(strchr(src, '+') - src));
    ol_source_free(&s);
    ol_buf_free(&err);
}

/* ---- syntax and model ------------------------------------------------------- */

typedef struct parsed {
    ol_grammar g;
    ol_parser p;
    ol_source src;
    ol_tree tree;
    ol_model model;
} parsed;

static void parse_text(parsed *x, const char *text)
{
    ol_grammar_init(&x->g);
    ol_parser_init(&x->p, &x->g);
    ol_source_init_text(&x->src, "t.py", ol_xstrdup(text), strlen(text));
    ol_parse(&x->p, &x->src, &x->tree);
    ol_model_build(&x->model, &x->tree);
}

static void parsed_free(parsed *x)
{
    ol_model_free(&x->model);
    ol_tree_free(&x->tree);
    ol_source_free(&x->src);
    ol_parser_free(&x->p);
    ol_grammar_free(&x->g);
}

/* The first node of kind k whose text is s. */
static ol_nid find_node(const parsed *x, ol_kind k, const char *s)
{
    for (ol_nid n = 0; n < x->tree.nodes.len; n++)
        if (ol_kind_of(&x->tree, n) == k && ol_text_is(&x->tree, n, s))
            return n;
    return OL_NONE;
}

/* The last identifier node with text s. */
static ol_nid last_name(const parsed *x, const char *s)
{
    ol_nid found = OL_NONE;
    for (ol_nid n = 0; n < x->tree.nodes.len; n++)
        if (ol_kind_of(&x->tree, n) == OL_N_identifier && ol_text_is(&x->tree, n, s))
            found = n;
    return found;
}

static void test_tree_shape(void)
{
    parsed x;
    parse_text(&x, "total += loss  # comment\n");
    CHECK(x.tree.errors.len == 0);
    CHECK(x.tree.comments.len == 1);
    ol_nid aug = find_node(&x, OL_N_augmented_assignment, "total += loss");
    CHECK(aug != OL_NONE);
    CHECK(ol_kind_of(&x.tree, ol_field(&x.tree, aug, OL_F_operator)) == OL_T_PLUS_EQ);
    CHECK(ol_text_is(&x.tree, ol_field(&x.tree, aug, OL_F_left), "total"));
    parsed_free(&x);
}

static void test_syntax_errors_collected(void)
{
    parsed x;
    parse_text(&x, "for x in y\n    pass\nprint 'py2'\nz = (1,\n");
    CHECK(x.tree.errors.len >= 1);
    parsed_free(&x);
}

static void test_deep_nesting_does_not_crash(void)
{
    ol_buf b = {0};
    for (int i = 0; i < 3000; i++)
        ol_buf_putc(&b, '(');
    ol_buf_putc(&b, '1');
    for (int i = 0; i < 3000; i++)
        ol_buf_putc(&b, ')');
    ol_buf_putc(&b, '\n');
    parsed x;
    parse_text(&x, b.data);
    CHECK(x.tree.nodes.len > 1000);
    parsed_free(&x);
    ol_buf_free(&b);
}

/* Long runs of comment lines are parsed blanked (syntax.c): their comments
 * are still recorded; lines starting with # inside a string stay the
 * string's (the blanked parse is rejected there). */
static void test_comment_runs(void)
{
    ol_buf b = {0};
    ol_buf_puts(&b, "def f():\n    x = 1\n");
    for (int i = 0; i < 100; i++)
        ol_buf_puts(&b, "    # old code\n");
    ol_buf_puts(&b, "    y = 2\n");
    parsed x;
    parse_text(&x, b.data);
    CHECK(x.tree.comments.len == 100);
    CHECK(x.tree.errors.len == 0);
    CHECK(find_node(&x, OL_N_assignment, "y = 2") != OL_NONE);
    for (size_t i = 1; i < x.tree.comments.len; i++)
        CHECK(x.tree.comments.items[i - 1].start < x.tree.comments.items[i].start);
    uint32_t len;
    const char *first = x.tree.src->text + x.tree.comments.items[0].start;
    len = x.tree.comments.items[0].end - x.tree.comments.items[0].start;
    CHECK(len == 10 && memcmp(first, "# old code", 10) == 0);
    parsed_free(&x);
    ol_buf_clear(&b);
    ol_buf_puts(&b, "s = '''\n");
    for (int i = 0; i < 100; i++)
        ol_buf_puts(&b, "# not a comment\n");
    ol_buf_puts(&b, "'''\n# a comment\n");
    parse_text(&x, b.data);
    CHECK(x.tree.comments.len == 1);
    CHECK(x.tree.errors.len == 0);
    ol_nid str = OL_NONE;
    for (ol_nid n = 0; n < x.tree.nodes.len; n++)
        if (ol_kind_of(&x.tree, n) == OL_N_string)
            str = n;
    CHECK(str != OL_NONE && ol_node_at(&x.tree, str)->end - ol_node_at(&x.tree, str)->start > 1500);
    parsed_free(&x);
    ol_buf_free(&b);
}

static void test_imports_resolve(void)
{
    parsed x;
    parse_text(&x, "import torch as T\nfrom torch import nn\nfrom torch.cuda import amp\n"
                   "a = T.cuda.amp.autocast\nb = nn.Linear\nc = amp.GradScaler\n");
    const char *q;
    q = ol_qualname(&x.model, find_node(&x, OL_N_attribute, "T.cuda.amp.autocast"));
    CHECK(q && strcmp(q, "torch.cuda.amp.autocast") == 0);
    q = ol_qualname(&x.model, find_node(&x, OL_N_attribute, "nn.Linear"));
    CHECK(q && strcmp(q, "torch.nn.Linear") == 0);
    q = ol_qualname(&x.model, find_node(&x, OL_N_attribute, "amp.GradScaler"));
    CHECK(q && strcmp(q, "torch.cuda.amp.GradScaler") == 0);
    parsed_free(&x);
}

static void test_import_dotted_binds_first_name(void)
{
    parsed x;
    parse_text(&x, "import torch\nimport torch.utils.data\nimport os.path\nz = torch.no_grad\n");
    const char *q = ol_qualname(&x.model, find_node(&x, OL_N_attribute, "torch.no_grad"));
    CHECK(q && strcmp(q, "torch.no_grad") == 0);
    parsed_free(&x);
}

/* The index of the subscript `X[...]` on the line holding `tag`. */
static ol_nid index_on(const parsed *x, const char *tag)
{
    const char *at = strstr(x->src.text, tag);
    if (!at)
        return OL_NONE;
    const char *line = at;
    while (line > x->src.text && line[-1] != '\n')
        line--;
    uint32_t from = (uint32_t)(line - x->src.text), to = (uint32_t)(at - x->src.text);
    for (ol_nid n = 0; n < x->tree.nodes.len; n++) {
        const ol_node *nd = ol_node_at(&x->tree, n);
        if (ol_kind_of(&x->tree, n) == OL_N_subscript && nd->start >= from && nd->end <= to &&
            ol_text_is(&x->tree, ol_field(&x->tree, n, OL_F_value), "X"))
            return ol_field(&x->tree, n, OL_F_subscript);
    }
    return OL_NONE;
}

static void test_batch_index_variables(void)
{
    parsed x;
    parse_text(&x, "import torch\nimport numpy as np\n"
                   "perm = torch.randperm(n)\nkeep = y == 3\norder = np.load('o.npy')\n"
                   "for i in range(0, n, 64):\n"
                   "    idx = perm[i:i + 64]\n    a = X[idx]  # perm\n"
                   "    ix = torch.randint(0, n, (64,))\n    b = X[ix]  # randint\n"
                   "    m = torch.rand(n) < 0.1\n    c = X[m]  # mask\n"
                   "    j = np.random.randint(n)\n    d = X[j]  # one\n"
                   "    e = X[keep]  # fixed\n"
                   "    o = order[i:i + 64]\n    f = X[o]  # data\n"
                   "    g = X[i]  # single\n"
                   "for bi in perm.split(64):\n    h = X[bi]  # split\n");
    ol_model *m = &x.model;
    CHECK(ol_batch_index(m, index_on(&x, "# perm")));
    CHECK(ol_batch_index(m, index_on(&x, "# randint")));
    CHECK(ol_batch_index(m, index_on(&x, "# mask")));
    CHECK(ol_batch_index(m, index_on(&x, "# split")));
    CHECK(!ol_batch_index(m, index_on(&x, "# one")));
    CHECK(!ol_batch_index(m, index_on(&x, "# fixed")));
    CHECK(!ol_batch_index(m, index_on(&x, "# data")));
    CHECK(!ol_batch_index(m, index_on(&x, "# single")));
    CHECK(index_on(&x, "# one") != OL_NONE && index_on(&x, "# fixed") != OL_NONE &&
          index_on(&x, "# data") != OL_NONE && index_on(&x, "# single") != OL_NONE);
    parsed_free(&x);
}

static void test_values_follow_assignments(void)
{
    parsed x;
    parse_text(&x, "import torch\nimport torch.nn as nn\n"
                   "model = nn.Linear(2, 2)\ncrit = nn.CrossEntropyLoss()\n"
                   "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                   "out = model(x)\nloss = crit(out, y)\nval = loss.item()\ndet = loss.detach()\n"
                   "acc = (out.argmax(1) == y).sum()\n"
                   "with torch.no_grad():\n    quiet = model(x)\n"
                   "print(model, crit, opt, out, loss, val, det, acc, quiet)\n");
    ol_model *m = &x.model;
    CHECK(ol_eval(m, last_name(&x, "model")).kind == OL_V_MODULE);
    ol_val crit = ol_eval(m, last_name(&x, "crit"));
    CHECK(crit.kind == OL_V_MODULE && (crit.flags & OL_VF_LOSSFN));
    CHECK(ol_eval(m, last_name(&x, "opt")).kind == OL_V_OPTIMIZER);
    CHECK(ol_val_is_graph(ol_eval(m, last_name(&x, "out"))));
    ol_val loss = ol_eval(m, last_name(&x, "loss"));
    CHECK(ol_val_is_graph(loss) && (loss.flags & OL_VF_LOSS));
    CHECK(ol_eval(m, last_name(&x, "val")).kind == OL_V_NUMBER);
    CHECK(!ol_val_is_graph(ol_eval(m, last_name(&x, "det"))));
    CHECK(!ol_val_is_graph(ol_eval(m, last_name(&x, "acc"))));
    CHECK(!ol_val_is_graph(ol_eval(m, last_name(&x, "quiet"))));
    parsed_free(&x);
}

static void test_reaching_defs_respect_order(void)
{
    parsed x;
    parse_text(&x, "import torch.nn as nn\nm = nn.Linear(1, 1)\nloss = m(a)\nloss.backward()\n"
                   "loss = loss.item()\nprint(loss)\n");
    CHECK(ol_eval(&x.model, last_name(&x, "loss")).kind == OL_V_NUMBER);
    parsed_free(&x);
}

static void test_backward_marks_unknown_values(void)
{
    parsed x;
    parse_text(&x, "loss = compute(batch)\nloss.backward()\nprint(loss)\n");
    CHECK(ol_val_is_graph(ol_eval(&x.model, last_name(&x, "loss"))));
    parsed_free(&x);
}

static void test_params_from_call_sites(void)
{
    parsed x;
    parse_text(&x, "import torch\nfrom torch import nn\n"
                   "def run(net, data):\n    return net(data)\n"
                   "run(nn.Linear(2, 2), torch.zeros(2))\n");
    ol_nid call = find_node(&x, OL_N_call, "net(data)");
    CHECK(ol_val_is_graph(ol_eval(&x.model, call)));
    parsed_free(&x);
}

static void test_self_attributes_across_methods(void)
{
    parsed x;
    parse_text(&x, "import torch.nn as nn\n"
                   "class Trainer:\n"
                   "    def __init__(self):\n        self.net = nn.Linear(2, 2)\n"
                   "        self.criterion = nn.MSELoss()\n"
                   "    def step(self, x, y):\n        return self.criterion(self.net(x), y)\n");
    ol_nid call = find_node(&x, OL_N_call, "self.criterion(self.net(x), y)");
    ol_val v = ol_eval(&x.model, call);
    CHECK(ol_val_is_graph(v) && (v.flags & OL_VF_LOSS));
    parsed_free(&x);
}

/* The nth (0-based) argument list's first argument of calls named fn. */
static ol_nid nth_first_arg(const parsed *x, const char *fn, int nth, int arg)
{
    for (ol_nid n = 0; n < x->tree.nodes.len; n++) {
        if (ol_kind_of(&x->tree, n) != OL_N_call || !ol_text_is(&x->tree, ol_field(&x->tree, n, OL_F_function), fn))
            continue;
        if (nth-- == 0) {
            ol_nid a = ol_first_named(&x->tree, ol_field(&x->tree, n, OL_F_arguments));
            while (arg-- > 0 && a != OL_NONE)
                a = ol_next_named(&x->tree, a);
            return a;
        }
    }
    return OL_NONE;
}

static void test_path_shapes(void)
{
    parsed x;
    parse_text(&x, "import os, torch\n"
                   "class C:\n"
                   "    A = 'a.pt'\n"
                   "    def w(self, root, x):\n"
                   "        path = f\"{root.dir}/x.pt\"\n"
                   "        torch.save(x, path)\n"
                   "        torch.save(x, os.path.join(self.d, self.A))\n"
                   "    def r(self, root, t):\n"
                   "        torch.load(f'{root.dir}/x.pt')\n"
                   "        name = self.A if t else 'b.pt'\n"
                   "        torch.load(os.path.join(self.d, name))\n"
                   "        torch.load(os.path.join(super().d, self.A))\n"
                   "def one(root):\n"
                   "    p = f\"{root}/y.pt\"\n"
                   "    torch.save(1, p)\n"
                   "    return torch.load(f\"{root}/y.pt\")\n"
                   "def other(root):\n"
                   "    return torch.load(f\"{root}/y.pt\")\n"
                   "def ranked(rank):\n"
                   "    torch.save(1, f\"tmp_{rank}.pt\")\n"
                   "    return torch.load(f\"tmp_{rank}.pt\"), torch.load('ranking.pt')\n");
    ol_model *m = &x.model;
    ol_shapes s1 = {0}, s2 = {0}, l1 = {0}, l2 = {0}, l3 = {0}, l4 = {0}, l5 = {0};
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.save", 0, 1), &s1));
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.save", 1, 1), &s2));
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.load", 0, 0), &l1));
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.load", 1, 0), &l2));
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.load", 2, 0), &l3));
    /* the root parameters of two methods are two bindings: two files */
    CHECK(s1.len == 1 && l1.len == 1 && !ol_shapes_meet(&s1, &l1));
    /* either name of the conditional; super() is the object itself */
    CHECK(l2.len == 2 && ol_shapes_meet(&l2, &s2) && l3.len == 1 && ol_shapes_meet(&l3, &s2));
    CHECK(ol_shapes_has(&s2, "os.path.join(self.d,self.A)"));
    /* through the variable, in one function, the same f-string in either quotes */
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.save", 2, 1), &l4));
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.load", 3, 0), &l5));
    CHECK(ol_shapes_meet(&l4, &l5));
    ol_shapes_free(&l5);
    CHECK(ol_path_shapes(m, nth_first_arg(&x, "torch.load", 4, 0), &l5));
    CHECK(!ol_shapes_meet(&l4, &l5));
    CHECK(ol_path_per_rank(m, nth_first_arg(&x, "torch.load", 5, 0)));
    CHECK(!ol_path_per_rank(m, nth_first_arg(&x, "torch.load", 6, 0)));
    CHECK(!ol_path_per_rank(m, nth_first_arg(&x, "torch.load", 3, 0)));
    ol_shapes *all[] = {&s1, &s2, &l1, &l2, &l3, &l4, &l5};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        ol_shapes_free(all[i]);
    parsed_free(&x);
}

static void test_loader_loops_are_data_loops(void)
{
    parsed x;
    parse_text(&x, "from torch.utils.data import DataLoader\nfrom tqdm import tqdm\n"
                   "dl = DataLoader(ds)\n"
                   "for i, (a, b) in enumerate(tqdm(dl)):\n    pass\n"
                   "for k in range(3):\n    pass\n");
    CHECK(x.model.loops.len == 2);
    CHECK(ol_loop_is_data_loop(&x.model, 0));
    CHECK(!ol_loop_is_data_loop(&x.model, 1));
    ol_nid a = last_name(&x, "a");
    ol_val v = ol_eval(&x.model, a);
    CHECK(v.kind == OL_V_TENSOR && !ol_val_is_graph(v));
    parsed_free(&x);
}

static void test_contexts(void)
{
    parsed x;
    parse_text(&x, "import torch\nctx = torch.autocast('cuda', dtype=torch.bfloat16)\n"
                   "with ctx:\n    a = 1\n"
                   "with torch.cuda.amp.autocast() as _, torch.no_grad():\n    b = 2\n"
                   "@torch.no_grad()\ndef ev():\n    c = 3\n");
    ol_model *m = &x.model;
    ol_nid a = find_node(&x, OL_N_assignment, "a = 1");
    uint32_t ac = ol_autocast_at(m, a);
    CHECK(ac != OL_NO_INDEX && (m->contexts.items[ac].autocast & OL_AC_BF16));
    ol_nid b = find_node(&x, OL_N_assignment, "b = 2");
    ac = ol_autocast_at(m, b);
    CHECK(ac != OL_NO_INDEX && (m->contexts.items[ac].autocast & OL_AC_FP16));
    CHECK(ol_grad_disabled(m, b));
    CHECK(!ol_grad_disabled(m, a));
    CHECK(ol_grad_disabled(m, find_node(&x, OL_N_assignment, "c = 3")));
    parsed_free(&x);
}

/* set_grad_enabled as a statement, found through the text's spelling of it:
 * aliases and dotted spellings still found, a file that never spells it
 * looked at no further, a spelling that is no call changes nothing */
static void test_grad_setters_spelled(void)
{
    parsed x;
    parse_text(&x, "from torch import set_grad_enabled as sge\nsge(False)\na = 1\n");
    CHECK(ol_grad_setters_spelled(&x.model));
    CHECK(ol_grad_any_setter_statements(&x.model));
    CHECK(x.model.grad_globally_disabled);
    CHECK(ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "a = 1")));
    parsed_free(&x);
    parse_text(&x, "import torch.autograd.grad_mode as gm\ndef f():\n    b = 1\n    gm.set_grad_enabled(False)\n"
                   "    c = 2\n");
    CHECK(!x.model.grad_globally_disabled);
    CHECK(!ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "b = 1")));
    CHECK(ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "c = 2")));
    parsed_free(&x);
    parse_text(&x, "import torch\nsetter = torch.no_grad\nsetter()\nd = 1\n");
    CHECK(!ol_grad_setters_spelled(&x.model));
    CHECK(!ol_grad_any_setter_statements(&x.model));
    CHECK(!x.model.grad_globally_disabled);
    CHECK(!ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "d = 1")));
    parsed_free(&x);
    /* spelled in a comment only: looked at, and no call found */
    parse_text(&x, "import torch\n# torch.set_grad_enabled(False)\ne = 1\n");
    CHECK(ol_grad_setters_spelled(&x.model));
    CHECK(!ol_grad_any_setter_statements(&x.model));
    CHECK(!x.model.grad_globally_disabled);
    CHECK(!ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "e = 1")));
    parsed_free(&x);
    /* one statement inside a function: the module's code keeps autograd on */
    parse_text(&x, "import torch\ndef g():\n    torch.set_grad_enabled(False)\n    h = 1\nk = 2\n");
    CHECK(ol_grad_any_setter_statements(&x.model));
    CHECK(!x.model.grad_globally_disabled);
    CHECK(ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "h = 1")));
    CHECK(!ol_grad_disabled(&x.model, find_node(&x, OL_N_assignment, "k = 2")));
    parsed_free(&x);
}

/* The model's lookups that stand for walks over a file (names.c, model.c,
 * classes.c): each answer checked against what the walk gives. */
static void test_model_lookups(void)
{
    parsed x;
    parse_text(&x, "import torch\n"
                   "class A:\n    def m(self):\n        self.d = 1\n    def m(self):\n        self.d = 2\n"
                   "class B(A):\n    def n(self):\n        return self.d\n"
                   "class C:\n    pass\n"
                   "def f(xs):\n    d = 0\n    for x in zip(xs, [y for y in xs]):\n        d = x\n"
                   "    m.eval()\n    m.train()\n    return d\n");
    ol_model *m = &x.model;
    const ol_tree *t = &x.tree;
    /* every identifier spelled `d`, in node order, and a window of them */
    ol_nid first_d = find_node(&x, OL_N_identifier, "d");
    size_t count = 0, at = 0, walked = 0;
    const ol_nid *uses = ol_name_uses(m, first_d, 0, (ol_nid)t->nodes.len, &count, &at);
    for (ol_nid n = 0; n < t->nodes.len; n++)
        if (ol_kind_of(t, n) == OL_N_identifier && ol_text_is(t, n, "d")) {
            CHECK(walked < count && uses[walked] == n);
            walked++;
        }
    CHECK(walked == count && count == 6);
    size_t fn_count;
    uint32_t fi = ol_function_of(m, last_name(&x, "d"));
    CHECK(fi != OL_NO_INDEX);
    ol_nid body = m->functions.items[fi].node;
    const ol_nid *in_f = ol_name_uses(m, first_d, body, m->subtree_end[body], &fn_count, NULL);
    CHECK(fn_count == 3 && in_f[0] > body && in_f == uses + 3);
    CHECK(ol_name_uses_total(m) > count);
    /* a class's members by name: both methods `m` in order, attribute defs */
    const ol_member *k;
    CHECK(ol_class_methods_named(m, 0, ol_model_intern(m, "m"), &k) == 2 && k[0].index < k[1].index);
    CHECK(ol_class_methods_named(m, 1, ol_model_intern(m, "m"), &k) == 0);
    size_t attrs = ol_class_attrs_named(m, 0, ol_model_intern(m, "d"), &k);
    CHECK(attrs == 2 && m->defs.items[k[0].index].target < m->defs.items[k[1].index].target);
    /* the class hierarchy of the file */
    CHECK(ol_class_derives(m, 1, 0) && !ol_class_derives(m, 0, 1) && !ol_class_derives(m, 2, 0));
    /* the def a target writes */
    ol_nid target = ol_field(t, find_node(&x, OL_N_assignment, "d = 0"), OL_F_left);
    uint32_t def = ol_def_of_target(m, target);
    CHECK(def != OL_NO_INDEX && m->defs.items[def].target == target);
    ol_nid self_d = ol_field(t, find_node(&x, OL_N_assignment, "self.d = 2"), OL_F_left);
    CHECK(ol_def_of_target(m, self_d) == k[1].index);
    CHECK(ol_def_of_target(m, find_node(&x, OL_N_identifier, "zip")) == OL_NO_INDEX);
    /* the loops over an expression: `xs` in zip(...) and in the comprehension */
    ol_nid inner_xs = last_name(&x, "xs");
    uint32_t over[4];
    size_t loops = ol_loops_iterating(m, inner_xs, over, 4);
    CHECK(loops == 2 && over[0] < over[1]);
    CHECK(ol_loops_iterating(m, find_node(&x, OL_N_identifier, "zip"), over, 4) == 1);
    CHECK(ol_loops_iterating(m, target, over, 4) == 0);
    /* eval()/train() calls, and the first call at or after a node */
    size_t modes;
    const uint32_t *mode = ol_mode_calls(m, &modes);
    CHECK(modes == 2 && m->calls.items[mode[0]].name == m->names.eval);
    CHECK(ol_calls_from(m, m->calls.items[mode[0]].node, 0, m->calls.len) == mode[0]);
    CHECK(ol_calls_from(m, m->calls.items[mode[0]].node + 1, 0, m->calls.len) == mode[1]);
    CHECK(ol_calls_from(m, (ol_nid)t->nodes.len, 0, m->calls.len) == m->calls.len);
    parsed_free(&x);
}

/* A block behind `if not hasattr(obj, "x")` that sets obj.x runs once; one
 * whose attribute is deleted elsewhere, that sets something else, or behind
 * `if obj.x is None` runs as often as its function. */
static void test_first_time_blocks(void)
{
    parsed x;
    parse_text(&x, "class Pool:\n"
                   "    def __init__(self):\n        self.bank = None\n"
                   "    def step(self, b):\n"
                   "        if not hasattr(self, 'queue'):\n            self.queue = b  # q\n"
                   "        if not hasattr(self, 'tmp'):\n            self.tmp = b  # tmp\n"
                   "        if not hasattr(self, 'queue'):\n            self.other = b  # other\n"
                   "        if self.bank is None:\n            self.bank = b  # bank\n"
                   "    def reset(self):\n        del self.tmp\n"
                   "for b in loader:\n    pool.step(b)\n");
    ol_model *m = &x.model;
    ol_often_local loc;
    ol_often_explain(m, find_node(&x, OL_N_assignment, "self.queue = b"), &loc);
    CHECK(loc.often == OL_ONCE && loc.cause == OL_OC_FIRST_TIME);
    ol_often_explain(m, find_node(&x, OL_N_assignment, "self.tmp = b"), &loc);
    CHECK(loc.cause != OL_OC_FIRST_TIME);
    ol_often_explain(m, find_node(&x, OL_N_assignment, "self.other = b"), &loc);
    CHECK(loc.cause != OL_OC_FIRST_TIME);
    ol_often_explain(m, find_node(&x, OL_N_assignment, "self.bank = b"), &loc);
    CHECK(loc.cause != OL_OC_FIRST_TIME);
    parsed_free(&x);
}

/* `.numpy()` of a total, reached through in-place updates and methods that
 * keep requires_grad, shows it holds no graph; a detach or a rebinding
 * first does not. */
static void test_numpy_shows_no_graph(void)
{
    parsed x;
    parse_text(&x, "def f(net, xs):\n    mu = 0\n    for x in xs:\n        mu += net(x)  # a\n"
                   "    mu /= 2\n    return mu.cpu().double().numpy()\n"
                   "def g(net, xs):\n    nu = 0\n    for x in xs:\n        nu += net(x)  # b\n"
                   "    return nu.detach().numpy()\n"
                   "def h(net, xs):\n    ka = 0\n    for x in xs:\n        ka += net(x)  # c\n"
                   "    ka = ka.detach()\n    return ka.numpy()\n");
    ol_model *m = &x.model;
    ol_nid a = find_node(&x, OL_N_augmented_assignment, "mu += net(x)");
    ol_nid b = find_node(&x, OL_N_augmented_assignment, "nu += net(x)");
    ol_nid c = find_node(&x, OL_N_augmented_assignment, "ka += net(x)");
    CHECK(a != OL_NONE && b != OL_NONE && c != OL_NONE);
    CHECK(ol_numpy_shows_no_graph(m, ol_field(&x.tree, a, OL_F_left), a, NULL) != OL_NONE);
    CHECK(ol_numpy_shows_no_graph(m, ol_field(&x.tree, b, OL_F_left), b, NULL) == OL_NONE);
    CHECK(ol_numpy_shows_no_graph(m, ol_field(&x.tree, c, OL_F_left), c, NULL) == OL_NONE);
    parsed_free(&x);
}

/* ---- suppressions and selection ------------------------------------------------ */

static void test_suppressions(void)
{
    parsed x;
    parse_text(&x, "# oomlint: disable-file=OOM702\n"
                   "a = 1  # noqa\n"
                   "b = 2  # NOQA: oom101, OOM102\n"
                   "c = 3  # oomlint: disable=OOM502\n"
                   "s = '# noqa'\n"
                   "def f():\n    # oomlint: disable=OOM201\n    x = 1\n    y = 2\nz = 3\n");
    ol_suppressions s;
    ol_suppressions_collect(&s, &x.tree);
    CHECK(ol_suppressed(&s, 2, "OOM101"));
    CHECK(ol_suppressed(&s, 3, "OOM101"));
    CHECK(ol_suppressed(&s, 3, "OOM102"));
    CHECK(!ol_suppressed(&s, 3, "OOM103"));
    CHECK(ol_suppressed(&s, 4, "OOM502"));
    CHECK(!ol_suppressed(&s, 4, "OOM101"));
    CHECK(!ol_suppressed(&s, 5, "OOM101"));
    CHECK(ol_suppressed(&s, 8, "OOM201") && ol_suppressed(&s, 9, "OOM201"));
    CHECK(!ol_suppressed(&s, 10, "OOM201"));
    CHECK(ol_suppressed(&s, 10, "OOM702"));
    ol_suppressions_free(&s);
    parsed_free(&x);
}

static void test_disable_file_only_in_leading_comments(void)
{
    parsed x;
    parse_text(&x, "import os\n# oomlint: disable-file\nx = 1\n");
    ol_suppressions s;
    ol_suppressions_collect(&s, &x.tree);
    CHECK(!ol_suppressed(&s, 3, "OOM101"));
    ol_suppressions_free(&s);
    parsed_free(&x);
}

static void test_suppression_spans_and_use(void)
{
    parsed x;
    const char *text = "a = 1  # noqa: OOM101, E501  # why\n"
                       "# oomlint: disable=OOM201\n"
                       "b = 2  # oomlint: disable=OOM201\n";
    parse_text(&x, text);
    ol_suppressions s;
    ol_suppressions_collect(&s, &x.tree);
    CHECK(s.items.len == 3);
    const ol_suppression *n = &s.items.items[0];
    CHECK(n->kind == OL_SUPPRESS_NOQA && n->codes.len == 2 && n->code_spans.len == 2);
    /* the directive runs from its '#' to its last code; the note after it is not part of it */
    CHECK(n->start == 7 && strncmp(text + n->start, "# noqa", 6) == 0);
    CHECK(strncmp(text + n->keyword, "noqa", 4) == 0);
    CHECK(strncmp(text + n->code_spans.items[1].start, "E501", 4) == 0 && n->end == n->code_spans.items[1].end);
    CHECK(s.items.items[1].kind == OL_SUPPRESS_DISABLE);
    /* line 3 is covered by both the block directive and its own: the narrower one is used */
    CHECK(ol_suppression_use(&s, 3, "OOM201"));
    CHECK(s.items.items[2].used && s.items.items[2].code_used.items[0] && !s.items.items[1].used);
    CHECK(ol_suppression_use(&s, 1, "OOM101") && n->code_used.items[0] && !n->code_used.items[1]);
    CHECK(!ol_suppression_use(&s, 1, "OOM102"));
    ol_suppressions_free(&s);
    parsed_free(&x);
}

static void test_format_and_severity_names(void)
{
    ol_format f;
    CHECK(ol_format_parse("full", &f) && f == OL_FMT_TEXT);
    CHECK(ol_format_parse("text", &f) && f == OL_FMT_TEXT);
    CHECK(ol_format_parse("concise", &f) && f == OL_FMT_CONCISE);
    CHECK(ol_format_parse("sarif", &f) && f == OL_FMT_SARIF);
    CHECK(!ol_format_parse("Full", &f) && !ol_format_parse("", &f));
    ol_severity sev;
    CHECK(ol_severity_parse("info", &sev) && sev == OL_SEV_INFO);
    CHECK(ol_severity_parse("error", &sev) && sev == OL_SEV_ERROR);
    CHECK(!ol_severity_parse("fatal", &sev));
}

static bool enabled_code(const ol_selection *sel, const char *code)
{
    bool *en = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve(sel, en);
    bool on = en[ol_rule_index(ol_rule_find(code))];
    free(en);
    return on;
}

static void test_selection(void)
{
    ol_selection sel = {0};
    CHECK(enabled_code(&sel, "OOM101"));
    CHECK(enabled_code(&sel, "OOM502"));
    ol_selectors_add(&sel.ignore, "oom5");
    CHECK(!enabled_code(&sel, "OOM502"));
    CHECK(enabled_code(&sel, "OOM101"));
    ol_selection_free(&sel);

    ol_selection sel2 = {0};
    sel2.has_select = true;
    ol_selectors_add(&sel2.select, "OOM502");
    CHECK(!enabled_code(&sel2, "OOM101"));
    CHECK(enabled_code(&sel2, "OOM502"));
    CHECK(enabled_code(&sel2, "OOM001"));
    CHECK(enabled_code(&sel2, "OOM002"));
    ol_selection_free(&sel2);

    /* the more specific selector wins */
    ol_selection sel3 = {0};
    ol_selectors_add(&sel3.ignore, "OOM1");
    ol_selectors_add(&sel3.extend_select, "OOM101");
    CHECK(enabled_code(&sel3, "OOM101"));
    ol_selectors_add(&sel3.ignore, "OOM0");
    CHECK(!enabled_code(&sel3, "OOM002"));
    CHECK(enabled_code(&sel3, "OOM001"));
    ol_selection_free(&sel3);

    ol_selection bad = {0};
    ol_selectors_add(&bad.select, "OOM9,XYZ");
    CHECK(ol_selection_invalid(&bad) != NULL);
    ol_selection_free(&bad);
}

static void test_name_tokens(void)
{
    CHECK(ol_name_looks_like("train_loader", 12, (const char *const[]){"loader", NULL}));
    CHECK(ol_name_looks_like("netG", 4, (const char *const[]){"net", NULL}));
    CHECK(!ol_name_looks_like("network_id", 10, (const char *const[]){"net", NULL}));
}

/* ---- fixes ------------------------------------------------------------------ */

static void test_fix_overlap_rejected(void)
{
    ol_fix *f = ol_fix_new(false, "x");
    ol_fix_edit(f, 5, 10, "a");
    ol_fix_edit(f, 0, 6, "b");
    CHECK(!ol_fix_normalize(f));
    ol_fix_free(f);
    f = ol_fix_new(false, "x");
    ol_fix_edit(f, 5, 10, "a");
    ol_fix_edit(f, 0, 5, "b");
    CHECK(ol_fix_normalize(f));
    CHECK(f->edits.items[0].start == 0);
    ol_fix_free(f);
}

/* A diag of `rule` over [start, end) with a one-edit fix. */
static ol_diag fix_diag(const char *rule, uint32_t start, uint32_t end, const char *content, bool unsafe)
{
    ol_diag d = {0};
    d.rule = ol_rule_find(rule);
    d.start = start;
    d.end = end;
    d.message = ol_xstrdup(content);
    d.fix = ol_fix_new(unsafe, "test");
    ol_fix_edit(d.fix, start, end, content);
    return d;
}

static void test_fix_identical_edits_applied_once(void)
{
    /* two findings wanting the same insertion (a name imported twice): once */
    const char *text = "s = GradScaler()\n";
    ol_diag_vec diags = {0};
    ol_vec_push(&diags, fix_diag("OOM502", 15, 15, "\"cuda\"", false));
    ol_vec_push(&diags, fix_diag("OOM502", 15, 15, "\"cuda\"", false));
    ol_buf out = {0};
    CHECK(ol_apply_fixes(text, strlen(text), &diags, false, &out) == 2);
    CHECK(out.data && strcmp(out.data, "s = GradScaler(\"cuda\")\n") == 0);
    /* different insertions at one point: one waits for the next round */
    ol_diag_vec_free(&diags);
    ol_vec_push(&diags, fix_diag("OOM502", 15, 15, "\"cuda\"", false));
    ol_vec_push(&diags, fix_diag("OOM502", 15, 15, "\"cpu\"", false));
    CHECK(ol_apply_fixes(text, strlen(text), &diags, false, &out) == 1);
    CHECK(out.data && strcmp(out.data, "s = GradScaler(\"cuda\")\n") == 0);
    ol_diag_vec_free(&diags);
    ol_buf_free(&out);
}

static void test_fix_one_per_statement(void)
{
    /* two fixes claiming one statement: the wider goes first, the other waits */
    const char *text = "x = f(a) + g(b)\ny = h(c)\n";
    ol_diag_vec diags = {0};
    ol_vec_push(&diags, fix_diag("OOM102", 7, 7, ".item()", true));
    ol_vec_push(&diags, fix_diag("OOM102", 14, 14, ".item()", true));
    ol_vec_push(&diags, fix_diag("OOM102", 23, 23, ".item()", true));
    for (size_t i = 0; i < 2; i++) {
        diags.items[i].fix->edits.items[0].claim_start = 0;
        diags.items[i].fix->edits.items[0].claim_end = 15;
    }
    diags.items[2].fix->edits.items[0].claim_start = 16;
    diags.items[2].fix->edits.items[0].claim_end = 24;
    ol_buf out = {0};
    CHECK(ol_apply_fixes(text, strlen(text), &diags, true, &out) == 2);
    CHECK(out.data && strcmp(out.data, "x = f(a.item()) + g(b)\ny = h(c.item())\n") == 0);
    /* unsafe fixes are left without --unsafe-fixes */
    CHECK(ol_apply_fixes(text, strlen(text), &diags, false, &out) == 0);
    ol_diag_vec_free(&diags);
    ol_buf_free(&out);
}

/* A round that breaks the code is cut down to the fixes that do not. */
static void test_fix_round_sets_aside_a_breaking_fix(void)
{
    ol_grammar g;
    CHECK(ol_grammar_init(&g));
    ol_settings settings = {0};
    settings.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    for (size_t i = 0; i < ol_rule_count; i++)
        settings.enabled[i] = true;
    ol_linter lt;
    ol_linter_init(&lt, &g, &settings);
    const char *text = "import torch\nimport torch.nn as nn\nmodel = nn.Linear(2, 2).cuda()\n"
                       "model.load_state_dict(torch.load('a.pt'))\n"
                       "model.load_state_dict(torch.load('b.pt'))\n"
                       "z = 1\n";
    ol_source src;
    ol_source_init_text(&src, "t.py", ol_xstrdup(text), strlen(text));
    ol_file_result r = {0};
    ol_lint_source(&lt, &src, &r);
    CHECK(r.diags.len == 2);
    /* a third "fix" that would leave an unclosed parenthesis */
    const char *z = strstr(text, "z = 1");
    ol_diag bad = fix_diag("OOM302", (uint32_t)(z - text), (uint32_t)(z - text) + 1, "(z", false);
    ol_vec_push(&r.diags, bad);
    ol_fix_outcome outcome;
    ol_fix_file(&lt, &r, OL_FIX_DIFF, false, &outcome);
    CHECK(outcome.applied == 2);
    CHECK(outcome.error == NULL);
    CHECK(strstr(r.src.text, "torch.load('a.pt', map_location=\"cpu\")") != NULL);
    CHECK(strstr(r.src.text, "torch.load('b.pt', map_location=\"cpu\")") != NULL);
    CHECK(strstr(r.src.text, "(z") == NULL);
    for (size_t i = 0; i < r.diags.len; i++)
        CHECK(r.diags.items[i].rule != &ol_rule_oom002);
    ol_fix_outcome_free(&outcome);
    ol_file_result_free(&r);
    ol_linter_free(&lt);
    free(settings.enabled);
    ol_grammar_free(&g);
}

/* The constructs of `text` that Python `floor` cannot parse. */
static size_t newer_in(const char *text, unsigned floor, ol_newer_syntax *first)
{
    parsed x;
    parse_text(&x, text);
    CHECK(x.tree.errors.len == 0);
    size_t n = ol_syntax_newer_than(&x.tree, floor, first);
    parsed_free(&x);
    return n;
}

static void test_python_floor_from_requires_python(void)
{
    static const struct {
        const char *text;
        unsigned floor;
    } cases[] = {
        {"[project]\nrequires-python = \">=3.9\"\n", 309},
        {"[project]\nrequires-python = \">=3.10, <4\"\n", 310},
        {"requires-python = '~=3.11'\n", 311},
        {"  requires-python=\">3.8\"\n", 308},
        {"requires-python = \"<4,>=3.12.1\"\n", 312},
        {"requires-python = \"==3.10.*\"\n", 310},
        {"requires-python = \">=2.7, !=3.0.*\"\n", 300},
        {"requires-python = \"<3.13\"\n", 0},
        {"[project]\nname = \"requires-python\"\n", 0},
        {"# requires-python = \">=3.12\"\n", 0},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(cases); i++) {
        unsigned got = ol_python_floor_in_text(cases[i].text, strlen(cases[i].text));
        if (got != cases[i].floor)
            fprintf(stderr, "  floor of %s: %u\n", cases[i].text, got);
        CHECK(got == cases[i].floor);
    }
    /* none declared: 3.8 */
    CHECK(ol_python_floor("/nonexistent-dir-oomlint/x/t.py") == OL_PYTHON_FLOOR_DEFAULT);
}

static void test_syntax_newer_than_the_floor(void)
{
    ol_newer_syntax first = {0, 0, 0, NULL};
    /* PEP 701 (3.12): the f-string's own quote, a backslash, a comment, a line break */
    CHECK(newer_in("x = f\"{d[\"k\"]}\"\n", 308, &first) == 1);
    CHECK(first.needs == 312 && first.at == 6 && strstr(first.what, "own quote"));
    CHECK(newer_in("x = f\"{d[\"k\"]}\"\n", 312, NULL) == 0);
    CHECK(newer_in("x = f'{d[\"k\"]}' + f\"{d['k']}\" + f\"\"\"{d[\"k\"]}\"\"\"\n", 308, NULL) == 0);
    CHECK(newer_in("x = f\"{f'{y}'}\"\n", 308, NULL) == 0);
    CHECK(newer_in("x = f\"{f\"{y}\"}\"\n", 308, NULL) == 1);
    CHECK(newer_in("x = f\"{'\\n'.join(y)}\"\n", 311, &first) == 1 && strstr(first.what, "backslash"));
    CHECK(newer_in("x = f\"{y!r:>{w}} {z=}\\n\"\n", 308, NULL) == 0); /* a backslash outside the fields */
    CHECK(newer_in("x = f'''{y # note\n}'''\n", 308, &first) == 1 && strstr(first.what, "`#`"));
    CHECK(newer_in("x = f'{y +\n z}'\n", 308, &first) == 1 && strstr(first.what, "line break"));
    CHECK(newer_in("x = f'''{y +\n z}'''\n", 308, NULL) == 0);
    CHECK(newer_in("x = rb\"{d}\" + \"{\\\"}\"\n", 308, NULL) == 0); /* not f-strings */
    /* match (3.10), and `match` as a name */
    const char *match = "match x:\n    case 1:\n        pass\nmatch = 3\nmatch(x)\n";
    CHECK(newer_in(match, 309, &first) == 1 && first.needs == 310 && first.at == 0);
    CHECK(newer_in(match, 310, NULL) == 0);
    /* parenthesised context managers (3.9); the forms 3.8 knew are not */
    CHECK(newer_in("with (open(a) as f, open(b) as g):\n    pass\n", 308, &first) == 1 && first.needs == 309);
    CHECK(newer_in("with (open(a) as f):\n    pass\n", 308, NULL) == 1);
    CHECK(newer_in("with (open(a) as f, open(b) as g):\n    pass\n", 309, NULL) == 0);
    CHECK(newer_in("with (open(a)) as f, (b):\n    pass\nwith (a, b):\n    pass\nwith a as (b, c):\n    pass\n",
                   308, NULL) == 0);
}

/* A fix that parses for tree-sitter but not for the project's Python is set
 * aside with a message, and its finding stays; so is one that adds a syntax
 * error while OOM002 is not selected. */
static void test_fix_round_keeps_to_the_python_floor(void)
{
    ol_grammar g;
    CHECK(ol_grammar_init(&g));
    ol_settings settings = {0};
    settings.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    for (size_t i = 0; i < ol_rule_count; i++)
        settings.enabled[i] = ol_rules[i] != &ol_rule_oom002;
    ol_linter lt;
    ol_linter_init(&lt, &g, &settings);
    const char *text = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
                       "model.load_state_dict(torch.load('a.pt'))\n"
                       "s = f'{d}'\nz = 1\n";
    ol_source src;
    ol_source_init_text(&src, "/nonexistent-dir-oomlint/t.py", ol_xstrdup(text), strlen(text));
    ol_file_result r = {0};
    ol_lint_source(&lt, &src, &r);
    CHECK(r.diags.len == 1 && r.diags.items[0].rule == ol_rule_find("OOM302"));
    /* `d['k']` inside f'...': Python 3.12 only */
    uint32_t d = (uint32_t)(strstr(text, "{d}") - text) + 1;
    ol_vec_push(&r.diags, fix_diag("OOM703", d, d + 1, "d['k']", false));
    /* an unclosed parenthesis, with no OOM002 to notice it */
    uint32_t z = (uint32_t)(strstr(text, "z = 1") - text);
    ol_vec_push(&r.diags, fix_diag("OOM705", z, z + 1, "(z", false));
    ol_fix_outcome outcome;
    ol_fix_file(&lt, &r, OL_FIX_NONE, false, &outcome);
    CHECK(outcome.applied == 1);
    CHECK(strstr(r.src.text, "torch.load('a.pt', map_location=\"cpu\")") != NULL);
    CHECK(strstr(r.src.text, "s = f'{d}'\nz = 1\n") != NULL);
    bool said_quote = false, said_parse = false;
    for (size_t i = 0; i < r.warnings.len; i++) {
        said_quote |= strstr(r.warnings.items[i], "t.py:4: the fix for OOM703 was not applied") &&
                      strstr(r.warnings.items[i], "own quote") && strstr(r.warnings.items[i], "before 3.12") &&
                      strstr(r.warnings.items[i], "Python 3.8");
        said_parse |= strstr(r.warnings.items[i], "t.py:5: the fix for OOM705 was not applied: the fixed code would "
                                                  "not parse") != NULL;
    }
    CHECK(said_quote && said_parse);
    ol_fix_outcome_free(&outcome);
    ol_file_result_free(&r);
    ol_linter_free(&lt);
    free(settings.enabled);
    ol_grammar_free(&g);
}

/* A fix landing in an f-string's replacement field takes the quote the
 * f-string leaves free; with none free it is not offered (before 3.12). */
static void test_fix_fits_quotes_in_fstrings(void)
{
    const char *text = "a = f\"{g(x)}\"\nb = f'{g(x)}'\nc = f\"\"\"{g(x)}\"\"\"\nd = f\"{f'{g(x)}'}\"\ne = g(x)\n";
    ol_grammar g;
    CHECK(ol_grammar_init(&g));
    ol_parser p;
    ol_parser_init(&p, &g);
    ol_source src;
    ol_source_init_text(&src, "/nonexistent-dir-oomlint/t.py", ol_xstrdup(text), strlen(text));
    ol_tree t;
    ol_parse(&p, &src, &t);
    ol_diag_vec diags = {0};
    const char *at = text;
    for (int i = 0; i < 5; i++) {
        at = strstr(at, "g(x)") + 3;
        uint32_t pos = (uint32_t)(at - text);
        ol_vec_push(&diags, fix_diag("OOM703", pos, pos, ", reduction=\"sum\"", false));
    }
    ol_vec_push(&diags, fix_diag("OOM703", 8, 8, ", k='\\n'", false)); /* a backslash in a field */
    ol_fix_fit_quotes(&t, &diags);
    CHECK(diags.items[0].fix && strcmp(diags.items[0].fix->edits.items[0].content, ", reduction='sum'") == 0);
    CHECK(diags.items[1].fix && strcmp(diags.items[1].fix->edits.items[0].content, ", reduction=\"sum\"") == 0);
    CHECK(diags.items[2].fix && strcmp(diags.items[2].fix->edits.items[0].content, ", reduction=\"sum\"") == 0);
    CHECK(diags.items[3].fix == NULL && diags.items[3].message != NULL);
    CHECK(diags.items[4].fix && strcmp(diags.items[4].fix->edits.items[0].content, ", reduction=\"sum\"") == 0);
    CHECK(diags.items[5].fix == NULL);
    ol_diag_vec_free(&diags);
    ol_tree_free(&t);
    ol_source_free(&src);
    ol_parser_free(&p);
    ol_grammar_free(&g);
}

/* ---- notebooks --------------------------------------------------------------------- */

/* Loads notebook JSON text; false (with nothing to free) when it is refused. */
static bool load_notebook(ol_source *s, const char *nb)
{
    ol_buf err = {0};
    bool ok = ol_notebook_load(s, "n.ipynb", ol_xstrdup(nb), strlen(nb), &err);
    ol_buf_free(&err);
    return ok;
}

static void test_notebook_cells(void)
{
    const char *nb = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"source\": [\"# hi\"]\n  },\n"
                     "  {\n   \"cell_type\": \"code\",\n   \"source\": [\n    \"%matplotlib inline\\n\",\n"
                     "    \"x = 1\\n\",\n    \"!pip install torch\"\n   ]\n  }\n ],\n \"nbformat\": 4\n}\n";
    ol_source s;
    CHECK(load_notebook(&s, nb));
    CHECK(s.cells.len == 1);
    CHECK(s.cells.len == 1 && s.cells.items[0].index == 2);
    CHECK(strstr(s.text, "%matplotlib") == NULL);
    CHECK(strstr(s.text, "x = 1\n") != NULL);
    CHECK(s.cells.len == 1 && s.cells.items[0].file_lines[1] == 11);
    /* writing back an unchanged text reproduces the file */
    ol_buf out = {0}, why = {0};
    CHECK(ol_notebook_render(&s, s.text, s.len, &out, &why));
    CHECK(out.len == strlen(nb) && memcmp(out.data, nb, out.len) == 0);
    /* a changed line lands in its cell, magics restored */
    char *changed = ol_xstrdup(s.text);
    char *p = strstr(changed, "x = 1");
    p[4] = '2';
    CHECK(ol_notebook_render(&s, changed, strlen(changed), &out, &why));
    CHECK(strstr(out.data, "\"x = 2\\n\"") != NULL);
    CHECK(strstr(out.data, "%matplotlib inline") != NULL);
    free(changed);
    ol_buf_free(&out);
    ol_buf_free(&why);
    ol_source_free(&s);
}

static void test_notebook_magics_only_at_logical_line_start(void)
{
    const char *nb = "{\"cells\": [{\"cell_type\": \"code\", \"source\": ["
                     "\"s = (\\\"%d items\\\"\\n\", \"     % (3,))\\n\", \"%time x = 1\\n\","
                     "\"t = '''\\n\", \"%not a magic inside a string\\n\", \"'''\\n\", \"obj?\\n\"]}]}";
    ol_source s;
    CHECK(load_notebook(&s, nb));
    CHECK(strstr(s.text, "     % (3,))") != NULL);     /* continuation kept */
    CHECK(strstr(s.text, "%time") == NULL);            /* magic blanked */
    CHECK(strstr(s.text, "%not a magic") != NULL);      /* inside a string */
    CHECK(strstr(s.text, "obj?") == NULL);             /* help syntax blanked */
    ol_source_free(&s);
}

static void test_dangling_assignment_is_a_syntax_error(void)
{
    parsed x;
    parse_text(&x, "lr = \ncriterion = nn.MSELoss()\nok = (1 +\n      2)\nalso = \\\n    3\n"
                   "cache: Dict[\n    int,\n    str,\n] = {}\n");
    CHECK(x.tree.errors.len == 1);
    CHECK(x.tree.errors.len == 1 && x.tree.errors.items[0].start == 3); /* at the `=` */
    parsed_free(&x);
    /* the parser's own error on the next line is the same mistake: one report */
    parse_text(&x, "def real_loss(out):\n    loss = \n    return loss\n");
    CHECK(x.tree.errors.len == 1 && x.tree.errors.items[0].soft);
    parsed_free(&x);
}

static void test_bad_notebooks(void)
{
    const char *cases[] = {"{", "[]", "{\"cells\": 3}", "{\"cells\": [}", "not json"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ol_source s;
        ol_buf err = {0};
        CHECK(!ol_notebook_load(&s, "n.ipynb", ol_xstrdup(cases[i]), strlen(cases[i]), &err));
        CHECK(err.len > 0);
        ol_source_free(&s);
        ol_buf_free(&err);
    }
    /* nesting beyond the bound is refused, not recursed into */
    ol_buf deep = {0};
    for (int i = 0; i < 5000; i++)
        ol_buf_putc(&deep, '[');
    ol_source s;
    ol_buf err = {0};
    CHECK(!ol_notebook_load(&s, "n.ipynb", ol_buf_take(&deep), 5000, &err));
    ol_source_free(&s);
    ol_buf_free(&err);
}

/* ---- TOML and configuration ------------------------------------------------- */

static const ol_toml_value *toml_at(const ol_toml_value *t, const char *dotted)
{
    char *copy = ol_xstrdup(dotted);
    const ol_toml_value *v = t;
    char *save = NULL;
    for (char *part = strtok_r(copy, ".", &save); part && v; part = strtok_r(NULL, ".", &save)) {
        const ol_toml_entry *e = ol_toml_get(v, part);
        v = e ? e->value : NULL;
    }
    free(copy);
    return v;
}

static bool toml_ok(ol_toml_doc *doc, const char *text)
{
    uint32_t line;
    ol_buf err = {0};
    bool ok = ol_toml_parse(doc, text, strlen(text), &line, &err);
    if (!ok)
        fprintf(stderr, "  toml error %u: %s\n", line, err.data);
    ol_buf_free(&err);
    return ok;
}

/* Parses text expecting an error: returns its line (0: no error), message in msg. */
static uint32_t toml_error(const char *text, size_t len, ol_buf *msg)
{
    ol_toml_doc doc;
    uint32_t line = 0;
    ol_buf_clear(msg);
    if (ol_toml_parse(&doc, text, len, &line, msg)) {
        ol_toml_free(&doc);
        return 0;
    }
    return line;
}

static void test_toml_values(void)
{
    ol_toml_doc doc;
    const char *text = "# head\n"
                       "title = \"a\\tb \\u00e9 \\U0001F600 \\\"q\\\" \\\\\"\n"
                       "lit = 'C:\\path\\no escapes'\n"
                       "ml = \"\"\"\nfirst \\\n    second\"\"\"\n"
                       "mll = '''\nraw \\n'''\n"
                       "nums = [1, -2.5e3, true, 1979-05-27, [\"x\", 'y',],]\n"
                       "point = { x = 1, y.z = \"deep\" }\n"
                       "a.b.c = 3\n"
                       "[tool.oomlint]\n"
                       "select = [\n  \"OOM1\",  # comment\n\n  'OOM5',\n]\n"
                       "[[runs]]\nn = 1\n[[runs]]\nn = 2\n[runs.sub]\nk = \"v\"\n";
    CHECK(toml_ok(&doc, text));
    if (!doc.root)
        return;
    const ol_toml_value *v = toml_at(doc.root, "title");
    CHECK(v && v->type == OL_TOML_STRING && strcmp(v->text, "a\tb \xC3\xA9 \xF0\x9F\x98\x80 \"q\" \\") == 0);
    CHECK(v && v->line == 2);
    v = toml_at(doc.root, "lit");
    CHECK(v && strcmp(v->text, "C:\\path\\no escapes") == 0);
    v = toml_at(doc.root, "ml");
    CHECK(v && strcmp(v->text, "first second") == 0);
    v = toml_at(doc.root, "mll");
    CHECK(v && strcmp(v->text, "raw \\n") == 0);
    v = toml_at(doc.root, "nums");
    CHECK(v && v->type == OL_TOML_ARRAY && v->items.len == 5);
    if (v && v->items.len == 5) {
        CHECK(v->items.items[0]->type == OL_TOML_INTEGER);
        CHECK(v->items.items[1]->type == OL_TOML_FLOAT);
        CHECK(v->items.items[2]->type == OL_TOML_BOOLEAN && v->items.items[2]->boolean);
        CHECK(v->items.items[3]->type == OL_TOML_DATETIME);
        CHECK(v->items.items[4]->type == OL_TOML_ARRAY && v->items.items[4]->items.len == 2);
    }
    v = toml_at(doc.root, "point.y.z");
    CHECK(v && strcmp(v->text, "deep") == 0);
    v = toml_at(doc.root, "a.b.c");
    CHECK(v && v->type == OL_TOML_INTEGER && strcmp(v->text, "3") == 0);
    v = toml_at(doc.root, "tool.oomlint.select");
    CHECK(v && v->items.len == 2 && v->line == 13);
    if (v && v->items.len == 2) {
        CHECK(strcmp(v->items.items[0]->text, "OOM1") == 0 && v->items.items[0]->line == 14);
        CHECK(strcmp(v->items.items[1]->text, "OOM5") == 0 && v->items.items[1]->line == 16);
    }
    const ol_toml_entry *e = ol_toml_get(toml_at(doc.root, "tool.oomlint"), "select");
    CHECK(e && e->line == 13);
    v = toml_at(doc.root, "runs");
    CHECK(v && v->type == OL_TOML_ARRAY && v->items.len == 2);
    if (v && v->items.len == 2) {
        const ol_toml_value *k = toml_at(v->items.items[1], "sub.k");
        CHECK(k && strcmp(k->text, "v") == 0);
        CHECK(toml_at(v->items.items[0], "sub") == NULL);
    }
    ol_toml_free(&doc);
    CHECK(doc.root == NULL);

    /* TOML's sub-table rules: a header may add below a dotted-key table, and
     * may define a table an earlier header only implied */
    CHECK(toml_ok(&doc, "[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true\n"));
    ol_toml_free(&doc);
    CHECK(toml_ok(&doc, "[a.b.c]\nx = 1\n[a]\ny = 2\n"));
    ol_toml_free(&doc);
    CHECK(toml_ok(&doc, ""));
    CHECK(doc.root && doc.root->entries.len == 0);
    ol_toml_free(&doc);

    /* big tables are indexed: every key is still found, and a repeat caught */
    ol_buf big = {0};
    for (int i = 0; i < 1000; i++)
        ol_buf_printf(&big, "k%d = %d\n", i, i);
    CHECK(toml_ok(&doc, big.data));
    bool all_found = doc.root != NULL;
    for (int i = 0; i < 1000 && all_found; i++) {
        char key[16], want[16];
        snprintf(key, sizeof key, "k%d", i);
        snprintf(want, sizeof want, "%d", i);
        const ol_toml_value *k = toml_at(doc.root, key);
        all_found = k && strcmp(k->text, want) == 0;
    }
    CHECK(all_found);
    CHECK(toml_at(doc.root, "k1000") == NULL);
    ol_toml_free(&doc);
    ol_buf_puts(&big, "k500 = 0\n");
    ol_buf msg = {0};
    CHECK(toml_error(big.data, big.len, &msg) == 1001);
    CHECK(msg.data && strstr(msg.data, "first on line 501"));
    ol_buf_free(&msg);
    ol_buf_free(&big);
}

static void test_toml_errors(void)
{
    ol_buf msg = {0};
#define TOML_ERROR(lit) toml_error(lit, sizeof(lit) - 1, &msg)
    CHECK(TOML_ERROR("a = 1\n\na = 2\n") == 3);
    CHECK(msg.data && strstr(msg.data, "defined twice") && strstr(msg.data, "line 1"));
    CHECK(TOML_ERROR("[a]\nx = 1\n[a]\n") == 3);
    CHECK(msg.data && strstr(msg.data, "table [a] is defined twice"));
    CHECK(TOML_ERROR("[fruit]\napple.color = 1\n[fruit.apple]\n") == 3);
    CHECK(TOML_ERROR("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n") == 4);
    CHECK(TOML_ERROR("a = {x = 1}\n[a.y]\n") == 2);
    CHECK(msg.data && strstr(msg.data, "inline table"));
    CHECK(TOML_ERROR("a = [1]\n[[a]]\n") == 2);
    CHECK(TOML_ERROR("[[a]]\n[a]\n") == 2);
    CHECK(TOML_ERROR("x = 1\ns = \"\\uD800\"\n") == 2);
    CHECK(msg.data && strstr(msg.data, "Unicode scalar value"));
    CHECK(TOML_ERROR("x = 1\n# caf\xE9\n") == 2);
    CHECK(msg.data && strstr(msg.data, "UTF-8"));
    CHECK(TOML_ERROR("x = 1\ny = \0\n") == 2);
    CHECK(TOML_ERROR("x = 1\n\ny = = 2\n") == 3);
    CHECK(msg.data && strstr(msg.data, "invalid TOML"));
    CHECK(TOML_ERROR("a = [\n  1,\n  2\n  3,\n]\n") == 4);
    CHECK(msg.data && strstr(msg.data, "opened on line 1"));
    CHECK(TOML_ERROR("[tool.oomlint\nselect = []\n") == 1);
    CHECK(msg.data && strstr(msg.data, "after `[tool.oomlint`"));
#undef TOML_ERROR
    /* hostile nesting is an error, not a stack overflow */
    ol_buf deep = {0};
    ol_buf_puts(&deep, "a = ");
    for (int i = 0; i < 5000; i++)
        ol_buf_puts(&deep, "[ ");
    for (int i = 0; i < 5000; i++)
        ol_buf_putc(&deep, ']');
    CHECK(toml_error(deep.data, deep.len, &msg) == 1);
    ol_buf_clear(&deep);
    for (int i = 0; i < 5000; i++)
        ol_buf_puts(&deep, "k.");
    ol_buf_puts(&deep, "k = 1\n");
    CHECK(toml_error(deep.data, deep.len, &msg) == 1);
    CHECK(msg.data && strstr(msg.data, "parts"));
    ol_buf_free(&deep);
    ol_buf_free(&msg);
}

static void test_glob_match(void)
{
    /* directory globs, and everything below a matched directory */
    CHECK(ol_glob_match("tests/*", "tests/a.py", NULL, false));
    CHECK(ol_glob_match("tests/*", "tests/unit/a.py", NULL, false));
    CHECK(!ol_glob_match("tests/*", "src/tests/a.py", NULL, false));
    CHECK(ol_glob_match("tests", "tests/unit/a.py", NULL, false));
    CHECK(ol_glob_match("tests/", "tests/a.py", NULL, false));
    CHECK(ol_glob_match("./src/gen", "src/gen/x/y.py", NULL, false));
    /* `*` stays within a component; `**` spans any number, including none */
    CHECK(!ol_glob_match("src/*.py", "src/a/b.py", NULL, false));
    CHECK(ol_glob_match("**/gen/*.py", "gen/a.py", NULL, false));
    CHECK(ol_glob_match("**/gen/*.py", "a/b/gen/c.py", NULL, false));
    CHECK(ol_glob_match("src/**/test_*.py", "src/test_a.py", NULL, false));
    CHECK(!ol_glob_match("src/**/test_*.py", "lib/test_a.py", NULL, false));
    /* a bare name: the file name (per-file-ignores) or any component (exclude) */
    CHECK(ol_glob_match("test_*.py", "a/b/test_x.py", NULL, false));
    CHECK(!ol_glob_match("legacy", "src/legacy/a.py", NULL, false));
    CHECK(ol_glob_match("legacy", "src/legacy/a.py", NULL, true));
    CHECK(!ol_glob_match("src/legacy", "x/src/legacy/a.py", NULL, true));
    /* braces, classes, escapes */
    CHECK(ol_glob_match("{tools,bench}/*.py", "bench/b.py", NULL, false));
    CHECK(ol_glob_match("{tools,bench}/*.py", "tools/t.py", NULL, false));
    CHECK(!ol_glob_match("{tools,bench}/*.py", "docs/d.py", NULL, false));
    CHECK(ol_glob_match("a{b,{c,d}}e.py", "ade.py", NULL, false));
    CHECK(ol_glob_match("m[0-9].py", "m7.py", NULL, false));
    CHECK(!ol_glob_match("m[!0-9].py", "m7.py", NULL, false));
    CHECK(ol_glob_match("a\\*.py", "a*.py", NULL, false));
    CHECK(!ol_glob_match("a\\*.py", "ab.py", NULL, false));
    /* outside the configuration's directory: names and absolute patterns only */
    CHECK(ol_glob_match("*.py", NULL, "/elsewhere/x.py", false));
    CHECK(!ol_glob_match("elsewhere/*", NULL, "/elsewhere/x.py", false));
    CHECK(ol_glob_match("/elsewhere/*", NULL, "/elsewhere/x.py", false));
    CHECK(!ol_glob_match("", "a.py", NULL, false));
    /* alternatives are matched in place, as their expansions would be: one
     * holding '/', `**`, `.` or nothing; one that starts with '/' anchored;
     * a '{' that nothing closes is a character; past the bounds, nothing */
    CHECK(ol_glob_match("{gen,out/tmp}/*.py", "out/tmp/a.py", NULL, false));
    CHECK(!ol_glob_match("{gen,out/tmp}/*.py", "out/a.py", NULL, false));
    CHECK(ol_glob_match("src/{**,x}/a.py", "src/p/q/a.py", NULL, false));
    CHECK(ol_glob_match("src/{**,x}/a.py", "src/a.py", NULL, false));
    CHECK(!ol_glob_match("src/{*,x}/a.py", "src/a.py", NULL, false));
    CHECK(ol_glob_match("{.,lib}/a.py", "a.py", NULL, false) && ol_glob_match("{.,lib}/a.py", "lib/a.py", NULL, false));
    CHECK(ol_glob_match("gen{,_v2}", "x/gen_v2/a.py", NULL, true) && ol_glob_match("gen{,_v2}", "gen/a.py", NULL, true));
    CHECK(ol_glob_match("{/elsewhere,src}/*", NULL, "/elsewhere/x.py", false));
    CHECK(!ol_glob_match("{/elsewhere,src}/*", "elsewhere/x.py", NULL, false));
    CHECK(ol_glob_match("{/elsewhere,src}/*", "src/x.py", NULL, false));
    CHECK(ol_glob_match("gen/{**,}", "gen/a/b.py", NULL, false) && ol_glob_match("{gen/,x}", "gen/b.py", NULL, false));
    CHECK(ol_glob_match("{a,b", "{a,b/x.py", NULL, false) && !ol_glob_match("{a,b", "a/x.py", NULL, false));
    CHECK(ol_glob_match("x{a,b}{c", "xa{c", NULL, true) && !ol_glob_match("x{a,b}{c", "xac", NULL, true));
    CHECK(ol_glob_match("{a\\,b,c}.py", "a,b.py", NULL, false) && !ol_glob_match("{a\\,b,c}.py", "b.py", NULL, false));
    CHECK(ol_glob_check("{a,{b,{c,{d,{e,{f,{g,{h,i}}}}}}}}") == NULL);
    CHECK(ol_glob_check("{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}") != NULL);
    CHECK(!ol_glob_match("{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}", "a/x.py", NULL, true));
    /* 2^20 alternatives, one path */
    CHECK(ol_glob_match("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
                        "{a,b}{a,b}z", "x/babababababababababaz/y.py", NULL, true));
}

/* ol_wildmatch agrees with fnmatch(3) on every pair of a small alphabet's
 * patterns and texts, and a pattern of many stars or `**` costs no more
 * than its length times the text's. */
static void test_wildmatch(void)
{
    static const char *pats[] = {"", "*", "?", "a", "a*", "*a", "*a*", "a*b", "a?b", "*a*b*", "**", "a**b",
                                 "[ab]", "[!a]*", "[^a]b", "[a-c]*", "[]a]", "[!]a]*", "[", "a[", "[a-",
                                 "\\*", "\\?a", "[[:alpha:]]*", "[[:digit:]]", "*/b", "a/*", "*/*",
                                 "?/?", "a*/b*", "[/]b", "*b*a*", "*?*", "a*a*a*b"};
    static const char *texts[] = {"", "a", "b", "ab", "ba", "aab", "abb", "a/b", "aa/bb", "*", "?a", "]",
                                  "[", "a[", "a\\", "1", "abab", "a/", "/b", "ba/ab", "aaab", "-"};
    for (size_t i = 0; i < OL_ARRAY_LEN(pats); i++)
        for (size_t j = 0; j < OL_ARRAY_LEN(texts); j++)
            for (int pathname = 0; pathname < 2; pathname++) {
                bool want = fnmatch(pats[i], texts[j], pathname ? FNM_PATHNAME : 0) == 0;
                if (ol_wildmatch(pats[i], texts[j], pathname) != want) {
                    fprintf(stderr, "  ol_wildmatch(\"%s\", \"%s\", %d) != fnmatch\n", pats[i], texts[j], pathname);
                    CHECK(false);
                }
            }
    /* a trailing backslash escapes nothing: the pattern matches nothing */
    CHECK(!ol_wildmatch("a\\", "a\\", false) && !ol_wildmatch("a\\", "a", false));
    /* fnmatch takes time exponential in the stars here; this must be instant */
    ol_buf pat = {0}, text = {0};
    for (int i = 0; i < 40; i++)
        ol_buf_puts(&pat, "*a");
    ol_buf_puts(&pat, "*b");
    for (int i = 0; i < 4000; i++)
        ol_buf_putc(&text, 'a');
    uint64_t t0 = ol_now_ns();
    CHECK(!ol_wildmatch(pat.data, text.data, false));
    CHECK(ol_now_ns() - t0 < 2000000000u);
    /* and `**` pairs against a deep path, through ol_glob_match */
    ol_buf_clear(&pat);
    ol_buf_clear(&text);
    for (int i = 0; i < 12; i++)
        ol_buf_puts(&pat, "**/*/");
    ol_buf_puts(&pat, "nomatch");
    for (int i = 0; i < 60; i++)
        ol_buf_puts(&text, "d/");
    ol_buf_puts(&text, "x.py");
    t0 = ol_now_ns();
    CHECK(!ol_glob_match(pat.data, text.data, NULL, true));
    CHECK(ol_now_ns() - t0 < 2000000000u);
    ol_buf_free(&pat);
    ol_buf_free(&text);
}

static bool layered_on(const ol_selection *config, const ol_selection *cli, const char *code)
{
    bool *en = ol_xcalloc(ol_rule_count, sizeof(bool));
    const ol_selection *layers[] = {config, cli};
    ol_selection_resolve_layers(layers, 2, en);
    bool on = en[ol_rule_index(ol_rule_find(code))];
    free(en);
    return on;
}

static void reset_selection(ol_selection *s)
{
    ol_selection_free(s);
    memset(s, 0, sizeof(*s));
}

static void test_selection_layers(void)
{
    ol_selection config = {0}, cli = {0};
    /* nothing anywhere: the defaults */
    CHECK(layered_on(&config, &cli, "OOM101") && layered_on(&config, &cli, "OOM502"));
    /* the config's select, then a CLI select replaces it */
    config.has_select = true;
    ol_selectors_add(&config.select, "OOM502");
    ol_selectors_add(&config.ignore, "OOM101");
    CHECK(!layered_on(&config, &cli, "OOM101") && layered_on(&config, &cli, "OOM502"));
    cli.has_select = true;
    ol_selectors_add(&cli.select, "OOM1");
    CHECK(layered_on(&config, &cli, "OOM101") && !layered_on(&config, &cli, "OOM502"));
    /* a CLI ignore wins over the config even when broader */
    reset_selection(&config);
    reset_selection(&cli);
    config.has_select = true;
    ol_selectors_add(&config.select, "OOM101,OOM502");
    ol_selectors_add(&cli.ignore, "OOM1");
    CHECK(!layered_on(&config, &cli, "OOM101") && layered_on(&config, &cli, "OOM502"));
    /* a CLI extend-select re-enables what the config ignored ... */
    reset_selection(&config);
    reset_selection(&cli);
    ol_selectors_add(&config.ignore, "OOM502");
    ol_selectors_add(&cli.extend_select, "OOM");
    CHECK(layered_on(&config, &cli, "OOM502"));
    /* ... but inside one layer the more specific selector still wins */
    ol_selectors_add(&cli.ignore, "OOM502");
    CHECK(!layered_on(&config, &cli, "OOM502") && layered_on(&config, &cli, "OOM101"));
    /* OOM002 answers only to selectors at least as narrow as OOM0; OOM001 to none */
    reset_selection(&config);
    reset_selection(&cli);
    ol_selectors_add(&config.ignore, "ALL");
    CHECK(layered_on(&config, &cli, "OOM002") && !layered_on(&config, &cli, "OOM101"));
    ol_selectors_add(&config.ignore, "OOM0");
    CHECK(!layered_on(&config, &cli, "OOM002") && layered_on(&config, &cli, "OOM001"));
    ol_selectors_add(&cli.extend_select, "OOM002");
    CHECK(layered_on(&config, &cli, "OOM002"));
    reset_selection(&config);
    reset_selection(&cli);

    /* per-file ignores switch rules off whatever selected them */
    bool *en = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection all = {0};
    all.has_select = true;
    ol_selectors_add(&all.select, "ALL");
    ol_selection_resolve(&all, en);
    CHECK(en[ol_rule_index(ol_rule_find("OOM101"))]);
    ol_strvec ignores = {0};
    ol_selectors_add(&ignores, "ALL");
    ol_selection_apply_ignores(&ignores, en);
    CHECK(!en[ol_rule_index(ol_rule_find("OOM101"))]);
    CHECK(en[ol_rule_index(ol_rule_find("OOM001"))] && en[ol_rule_index(ol_rule_find("OOM002"))]);
    ol_strvec_free(&ignores);
    ol_selectors_add(&ignores, "OOM002");
    ol_selection_apply_ignores(&ignores, en);
    CHECK(!en[ol_rule_index(ol_rule_find("OOM002"))]);
    ol_strvec_free(&ignores);
    ol_selection_free(&all);
    free(en);
    CHECK(ol_selector_valid("OOM") && ol_selector_valid("ALL") && !ol_selector_valid("OOM9"));
}

static void test_config_parse(void)
{
    ol_config c;
    bool found;
    ol_buf err = {0};
    const char *good = "[project]\nname = 'x'\n[tool.oomlint]\nselect = ['oom1']\nexclude = ['gen']\n"
                       "[tool.oomlint.per-file-ignores]\n'tests/*' = ['OOM101', 'OOM5']\n";
    CHECK(ol_config_parse(&c, "p.toml", good, strlen(good), &found, &err));
    CHECK(found && c.selection.has_select && c.selection.select.len == 1);
    CHECK(c.selection.select.len == 1 && strcmp(c.selection.select.items[0], "OOM1") == 0);
    CHECK(c.exclude.len == 1 && strcmp(c.exclude.items[0], "gen") == 0);
    CHECK(c.per_file_ignores.len == 1 && c.per_file_ignores.items[0].line == 7 &&
          c.per_file_ignores.items[0].selectors.len == 2);
    ol_config_free(&c);

    const char *other = "[tool.ruff]\nselect = ['E']\n";
    CHECK(ol_config_parse(&c, "p.toml", other, strlen(other), &found, &err) && !found);
    ol_config_free(&c);
    CHECK(ol_config_parse(&c, "p.toml", "", 0, &found, &err) && !found);
    ol_config_free(&c);
    const char *empty = "[tool.oomlint]\n";
    CHECK(ol_config_parse(&c, "p.toml", empty, strlen(empty), &found, &err) && found && !c.selection.has_select);
    ol_config_free(&c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"[tool.oomlint]\n\nselct = []\n", "p.toml:3: unknown key 'selct' in [tool.oomlint] (did you mean 'select'?)"},
        {"[tool.oomlint]\nignore = ['OOM1', 'X1']\n", "p.toml:2: unknown rule code or prefix 'X1' in 'ignore'"},
        {"[tool.oomlint]\nselect = 'OOM1'\n", "p.toml:2: 'select' must be an array of rule codes"},
        {"[tool.oomlint]\nexclude = [1]\n", "p.toml:2: 'exclude' must be an array of glob patterns"},
        {"[tool.oomlint]\nper-file-ignores = 1\n", "p.toml:2: 'per-file-ignores' must be a table"},
        {"tool.oomlint = []\n", "p.toml:1: 'tool.oomlint' must be a table"},
        {"[tool.oomlint\n", "p.toml:1: invalid TOML"},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(bad); i++) {
        bool ok = ol_config_parse(&c, "p.toml", bad[i].text, strlen(bad[i].text), &found, &err);
        CHECK(!ok);
        CHECK(err.data && strncmp(err.data, bad[i].want, strlen(bad[i].want)) == 0);
        if (ok)
            ol_config_free(&c);
    }
    ol_buf_free(&err);
}

/* The probe's statistics: the slope after warm-up ignores missing (NaN)
 * figures, the median is robust to one outlier, checksums compare
 * with a relative tolerance. */
static void test_probe_stats(void)
{
    ol_dvec v = {0};
    for (int i = 0; i < 10; i++)
        ol_vec_push(&v, 100.0 + 3.0 * i);
    v.items[0] = 5000; /* a warm-up outlier the fit leaves out */
    v.items[5] = NAN;
    CHECK(fabs(ol_stat_slope(&v, ol_stat_warmup(v.len)) - 3.0) < 1e-9);
    CHECK(ol_stat_warmup(10) == 2 && ol_stat_warmup(3) == 1);
    CHECK(ol_stat_max(&v, 1) == 127.0);
    CHECK(ol_stat_last(&v) == 127.0);
    ol_dvec t = {0};
    double times[] = {1.0, 1.1, 0.9, 1.0, 50.0};
    for (size_t i = 0; i < 5; i++)
        ol_vec_push(&t, times[i]);
    CHECK(ol_stat_median(&t, 0) == 1.0);
    ol_dvec one = {0};
    ol_vec_push(&one, 4.0);
    CHECK(isnan(ol_stat_slope(&one, 0)));
    CHECK(ol_stat_close(27.67950439453125, 27.679505348205566, 1e-6));
    CHECK(!ol_stat_close(1.0, 2.0, 1e-6));
    CHECK(!ol_stat_close(NAN, NAN, 1e-6));
    CHECK(ol_stat_round(2.5) == 3 && ol_stat_round(-2.5) == -3 && ol_stat_round(0.4) == 0);
    CHECK(ol_stat_round(-0.4) == 0 && ol_stat_round(330756.49) == 330756 && ol_stat_round(1e300) == 1e300);
    CHECK(isnan(ol_stat_round(NAN)) && isinf(ol_stat_round(INFINITY)));
    ol_buf b = {0};
    ol_fmt_bytes(&b, 330756);
    CHECK(strcmp(b.data, "323.0 KiB") == 0);
    ol_buf_clear(&b);
    ol_fmt_seconds(&b, 0.0123);
    CHECK(strcmp(b.data, "12.3 ms") == 0);
    ol_buf_free(&b);
    ol_vec_free(&v);
    ol_vec_free(&t);
    ol_vec_free(&one);
}

/* The plot is well-formed SVG whatever the figures: text is escaped, a
 * missing figure breaks the line, an empty panel says so. */
static void test_probe_svg(void)
{
    ol_dvec bad = {0}, fixed = {0};
    for (int i = 0; i < 6; i++) {
        ol_vec_push(&bad, i == 3 ? NAN : 1000.0 * i);
        ol_vec_push(&fixed, 10.0);
    }
    ol_svg_panels panels = {0};
    ol_svg_panel p = {0};
    p.title = ol_xstrdup("OOM101 <train> & \"eval\"");
    p.unit = ol_xstrdup("bytes");
    p.lines[0] = (ol_svg_line){"bad", "#d62728", &bad};
    p.lines[1] = (ol_svg_line){"fixed", "#1f77b4", &fixed};
    p.line_count = 2;
    ol_vec_push(&panels, p);
    ol_svg_panel empty = {0};
    empty.title = ol_xstrdup("OOM301 dataset: needs a GPU");
    empty.unit = ol_xstrdup("bytes");
    ol_vec_push(&panels, empty);
    ol_buf out = {0};
    ol_svg_render(&out, "probe", &panels);
    CHECK(strstr(out.data, "OOM101 &lt;train&gt; &amp; &quot;eval&quot;") != NULL);
    CHECK(strstr(out.data, "no figures") != NULL);
    size_t polylines = 0;
    for (const char *q = out.data; (q = strstr(q, "<polyline")) != NULL; q++)
        polylines++;
    CHECK(polylines == 3); /* bad is broken in two by the missing figure */
    CHECK(strstr(out.data, "</svg>\n") != NULL);
    ol_buf_free(&out);
    ol_svg_panels_free(&panels);
    ol_vec_free(&bad);
    ol_vec_free(&fixed);
}

/* --memory sizes: binary with a bare or "iB" suffix, decimal with "B". */
static void test_probe_sizes(void)
{
    double v = 0;
    CHECK(ol_parse_size("24GiB", &v) && v == 24.0 * 1073741824.0);
    CHECK(ol_parse_size("24G", &v) && v == 24.0 * 1073741824.0);
    CHECK(ol_parse_size("16GB", &v) && v == 16e9);
    CHECK(ol_parse_size("8000mib", &v) && v == 8000.0 * 1048576.0);
    CHECK(ol_parse_size("1e9", &v) && v == 1e9);
    CHECK(ol_parse_size("0.5 TiB", &v) && v == 0.5 * 1099511627776.0);
    CHECK(!ol_parse_size("", &v) && !ol_parse_size("lots", &v) && !ol_parse_size("0", &v));
    CHECK(!ol_parse_size("-1G", &v) && !ol_parse_size("12 parsecs", &v) && !ol_parse_size("inf", &v));
}

/* A stacked panel fills one polygon per part, and its scale is the sum. */
static void test_probe_svg_stacked(void)
{
    ol_dvec a = {0}, b = {0};
    for (int i = 0; i < 4; i++) {
        ol_vec_push(&a, 1024.0);
        ol_vec_push(&b, i == 2 ? NAN : 1024.0 * i);
    }
    ol_svg_panels panels = {0};
    ol_svg_panel p = {0};
    p.title = ol_xstrdup("budget");
    p.unit = ol_xstrdup("bytes");
    p.stacked = true;
    p.lines[0] = (ol_svg_line){"params", "#1f77b4", &a};
    p.lines[1] = (ol_svg_line){"other", "#9467bd", &b};
    p.line_count = 2;
    ol_vec_push(&panels, p);
    ol_buf out = {0};
    ol_svg_render(&out, "probe", &panels);
    size_t polygons = 0;
    for (const char *q = out.data; (q = strstr(q, "<polygon")) != NULL; q++)
        polygons++;
    CHECK(polygons == 2);
    CHECK(strstr(out.data, "<polyline") == NULL);
    CHECK(strstr(out.data, ">4.0 KiB</text>") != NULL); /* 1 KiB + 3 KiB at the last step */
    ol_buf_free(&out);
    ol_svg_panels_free(&panels);
    ol_vec_free(&a);
    ol_vec_free(&b);
}

/* NVML is optional: without the driver's library (as on CI) opening it
 * fails with a reason, and every call on the absent handle is harmless. */
static void test_probe_nvml_absent_or_usable(void)
{
    ol_buf why = {0};
    ol_nvml *n = ol_nvml_open(&why);
    if (!n) {
        CHECK(why.len > 0);
        double peak = 0;
        bool process = false;
        CHECK(!ol_nvml_take_peak(NULL, &peak, &process));
        CHECK(!ol_nvml_start(NULL, 1));
        ol_nvml_stop(NULL);
        ol_nvml_set_device(NULL, "GPU-x", NULL);
        ol_nvml_close(NULL);
    } else {
        /* a machine with a GPU: sampling our own process must start and stop */
        CHECK(ol_nvml_start(n, getpid()));
        double peak = 0;
        bool process = false;
        (void)ol_nvml_take_peak(n, &peak, &process);
        ol_nvml_stop(n);
        ol_nvml_close(n);
    }
    ol_buf_free(&why);
}

/* ---- flattening, against a TSTreeCursor walk -------------------------------- */

/* The reference: the tree as the public cursor API sees it, flattened by
 * the rules syntax.h states (punctuation dropped, comments set aside,
 * missing nodes reported, nothing kept below a dropped node). */
typedef struct ref_tree {
    OL_VEC(ol_node) nodes;
    OL_VEC(ol_span) comments;
    OL_VEC(ol_span) error_spans; /* each reported error lies in its node */
    uint32_t max_depth;
} ref_tree;

typedef struct ref_frame {
    ol_nid node, last_child;
    bool in_error;
} ref_frame;

static ol_nid ref_add(ref_tree *r, const ol_grammar *g, uint32_t len, TSNode n, TSFieldId field, ol_nid parent)
{
    TSSymbol sym = ts_node_symbol(n);
    ol_node node = {sym < g->symbol_count ? g->symbol_kind[sym] : OL_N_OTHER,
                    field < g->field_count ? g->field_kind[field] : OL_F_NONE,
                    0, parent, OL_NONE, OL_NONE, ts_node_start_byte(n), ts_node_end_byte(n)};
    if (ts_node_is_named(n))
        node.flags |= OL_NF_NAMED;
    if (ts_node_is_error(n)) {
        node.flags |= OL_NF_ERROR;
        node.kind = OL_N_ERROR;
    }
    if (ts_node_has_error(n))
        node.flags |= OL_NF_HAS_ERROR;
    if (node.end > len)
        node.end = len;
    if (node.start > node.end)
        node.start = node.end;
    ol_vec_push(&r->nodes, node);
    return (ol_nid)(r->nodes.len - 1);
}

static void ref_flatten(ref_tree *r, const ol_grammar *g, const char *text, uint32_t len)
{
    memset(r, 0, sizeof(*r));
    TSParser *ts = ts_parser_new();
    ts_parser_set_language(ts, g->language);
    TSTree *tree = ts_parser_parse_string(ts, NULL, text, len);
    TSNode root = ts_tree_root_node(tree);
    TSTreeCursor cur = ts_tree_cursor_new(root);
    OL_VEC(ref_frame) stack = {0};
    ol_nid root_id = ref_add(r, g, len, root, 0, OL_NONE);
    r->nodes.items[root_id].kind = OL_N_module;
    ref_frame top = {root_id, OL_NONE, ts_node_is_error(root)};
    if (top.in_error) {
        ol_span e = {ts_node_start_byte(root), ts_node_end_byte(root)};
        ol_vec_push(&r->error_spans, e);
    }
    ol_vec_push(&stack, top);
    bool more = ts_tree_cursor_goto_first_child(&cur);
    while (more) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        ref_frame *parent = &stack.items[stack.len - 1];
        TSSymbol sym = ts_node_symbol(n);
        ol_kind k = sym < g->symbol_count ? (ol_kind)g->symbol_kind[sym] : OL_N_OTHER;
        bool keep = false;
        if (ts_node_is_missing(n)) {
            if (!parent->in_error) {
                ol_span e = {ts_node_start_byte(n), ts_node_start_byte(n)};
                ol_vec_push(&r->error_spans, e);
            }
        } else if (k == OL_N_comment) {
            ol_span c = {ts_node_start_byte(n), ts_node_end_byte(n)};
            ol_vec_push(&r->comments, c);
        } else if (k != OL_N_line_continuation) {
            keep = ts_node_is_named(n) || k != OL_N_OTHER || ts_node_is_error(n);
        }
        if (keep) {
            ol_nid id = ref_add(r, g, len, n, ts_tree_cursor_current_field_id(&cur), parent->node);
            parent = &stack.items[stack.len - 1];
            if (parent->last_child == OL_NONE)
                r->nodes.items[parent->node].first_child = id;
            else
                r->nodes.items[parent->last_child].next_sibling = id;
            parent->last_child = id;
            bool in_error = parent->in_error;
            if (ts_node_is_error(n) && !in_error) {
                ol_span e = {ts_node_start_byte(n), ts_node_end_byte(n)};
                ol_vec_push(&r->error_spans, e);
                in_error = true;
            }
            if (ts_tree_cursor_goto_first_child(&cur)) {
                ref_frame f = {id, OL_NONE, in_error};
                ol_vec_push(&stack, f);
                if (stack.len > r->max_depth)
                    r->max_depth = (uint32_t)stack.len;
                continue;
            }
        }
        while (!ts_tree_cursor_goto_next_sibling(&cur)) {
            if (stack.len <= 1 || !ts_tree_cursor_goto_parent(&cur)) {
                more = false;
                break;
            }
            stack.len--;
        }
    }
    ol_vec_free(&stack);
    ts_tree_cursor_delete(&cur);
    ts_tree_delete(tree);
    ts_parser_delete(ts);
}

static void ref_free(ref_tree *r)
{
    ol_vec_free(&r->nodes);
    ol_vec_free(&r->comments);
    ol_vec_free(&r->error_spans);
}

/* Packs *t and unpacks it in its place (a kept tree: lint.c); true when
 * what comes back is the tree that went in, node for node. */
static bool pack_round_trips(ol_tree *t, const ol_source *src)
{
    ol_tree before = *t;
    size_t nodes = t->nodes.len, comments = t->comments.len, errors = t->errors.len;
    ol_node *n0 = ol_xmalloc((nodes ? nodes : 1) * sizeof(ol_node));
    if (nodes)
        memcpy(n0, t->nodes.items, nodes * sizeof(ol_node));
    ol_span *c0 = ol_xmalloc((comments ? comments : 1) * sizeof(ol_span));
    if (comments)
        memcpy(c0, t->comments.items, comments * sizeof(ol_span));
    ol_syntax_error *e0 = ol_xmalloc((errors ? errors : 1) * sizeof(ol_syntax_error));
    for (size_t i = 0; i < errors; i++) {
        e0[i] = t->errors.items[i];
        e0[i].message = ol_xstrdup(t->errors.items[i].message);
    }
    ol_packed_tree packed;
    ol_tree_pack(t, &packed);
    bool same = t->nodes.len == 0 && t->nodes.items == NULL && packed.count == nodes &&
                packed.len < nodes * sizeof(ol_node);
    ol_tree_unpack(&packed, src, t);
    same = same && packed.bytes == NULL && t->src == src && t->nodes.len == nodes && t->comments.len == comments &&
           t->errors.len == errors && t->max_depth == before.max_depth && !t->timed_out && t->absent_reads &&
           *t->absent_reads == 0;
    for (size_t i = 0; same && i < nodes; i++)
        same = memcmp(&t->nodes.items[i], &n0[i], sizeof(ol_node)) == 0;
    for (size_t i = 0; same && i < comments; i++)
        same = t->comments.items[i].start == c0[i].start && t->comments.items[i].end == c0[i].end;
    for (size_t i = 0; same && i < errors; i++)
        same = t->errors.items[i].start == e0[i].start && t->errors.items[i].end == e0[i].end &&
               t->errors.items[i].soft == e0[i].soft && strcmp(t->errors.items[i].message, e0[i].message) == 0;
    for (size_t i = 0; i < errors; i++)
        free(e0[i].message);
    free(n0);
    free(c0);
    free(e0);
    if (!same)
        fprintf(stderr, "a packed tree unpacks to another tree\n");
    return same;
}

/* Returns true when ol_parse flattens text as the reference does (and its
 * tree packs and unpacks to itself). */
static bool flatten_matches(ol_parser *p, const char *text, size_t n)
{
    ol_source src;
    ol_source_init_text(&src, "t.py", ol_xstrndup(text, n), n);
    ol_tree t;
    ol_parse(p, &src, &t);
    bool packs = t.timed_out || pack_round_trips(&t, &src);
    ref_tree r;
    ref_flatten(&r, p->grammar, src.text, src.len);
    /* ol_parse parses a broken text again with its grammar gaps rewritten
     * and keeps that tree when it has no more errors: so does the reference */
    ol_span_vec blanked = {0};
    char *rewritten = r.error_spans.len ? ol_syntax_gap_rewrite(src.text, src.len, &blanked) : NULL;
    if (rewritten) {
        ref_tree alt;
        ref_flatten(&alt, p->grammar, rewritten, src.len);
        size_t alt_errors = alt.error_spans.len < 20 ? alt.error_spans.len : 20;
        size_t errors = r.error_spans.len < 20 ? r.error_spans.len : 20;
        if (alt_errors <= errors) {
            ref_free(&r);
            r = alt;
            for (size_t i = 0; i < blanked.len; i++)
                ol_vec_push(&r.comments, blanked.items[i]);
            for (size_t i = 1; i < r.comments.len; i++) /* in order of start, as merged */
                for (size_t j = i; j > 0 && r.comments.items[j - 1].start > r.comments.items[j].start; j--) {
                    ol_span tmp = r.comments.items[j];
                    r.comments.items[j] = r.comments.items[j - 1];
                    r.comments.items[j - 1] = tmp;
                }
        } else {
            ref_free(&alt);
        }
        free(rewritten);
    }
    ol_vec_free(&blanked);
    bool same = packs && !t.timed_out && t.nodes.len == r.nodes.len && t.comments.len == r.comments.len &&
                t.max_depth == r.max_depth;
    for (size_t i = 0; same && i < r.nodes.len; i++)
        same = memcmp(&t.nodes.items[i], &r.nodes.items[i], sizeof(ol_node)) == 0;
    for (size_t i = 0; same && i < r.comments.len; i++)
        same = t.comments.items[i].start == r.comments.items[i].start &&
               t.comments.items[i].end == r.comments.items[i].end;
    /* the errors too, unless the dangling-assignment check (after flattening) edited them */
    bool edited = false;
    for (size_t i = 0; i < t.errors.len; i++)
        edited |= t.errors.items[i].soft;
    size_t expected = r.error_spans.len < 20 ? r.error_spans.len : 20;
    /* and leaving out the reserved-name errors the check after flattening appends */
    size_t parse_errors = t.errors.len;
    while (parse_errors > 0 && strstr(t.errors.items[parse_errors - 1].message, "is a keyword since Python 3.7"))
        parse_errors--;
    if (same && !edited) {
        same = parse_errors == expected;
        /* an ERROR node is reported where its trouble starts, inside it */
        for (size_t i = 0; same && i < expected; i++)
            same = t.errors.items[i].start >= r.error_spans.items[i].start &&
                   t.errors.items[i].start <= r.error_spans.items[i].end;
    }
    if (!same)
        fprintf(stderr, "flattening differs from the cursor walk on:\n%.*s\n", (int)(n < 2000 ? n : 2000), text);
    ref_free(&r);
    ol_tree_free(&t);
    ol_source_free(&src);
    return same;
}

/* A deterministic mangling of text: tokens inserted and runs deleted, so
 * the parser recovers from errors and makes ERROR and MISSING nodes. */
static char *mangle(const char *text, size_t n, uint32_t seed, size_t *out_len)
{
    static const char *const bits[] = {"(", ")", "[", "]", "{", ":", "=", "\n", "    ", "\"", "'", "\"\"\"",
                                       "def ", "class ", "lambda", ",", "\\\n", "#", "f\"{", "@", "print ",
                                       "match x:\n  case ", "async ", "->", "**", "\t", "if", "else", "`"};
    ol_buf b = {0};
    ol_buf_add(&b, text, n);
    uint32_t x = seed * 2654435761u + 1;
    for (int k = 0; k < 12 && b.len > 0; k++) {
        x = x * 1103515245u + 12345u;
        size_t at = (x >> 8) % b.len;
        if (x & 1) {
            size_t cut = 1 + (x >> 4) % 5;
            if (at + cut > b.len)
                cut = b.len - at;
            memmove(b.data + at, b.data + at + cut, b.len - at - cut);
            b.len -= cut;
        } else {
            const char *bit = bits[(x >> 16) % OL_ARRAY_LEN(bits)];
            size_t bl = strlen(bit);
            ol_buf_reserve(&b, bl + 1);
            memmove(b.data + at + bl, b.data + at, b.len - at);
            memcpy(b.data + at, bit, bl);
            b.len += bl;
        }
    }
    *out_len = b.len;
    return ol_buf_take(&b);
}

/* Errors that come from one another: each kept only while it survives the
 * blanking of the lines of those before it (ol_drop_cascades). */
static size_t errors_kept(ol_parser *p, const char *text, uint32_t *first_line)
{
    ol_source src;
    ol_source_init_text(&src, "t.py", ol_xstrdup(text), strlen(text));
    ol_tree t;
    ol_parse(p, &src, &t);
    ol_drop_cascades(p, &src, &t);
    size_t n = t.errors.len;
    *first_line = n ? ol_source_pos(&src, t.errors.items[0].start).line : 0;
    ol_tree_free(&t);
    ol_source_free(&src);
    return n;
}

static void test_syntax_error_cascades(void)
{
    ol_grammar g;
    ol_grammar_init(&g);
    ol_parser p;
    ol_parser_init(&p, &g);
    uint32_t line;
    /* independent errors, more than the reparses allowed: every one is kept
     * (past the bound, those not examined stay as they are) */
    ol_buf many = {0};
    for (int i = 0; i < 15; i++)
        ol_buf_printf(&many, "def f%d(x):\n    return (x 1)\n\n", i);
    CHECK(errors_kept(&p, many.data, &line) == 15 && line == 2);
    ol_buf_free(&many);
    /* one error, nothing to drop */
    CHECK(errors_kept(&p, "x = 1\ny = (2 3)\nz = 4\n", &line) == 1 && line == 2);
    /* a valid text: no reparse, no error */
    CHECK(errors_kept(&p, "x = 1\n", &line) == 0);
    /* an unclosed bracket: whatever the parser made of the lines after it,
     * the first error is on or after the line that opened it */
    CHECK(errors_kept(&p, "import os\n\ndef f(a):\n    return g(a,\n\ndef h(b):\n    return b\n", &line) >= 1 &&
          line >= 3);
    ol_parser_free(&p);
    ol_grammar_free(&g);
}

static void test_flatten_matches_cursor_walk(void)
{
    static const char *const samples[] = {
        "total += loss  # comment\n",
        "@decorator(x=1)\nasync def f(a, /, b: int = 2, *args, c, **kw) -> None:\n    await g(*args, **kw)\n",
        "class A(B, metaclass=M):\n    x: int = 1\n    def m(self): return self.x if self else None\n",
        "with a as (b, c), d() as e:\n    pass\nfor (i, j) in k: del i[j:2:-1]\n",
        ("match cmd:\n    case [\"go\", d] if d: pass\n    case {\"k\": v, **rest}: pass\n"
         "    case Point(x=0) | None: pass\n"),
        "x = [y for y in z if y async for w in v]\ns = {a: b for a, b in c}\nt = (*a, *b)\n",
        "s = f\"{a!r:>{w}} {b['k']}\" rb'\\x00' '''doc'''\nprint >>f, 'py2'\nexec 'code'\n",
        "try:\n    pass\nexcept* (A, B) as e:\n    raise C from e\nelse:\n    pass\nfinally:\n    pass\n",
        "if a:\n  b\nelif c:\n  d\nelse:\n  e\nwhile x := f(): global g; nonlocal h\n",
        "x = 1 + \\\n    2\ny = not a in b is not c <> d\nlambda *a, k=1: (yield from a)\n",
        "def f(\n    a,\n", "x = (1,\n", "for x in y\n    pass\n", ")))(((", "x = 1\r\ny = 2\r\n",
        "type X = list[int]\nprint(x, sep='')\nassert x, 'msg'\nimport a.b as c\nfrom . import (d, e as f)\n",
    };
    ol_grammar g;
    ol_grammar_init(&g);
    ol_parser p;
    ol_parser_init(&p, &g);
    for (size_t i = 0; i < OL_ARRAY_LEN(samples); i++) {
        size_t n = strlen(samples[i]);
        CHECK(flatten_matches(&p, samples[i], n));
        for (uint32_t seed = 0; seed < 40; seed++) {
            size_t ml;
            char *m = mangle(samples[i], n, seed + (uint32_t)i * 100u, &ml);
            CHECK(flatten_matches(&p, m, ml));
            free(m);
        }
    }
    /* the repository's own Python, as it is and mangled (the tests run from its root) */
    FILE *list = popen("find fixtures examples tests bench -name '*.py' 2>/dev/null | sort", "r");
    CHECK(list != NULL);
    char path[4096];
    size_t files = 0;
    while (list && fgets(path, sizeof path, list)) {
        path[strcspn(path, "\n")] = '\0';
        char *text = NULL;
        size_t len = 0;
        if (ol_read_file(path, 1u << 20, &text, &len) != 0)
            continue;
        files++;
        CHECK(flatten_matches(&p, text, len));
        for (uint32_t seed = 0; seed < 3; seed++) {
            size_t ml;
            char *m = mangle(text, len, seed + (uint32_t)files * 7u, &ml);
            CHECK(flatten_matches(&p, m, ml));
            free(m);
        }
        free(text);
    }
    if (list)
        pclose(list);
    CHECK(files > 50);
    ol_parser_free(&p);
    ol_grammar_free(&g);
}

/* ---- trees left unbalanced -------------------------------------------------- */

/* The longest repetition chain of text's tree (the runtime's repeat depth of
 * the root's children), parsed with the flag as given. */
static uint32_t chain_depth(const ol_grammar *g, const char *text, bool unbalanced)
{
    TSParser *ts = ts_parser_new();
    ts_parser_set_language(ts, g->language);
    ol_ts_unbalanced = unbalanced;
    TSTree *tree = ts_parser_parse_string(ts, NULL, text, (uint32_t)strlen(text));
    ol_ts_unbalanced = false;
    uint32_t depth = 0;
    Subtree root = tree->root;
    for (uint32_t i = 0; i < ts_subtree_child_count(root); i++) {
        uint32_t d = ts_subtree_repeat_depth(ts_subtree_children(root)[i]);
        if (d > depth)
            depth = d;
    }
    ts_tree_delete(tree);
    ts_parser_delete(ts);
    return depth;
}

/* A clean tree parsed to be flattened once is left as the parser built it
 * (a chain as long as the repetition), and flattens to what the balanced
 * tree does; a tree with errors is balanced all the same. */
static void test_unbalanced_parse(void)
{
    ol_grammar g;
    ol_grammar_init(&g);
    ol_parser p;
    ol_parser_init(&p, &g);
    ol_buf text = {0};
    for (int i = 0; i < 3000; i++)
        ol_buf_printf(&text, "x%d = [%d, y.z, (a, b)]\n", i, i);
    CHECK(chain_depth(&g, text.data, true) > 1000);
    CHECK(chain_depth(&g, text.data, false) < 100);
    CHECK(!ol_ts_unbalanced);
    CHECK(flatten_matches(&p, text.data, text.len));
    /* a list of many items, in a statement deep in the text */
    ol_buf items = {0};
    ol_buf_printf(&items, "def f():\n    if a:\n        values = [");
    for (int i = 0; i < 5000; i++)
        ol_buf_printf(&items, "%d, ", i);
    ol_buf_printf(&items, "]\n        return values\n");
    CHECK(flatten_matches(&p, items.data, items.len));
    /* one error: balanced, as its errors are read through TSNode calls */
    ol_buf_printf(&text, "def broken(:\n    pass\n");
    CHECK(chain_depth(&g, text.data, true) < 100);
    CHECK(flatten_matches(&p, text.data, text.len));
    ol_buf_free(&items);
    ol_buf_free(&text);
    ol_parser_free(&p);
    ol_grammar_free(&g);
}

/* ---- the parse arena ------------------------------------------------------ */

/* tree-sitter's allocator hooks, as its runtime exports them */
extern void *(*ts_current_malloc)(size_t);
extern void *(*ts_current_calloc)(size_t, size_t);
extern void *(*ts_current_realloc)(void *, size_t);
extern void (*ts_current_free)(void *);

#if defined(__SANITIZE_ADDRESS__)
#define UNIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_ASAN 1
#endif
#endif
#ifdef UNIT_ASAN
#include <sanitizer/asan_interface.h>
#define POISONED(p) (__asan_address_is_poisoned(p) != 0)
#else
#define POISONED(p) true
#endif

static bool filled_with(const unsigned char *p, size_t n, unsigned char c)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != c)
            return false;
    return true;
}

static void test_parse_arena_blocks(void)
{
    ol_parse_arena a;
    ol_parse_arena_init(&a);
    unsigned char *p = ol_parse_arena_alloc(&a, 10);
    unsigned char *q = ol_parse_arena_alloc(&a, 33);
    CHECK(((uintptr_t)p % 16) == 0 && ((uintptr_t)q % 16) == 0);
    CHECK(q >= p + 10);
    memset(p, 0xAA, 10);
    memset(q, 0xBB, 33);
    CHECK(ol_parse_arena_owns(&a, p) && ol_parse_arena_owns(&a, q + 32));
    /* the last block grows where it is, an earlier one is copied */
    unsigned char *q2 = ol_parse_arena_realloc(&a, q, 100);
    CHECK(q2 == q && filled_with(q2, 33, 0xBB));
    unsigned char *p2 = ol_parse_arena_realloc(&a, p, 50);
    CHECK(p2 != p && filled_with(p2, 10, 0xAA));
    CHECK(POISONED(p));
    /* freeing the last block gives its space to the next */
    ol_parse_arena_release(&a, p2);
    CHECK(POISONED(p2));
    unsigned char *r = ol_parse_arena_alloc(&a, 40);
    CHECK(r == p2);
    /* a block larger than a chunk gets a chunk of its own */
    size_t big = 3u * 1024u * 1024u;
    unsigned char *b = ol_parse_arena_alloc(&a, big);
    memset(b, 0xCC, big);
    CHECK(ol_parse_arena_owns(&a, b + big - 1) && filled_with(q, 33, 0xBB));
    /* blocks from malloc pass through */
    char *m = ol_xmalloc(8);
    CHECK(!ol_parse_arena_owns(&a, m));
    m = ol_parse_arena_realloc(&a, m, 4096);
    CHECK(!ol_parse_arena_owns(&a, m));
    ol_parse_arena_release(&a, m); /* a leak here is what ASan's leak check would report */
    ol_parse_arena_free(&a);
}

/* Freed blocks are handed out again by size, and a block grows in place up
 * to what it can hold. */
static void test_parse_arena_reuse(void)
{
    ol_parse_arena a;
    ol_parse_arena_init(&a);
    unsigned char *small = ol_parse_arena_alloc(&a, 100);
    unsigned char *big = ol_parse_arena_alloc(&a, 5000);
    unsigned char *last = ol_parse_arena_alloc(&a, 8);
    ol_parse_arena_release(&a, small);
    ol_parse_arena_release(&a, big);
    CHECK(POISONED(small) && POISONED(big));
    /* an exact small size, then a first fit among larger ones */
    CHECK(ol_parse_arena_alloc(&a, 97) == small);
    CHECK(ol_parse_arena_alloc(&a, 100) != small);
    unsigned char *fit = ol_parse_arena_alloc(&a, 4500);
    CHECK(fit == big);
    memset(fit, 0xDD, 4500);
    /* it holds 5000: growing to that stays in place, past it copies */
    CHECK(ol_parse_arena_realloc(&a, fit, 5000) == fit && filled_with(fit, 4500, 0xDD));
    unsigned char *moved = ol_parse_arena_realloc(&a, fit, 9000);
    CHECK(moved != fit && filled_with(moved, 4500, 0xDD));
    /* the block it left is free again: a request it can hold gets it */
    CHECK(ol_parse_arena_alloc(&a, 4200) == fit);
    /* a large block is not spent on a request of less than half its size
     * (one more block first: the last one goes back to the bump pointer) */
    (void)ol_parse_arena_alloc(&a, 8);
    ol_parse_arena_release(&a, moved);
    unsigned char *other = ol_parse_arena_alloc(&a, 2000);
    CHECK(other != moved && ol_parse_arena_alloc(&a, 8000) == moved);
    (void)last;
    /* a scope's end forgets every free list */
    ol_parse_arena_end(&a);
    for (size_t i = 0; i < OL_ARENA_BINS; i++)
        CHECK(a.bins[i] == NULL);
    ol_parse_arena_free(&a);
}

static void test_parse_arena_scopes(void)
{
    ol_parse_arena_install();
    ol_parse_arena a;
    ol_parse_arena_init(&a);
    ol_parse_arena_begin(&a);
    char *in = ts_current_malloc(64);
    unsigned char *z = ts_current_calloc(16, 8);
    CHECK(ol_parse_arena_owns(&a, in) && ol_parse_arena_owns(&a, z) && filled_with(z, 128, 0));
    memset(z, 0xFF, 128);
    in = ts_current_realloc(in, 200);
    ts_current_free(in);
    ol_parse_arena_end(&a);
    CHECK(POISONED(z));
    /* outside a scope the hooks are libc's */
    char *out = ts_current_malloc(64);
    CHECK(!ol_parse_arena_owns(&a, out));
    ts_current_free(out);
    /* memory is reused by the next scope, and calloc clears what it reuses */
    ol_parse_arena_begin(&a);
    unsigned char *z2 = ts_current_calloc(16, 8);
    CHECK(ol_parse_arena_owns(&a, z2) && filled_with(z2, 128, 0));
    ol_parse_arena_end(&a);
    CHECK(a.reserved > 0 && a.reserved <= 4u * 1024u * 1024u);
    /* a huge scope's memory is not kept, but the chunk the small scope
     * used still is: the next file does not map memory afresh */
    size_t small = a.reserved;
    ol_parse_arena_begin(&a);
    (void)ts_current_malloc(20u * 1024u * 1024u);
    ol_parse_arena_end(&a);
    CHECK(a.reserved == small);
    /* chunks larger than the kept one are mapped in huge pages, their
     * header within their power of two: every size around those bounds
     * holds all its bytes, and all of it beyond the kept bound is given
     * back */
    const size_t mb = 1024u * 1024u;
    const size_t sizes[] = {4 * mb + 1, 8 * mb - 48, 8 * mb - 32, 8 * mb - 16, 8 * mb, 8 * mb + 16, 16 * mb - 16};
    for (size_t i = 0; i < OL_ARRAY_LEN(sizes); i++) {
        ol_parse_arena_begin(&a);
        unsigned char *block = ts_current_malloc(sizes[i]);
        memset(block, 0x5A, sizes[i]);
        CHECK(ol_parse_arena_owns(&a, block) && ol_parse_arena_owns(&a, block + sizes[i] - 1));
        CHECK(block[0] == 0x5A && block[sizes[i] - 1] == 0x5A);
        unsigned char *after = ts_current_malloc(64);
        CHECK(ol_parse_arena_owns(&a, after) && (after >= block + sizes[i] || after + 64 <= block));
        ol_parse_arena_end(&a);
        CHECK(a.reserved >= small && a.reserved <= 4 * mb);
    }
    ol_parse_arena_free(&a);
}

typedef struct parse_job {
    const char *text;
    size_t nodes[8];
} parse_job;

static void *parse_repeatedly(void *arg)
{
    parse_job *job = arg;
    ol_grammar g;
    ol_grammar_init(&g);
    ol_parser p;
    ol_parser_init(&p, &g);
    for (size_t i = 0; i < OL_ARRAY_LEN(job->nodes); i++) {
        ol_source src;
        ol_source_init_text(&src, "t.py", ol_xstrdup(job->text), strlen(job->text));
        ol_tree t;
        ol_parse(&p, &src, &t);
        job->nodes[i] = t.nodes.len;
        ol_tree_free(&t);
        ol_source_free(&src);
    }
    ol_parser_free(&p);
    ol_grammar_free(&g);
    return NULL;
}

/* Each thread parses into its own arena: two threads parsing at once get
 * the trees one thread gets, every time. */
static void test_parse_arena_threads(void)
{
    ol_buf a = {0}, b = {0};
    for (int i = 0; i < 300; i++) {
        ol_buf_printf(&a, "for x%d in loader:\n    loss = model(x%d).sum()\n    total += loss\n", i, i);
        ol_buf_printf(&b, "def f%d(a, *b, **c):\n    return [y for y in b if y > %d] or (a, c)\n", i, i);
    }
    parse_job one[2] = {{a.data, {0}}, {b.data, {0}}};
    parse_repeatedly(&one[0]);
    parse_repeatedly(&one[1]);
    parse_job two[2] = {{a.data, {0}}, {b.data, {0}}};
    pthread_t ids[2];
    bool started[2];
    for (int i = 0; i < 2; i++)
        started[i] = pthread_create(&ids[i], NULL, parse_repeatedly, &two[i]) == 0;
    for (int i = 0; i < 2; i++)
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            parse_repeatedly(&two[i]);
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < OL_ARRAY_LEN(one[i].nodes); k++)
            CHECK(one[i].nodes[k] > 1000 && two[i].nodes[k] == one[i].nodes[0]);
    ol_buf_free(&a);
    ol_buf_free(&b);
}

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

#define T(fn) {#fn, fn}

/* No registered rule is info yet; a stand-in shows how info findings map:
 * a ::notice annotation, a SARIF "note". */
static void test_info_findings_are_notices(void)
{
    ol_rule info = *ol_rule_find("OOM101");
    info.severity = OL_SEV_INFO;
    ol_file_result r = {0};
    r.path = ol_xstrdup("a,b.py");
    ol_diag d = {0};
    d.rule = &info;
    d.message = ol_xstrdup("50% done: a, b\nnext");
    ol_vec_push(&r.diags, d);
    ol_emit_options o = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    o.format = OL_FMT_GITHUB;
    ol_emit(f, &r, 1, &o);
    fclose(f);
    CHECK(strcmp(text, "::notice file=a%2Cb.py,line=1,title=OOM101::50%25 done: a, b%0Anext\n") == 0);
    free(text);
    f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    o.format = OL_FMT_SARIF;
    ol_emit(f, &r, 1, &o);
    fclose(f);
    CHECK(strstr(text, "\"ruleId\": \"OOM101\",\n") != NULL);
    CHECK(strstr(text, "\"level\": \"note\"") != NULL);
    free(text);
    ol_file_result_free(&r);
}

/* ---- language server building blocks ------------------------------------------ */

static void test_lsp_positions(void)
{
    /* "a😀b\r\nxé\rz": lines split at CRLF and a lone CR; 😀 is two UTF-16 units */
    const char *text = "a\xF0\x9F\x98\x80" "b\r\nx\xC3\xA9\rz";
    ol_doc *d = ol_doc_new("file:///t.py", "python", 1, text, strlen(text));
    CHECK(d->lines.len == 3);
    ol_lsp_pos p = {0, 3};
    CHECK(ol_doc_offset(d, p, OL_ENC_UTF16) == 5);   /* after the emoji */
    p.character = 2;
    CHECK(ol_doc_offset(d, p, OL_ENC_UTF16) == 1);   /* inside the pair: back to its start */
    p.character = 99;
    CHECK(ol_doc_offset(d, p, OL_ENC_UTF16) == 6);   /* past the end: the line's end, not the CR */
    p.line = 1;
    p.character = 2;
    CHECK(ol_doc_offset(d, p, OL_ENC_UTF16) == 11);
    p.line = 7;
    CHECK(ol_doc_offset(d, p, OL_ENC_UTF16) == (uint32_t)strlen(text));
    ol_lsp_pos q = ol_doc_position(d, 5, OL_ENC_UTF16);
    CHECK(q.line == 0 && q.character == 3);
    q = ol_doc_position(d, 5, OL_ENC_UTF8);
    CHECK(q.line == 0 && q.character == 5);
    q = ol_doc_position(d, 5, OL_ENC_UTF32);
    CHECK(q.line == 0 && q.character == 2);
    q = ol_doc_position(d, 7, OL_ENC_UTF16); /* inside CRLF: the end of line 0 */
    CHECK(q.line == 0 && q.character == 4);
    q = ol_doc_position(d, 13, OL_ENC_UTF16);
    CHECK(q.line == 2 && q.character == 1);
    ol_doc_free(d);
}

static void test_lsp_incremental_changes(void)
{
    ol_doc *d = ol_doc_new("file:///t.py", "python", 1, "x = 1\ny = 2\n", 12);
    cJSON *change = cJSON_Parse("{\"range\":{\"start\":{\"line\":1,\"character\":4},"
                                "\"end\":{\"line\":1,\"character\":5}},\"text\":\"\\ud83d\\ude00\\n\"}");
    ol_buf err = {0};
    CHECK(ol_doc_apply_change(d, change, OL_ENC_UTF16, &err));
    CHECK(strcmp(d->text.data, "x = 1\ny = \xF0\x9F\x98\x80\n\n") == 0);
    CHECK(d->lines.len == 4);
    cJSON_Delete(change);
    change = cJSON_Parse("{\"text\":\"whole\"}");
    CHECK(ol_doc_apply_change(d, change, OL_ENC_UTF16, &err));
    CHECK(strcmp(d->text.data, "whole") == 0 && d->lines.len == 1);
    cJSON_Delete(change);
    change = cJSON_Parse("{\"range\":{\"start\":{\"line\":0}},\"text\":\"\"}");
    CHECK(!ol_doc_apply_change(d, change, OL_ENC_UTF16, &err) && err.len > 0);
    CHECK(strcmp(d->text.data, "whole") == 0);
    cJSON_Delete(change);
    /* invalid UTF-8 from a client becomes U+FFFD */
    ol_doc_set_text(d, "a\xFF" "b", 3);
    CHECK(strcmp(d->text.data, "a\xEF\xBF\xBD" "b") == 0);
    ol_buf_free(&err);
    ol_doc_free(d);
}

static void test_lsp_framing(void)
{
    ol_rpc_reader r;
    ol_rpc_reader_init(&r, -1);
    char *body, *error;
    size_t len;
    const char *parts[] = {"Content-Len", "gth: 2\r\n", "\r\n{}Content-Type: x\r\nContent-Length: 3\r\n\r\n[1]",
                           "Content-Type: y\r\n\r\n{\"z\":1}", "Content-Length: 999999999999999999999\r\n\r\n",
                           "Content-Length: 2\n\n{}"};
    ol_buf_puts(&r.buf, parts[0]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_NONE);
    ol_buf_puts(&r.buf, parts[1]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_NONE);
    ol_buf_puts(&r.buf, parts[2]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_MESSAGE && len == 2 && strcmp(body, "{}") == 0);
    free(body);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_MESSAGE && len == 3 && strcmp(body, "[1]") == 0);
    free(body);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_NONE);
    ol_buf_puts(&r.buf, parts[3]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_BAD_FRAME && strstr(error, "without Content-Length"));
    free(error);
    ol_buf_puts(&r.buf, parts[4]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_BAD_FRAME && strstr(error, "refused"));
    free(error);
    ol_buf_puts(&r.buf, parts[5]);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_MESSAGE && strcmp(body, "{}") == 0);
    free(body);
    CHECK(ol_rpc_next(&r, &body, &len, &error) == OL_RPC_NONE);
    ol_rpc_reader_free(&r);
}

/* An incremental reparse yields the tree a fresh parse does. */
static bool same_tree(const ol_tree *a, const ol_tree *b)
{
    if (a->nodes.len != b->nodes.len || a->errors.len != b->errors.len || a->comments.len != b->comments.len)
        return false;
    for (size_t i = 0; i < a->nodes.len; i++) {
        const ol_node *x = &a->nodes.items[i], *y = &b->nodes.items[i];
        if (x->kind != y->kind || x->start != y->start || x->end != y->end || x->parent != y->parent ||
            x->field != y->field)
            return false;
    }
    for (size_t i = 0; i < a->errors.len; i++)
        if (a->errors.items[i].start != b->errors.items[i].start || a->errors.items[i].end != b->errors.items[i].end)
            return false;
    return true;
}

static void test_incremental_parse_matches_fresh(void)
{
    ol_grammar g;
    CHECK(ol_grammar_init(&g));
    ol_parser inc, fresh;
    ol_parser_init(&inc, &g);
    ol_parser_init(&fresh, &g);
    inc.incremental = true;
    const char *versions[] = {
        "import torch\n\ndef f(x):\n    total = 0\n    for i in x:\n        total += i\n    return total\n",
        "import torch\n\ndef f(x):\n    total = 0  # sum\n    for i in x:\n        total += i\n    return total\n",
        "import torch\n\ndef f(x):\n    total = 0  # sum\n    for i in x:\n        total += i.item(\n    return total\n",
        "import torch\n\ndef f(x):\n    total = 0  # sum\n    for i in x:\n        total += i.item()\n    return total\n",
        "import torch\n\nclass A:\n    def f(self, x):\n        return [v for v in x]\n",
        "",
        "x = '\xC3\xA9\xF0\x9F\x98\x80'\nif x:\n    pass\n",
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(versions); i++) {
        ol_source src;
        ol_source_init_text(&src, "t.py", ol_xstrdup(versions[i]), strlen(versions[i]));
        ol_tree a, b;
        ol_parse(&inc, &src, &a);
        ol_parse(&fresh, &src, &b);
        CHECK(same_tree(&a, &b));
        ol_tree_free(&a);
        ol_tree_free(&b);
        ol_source_free(&src);
    }
    ol_parser_free(&inc);
    ol_parser_free(&fresh);
    ol_grammar_free(&g);
}

/* ---- whole-program facts ------------------------------------------------------ */

/* Writes text to a new temporary file named with suffix; returns its path (malloc'd). */
static char *words_file(const char *text, size_t len, const char *suffix)
{
    char *path = ol_xasprintf("/tmp/oomlint-words-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text, len) == (ssize_t)len);
        close(fd);
    }
    return path;
}

static bool words_hold(const ol_words *w, const char *word)
{
    return ol_words_may_hold(w, ol_word_hash(word, strlen(word)));
}

/* The words ol_words_scan finds in a file of this text (its name ending in
 * suffix), the file gone again. */
static ol_words *scan_text(const char *text, const char *suffix)
{
    char *path = words_file(text, strlen(text), suffix);
    ol_words *w = ol_words_scan(path);
    unlink(path);
    free(path);
    return w;
}

static bool words_pair(const ol_words *w, const char *name, const char *bound)
{
    size_t n;
    const ol_word_alias *a = ol_words_aliases(w, &n);
    for (size_t i = 0; i < n; i++)
        if (a[i].name == ol_word_hash(name, strlen(name)) && a[i].bound == ol_word_hash(bound, strlen(bound)))
            return true;
    return false;
}

/* The relative import depth ol_words_scan finds in a .py file of this text. */
static unsigned relative_level_of(const char *text)
{
    ol_words *w = scan_text(text, ".py");
    unsigned level = ol_words_relative_level(w);
    ol_words_free(w);
    return level;
}

/* Is `name as bound` a pair whose name is the part right before `as`? */
static bool words_last_pair(const ol_words *w, const char *name, const char *bound)
{
    size_t n;
    const ol_word_alias *a = ol_words_aliases(w, &n);
    for (size_t i = 0; i < n; i++)
        if (a[i].name == ol_word_hash(name, strlen(name)) && a[i].bound == ol_word_hash(bound, strlen(bound)))
            return a[i].last;
    return false;
}

/* The lexical pass the callers question filters files by (words.c): every
 * word a call could be spelled with is held, code, strings and comments
 * alike; `as` pairs come from import statements only; a file whose bytes
 * are not its text may hold anything. */
static void test_words_scan(void)
{
    const char *text = "\xEF\xBB\xBF"
                       "fit_first(model)\n"
                       "import torch, pkg.mod as m\n"
                       "from .scoring import score as evaluate_score\n"
                       "from helpers import (\n    step as one_step,  # the loop's step as stepper\n"
                       "    run \\\n    as go,\n)\n"
                       "try:\n    pass\nexcept ValueError as err:\n    pass\n"
                       "with open(p) as fh:\n    torch.save(fh, 'x')\n"
                       "class TrainerModule(Base):\n    def fit(self):\n        getattr(self, \"tokenize\")  # inside\n";
    char *path = words_file(text, strlen(text), ".py");
    ol_words *w = ol_words_scan(path);
    CHECK(!ol_words_opaque(w) && ol_words_aliases_sure(w));
    CHECK(words_hold(w, "fit_first")); /* after the BOM */
    CHECK(words_hold(w, "fit") && words_hold(w, "tokenize") && words_hold(w, "inside"));
    CHECK(words_hold(w, "evaluate_score") && words_hold(w, "TrainerModule"));
    int absent = 0;
    const char *missing[] = {"absentword", "neverwritten", "no_such_name", "xyzzy"};
    for (size_t i = 0; i < OL_ARRAY_LEN(missing); i++)
        absent += !words_hold(w, missing[i]);
    CHECK(absent >= 3); /* a filter: a rare false "may" is allowed */
    CHECK(words_pair(w, "score", "evaluate_score"));
    CHECK(words_pair(w, "pkg", "m") && words_pair(w, "mod", "m"));
    CHECK(words_last_pair(w, "mod", "m") && !words_last_pair(w, "pkg", "m") && words_last_pair(w, "score", "evaluate_score"));
    CHECK(ol_words_relative_level(w) == 1);
    CHECK(words_pair(w, "step", "one_step") && words_pair(w, "run", "go"));
    CHECK(!words_pair(w, "ValueError", "err") && !words_pair(w, "loop", "stepper"));
    CHECK(ol_words_calls_save(w));
    CHECK(ol_words_may_name_class(w, "trainer") && ol_words_may_name_class(w, "MODULE"));
    CHECK(!ol_words_may_name_class(w, "Loader") && !ol_words_may_name_class(w, "fit"));
    ol_words_free(w);
    unlink(path);
    free(path);

    /* declared latin-1: the bytes are not the text, and may bind names unseen */
    w = scan_text("# -*- coding: latin-1 -*-\nfrom .a import f as g\n", ".py");
    CHECK(ol_words_opaque(w) && !ol_words_aliases_sure(w) && words_hold(w, "anything"));
    CHECK(ol_words_relative_level(w) == UINT_MAX);
    ol_words_free(w);
    /* relative imports: the most dots after a `from` (a line continued
     * between them too), none of a comment's */
    CHECK(relative_level_of("from ..model import Net\nfrom . import x\n# from .... import y\n"
                            "def g():\n    raise E from err\nfrom\\\n ... import z\n") == 3);
    CHECK(relative_level_of("import os\nfrom os import path\nx = a.b\n") == 0);
    /* a notebook's JSON escapes its code; nobody imports it */
    w = scan_text("{\"cells\": [{\"source\": [\"x = 1\\nfit()\"]}]}", ".ipynb");
    CHECK(ol_words_opaque(w) && ol_words_aliases_sure(w));
    ol_words_free(w);
    /* a file that cannot be read may hold anything */
    w = ol_words_scan("/nonexistent-oomlint-test/x.py");
    CHECK(ol_words_opaque(w) && !ol_words_calls_save(w));
    ol_words_free(w);
    CHECK(ol_word_hash("fit", 3) != ol_word_hash("fix", 3));

    /* `save(` anywhere in the text, part of a longer word too, and only
     * right before the parenthesis */
    struct {
        const char *text;
        bool save;
    } saves[] = {{"autosave(x)\n", true}, {"# torch.save(m)\n", true}, {"s = 'save('\n", true},
                 {"\xC3\xA9save(x)\n", true}, {"save (x)\n", false}, {"saved(x)\n", false},
                 {"x.save\n(y)\n", false}, {"ave(x)\n", false}, {"save", false}, {"save(", true}};
    for (size_t i = 0; i < OL_ARRAY_LEN(saves); i++) {
        w = scan_text(saves[i].text, ".py");
        CHECK(ol_words_calls_save(w) == saves[i].save);
        ol_words_free(w);
    }

    /* keys made once answer as the hashes do, for any of several words;
     * an opaque file's words hold any, even of none */
    w = scan_text("def fit(model):\n    return score(model)\n", ".py");
    const char *asked[] = {"fit", "score", "model", "absentword", "neverwritten", "xyzzy"};
    ol_word_key keys[OL_ARRAY_LEN(asked)];
    for (size_t i = 0; i < OL_ARRAY_LEN(asked); i++) {
        keys[i] = ol_word_key_of(ol_word_hash(asked[i], strlen(asked[i])));
        CHECK(ol_words_may_hold_any(w, &keys[i], 1) == words_hold(w, asked[i]));
    }
    CHECK(ol_words_may_hold_any(w, keys, 3) && !ol_words_may_hold_any(w, keys, 0));
    CHECK(ol_words_may_hold_any(w, keys + 3, 3) == (words_hold(w, asked[3]) || words_hold(w, asked[4]) ||
                                                    words_hold(w, asked[5])));
    ol_words_free(w);
    w = ol_words_scan("/nonexistent-oomlint-test/x.py");
    CHECK(ol_words_may_hold_any(w, keys + 3, 3) && ol_words_may_hold_any(w, keys, 0));
    ol_words_free(w);

    /* the scan reads 64 bytes at a time: words, `save(` and import pairs
     * are the same wherever a block boundary falls, in a word longer than
     * a block too */
    static const size_t lengths[] = {1, 4, 8, 9, 63, 64, 65, 130, 200};
    int wrong = 0;
    for (size_t at = 1; at <= 140; at++) {
        for (size_t k = 0; k < OL_ARRAY_LEN(lengths); k++) {
            ol_buf b = {0};
            for (size_t i = 1; i < at; i++)
                ol_buf_putc(&b, ' ');
            ol_buf_putc(&b, '\n');
            char *word = ol_xmalloc(lengths[k] + 1);
            memset(word, 'a', lengths[k]);
            word[0] = 'w';
            word[lengths[k]] = '\0';
            ol_buf_printf(&b, "%s = autosave(1)\nimport pkg.mod as m\n%s", word, word);
            w = scan_text(b.data, ".py");
            wrong += !words_hold(w, word) || !words_hold(w, "autosave") || !ol_words_calls_save(w) ||
                     !words_pair(w, "pkg", "m") || !words_last_pair(w, "mod", "m");
            ol_words_free(w);
            free(word);
            ol_buf_free(&b);
        }
    }
    CHECK(wrong == 0);

    /* every byte reads the same in a block (SSE2 where there is one) as in
     * the byte-at-a-time reading of a word longer than a block: word bytes
     * are ASCII letters, digits, `_` and bytes >= 0x80; blanks are space,
     * tab, CR and FF; the rest (NUL aside: the file is then not its text)
     * ends a word */
    int misread = 0;
    for (int c = 1; c < 256; c++) {
        bool word_byte = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '_' || c >= 0x80;
        for (size_t lead = 1; lead <= 70; lead += 69) {
            /* a word of `lead` w's, the byte, then `z`: at 1 the byte is read
             * in the block, at 70 past it, byte by byte */
            char line[80], whole[80], head[80];
            memset(head, 'w', lead);
            head[lead] = '\0';
            memcpy(whole, head, lead);
            whole[lead] = (char)c;
            memcpy(whole + lead + 1, "z", 2);
            memcpy(line, whole, lead + 2);
            memcpy(line + lead + 2, "\n", 2);
            w = scan_text(line, ".py");
            misread += word_byte ? !words_hold(w, whole) : !words_hold(w, head) || !words_hold(w, "z");
            ol_words_free(w);
        }
        /* a blank inside a dotted name keeps it whole, as a backslash or
         * another dot does; any other byte ends it */
        bool keeps_chain = c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\\' || c == '.';
        char import[40];
        memcpy(import, "import pkg", 10);
        import[10] = (char)c;
        memcpy(import + 11, ".mod as m\n", 11);
        w = scan_text(import, ".py");
        misread += words_pair(w, "pkg", "m") != keeps_chain;
        ol_words_free(w);
    }
    CHECK(misread == 0);
}

/* The files that may define a class's method (the words of every file at
 * once, project.c's rows): the very files their own filters say, over
 * more files than a row's word, small filters (repeated across the rows)
 * and large ones (folded), an opaque file, a file read from elsewhere. */
static void test_project_may_define_files(void)
{
    char dir[] = "/tmp/oomlint-rows-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    enum { FILES = 150 };
    ol_project *p = ol_project_new();
    char *paths[FILES];
    for (size_t i = 0; i < FILES; i++) {
        paths[i] = ol_xasprintf("%s/m%03zu.py", dir, i);
        ol_buf b = {0};
        if (i == 7)
            ol_buf_puts(&b, "# -*- coding: latin-1 -*-\n"); /* opaque: may hold any word */
        ol_buf_printf(&b, "class Model%zu:\n    def step%zu(self):\n        pass\n", i, i % 10);
        /* every 9th file is large: thousands of words, a filter larger than the rows */
        for (size_t k = 0; i % 9 == 0 && k < 3000; k++)
            ol_buf_printf(&b, "w%zu_%zu = 1\n", i, k);
        FILE *f = fopen(paths[i], "w");
        CHECK(f != NULL);
        if (f) {
            fwrite(b.data, 1, b.len, f);
            fclose(f);
        }
        ol_buf_free(&b);
        CHECK(ol_project_add(p, paths[i]) == i);
    }
    ol_project_text_elsewhere(p, 11);
    const char *methods[] = {"step3", "step10", "absent_method", "w9_5", "step"};
    const char *parts[] = {"model", "Model12", "nothing"};
    for (size_t mi = 0; mi < OL_ARRAY_LEN(methods); mi++)
        for (size_t pi = 0; pi < OL_ARRAY_LEN(parts); pi++) {
            size_t n;
            size_t *got = ol_project_may_define_files(p, 5, parts[pi], methods[mi], &n);
            size_t k = 0;
            bool same = true;
            for (size_t i = 0; i < FILES; i++) {
                ol_words *w = ol_words_scan(paths[i]);
                bool may = i != 5 && (i == 11 || (words_hold(w, methods[mi]) && ol_words_may_name_class(w, parts[pi])));
                ol_words_free(w);
                if (may)
                    same = same && k < n && got[k++] == i;
            }
            CHECK(same && k == n);
            free(got);
        }
    /* the method's own file and the ones that may not be told apart */
    size_t n;
    size_t *got = ol_project_may_define_files(p, 5, "Model", "step3", &n);
    bool has3 = false, has7 = false, has11 = false, has4 = false;
    for (size_t k = 0; k < n; k++) {
        has3 |= got[k] == 3;
        has4 |= got[k] == 4;
        has7 |= got[k] == 7;
        has11 |= got[k] == 11;
    }
    CHECK(has3 && has7 && has11 && !has4);
    free(got);
    ol_project_free(p);
    for (size_t i = 0; i < FILES; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
}

static void test_project_resolution(void)
{
    ol_project *p = ol_project_new();
    const char *root = "/nonexistent-oomlint-test/repo";
    const char *files[] = {"train.py", "utils.py", "pkg/__init__.py", "pkg/meters.py", "pkg/sub/__init__.py",
                           "pkg/sub/deep.py", "other/utils.py", "scripts/run.py", "pkg/pkg.py"};
    size_t idx[9];
    for (size_t i = 0; i < 9; i++) {
        char *path = ol_xasprintf("%s/%s", root, files[i]);
        idx[i] = ol_project_add(p, path);
        free(path);
    }
    CHECK(ol_project_add(p, "/nonexistent-oomlint-test/repo/./pkg/../utils.py") == idx[1]);
    CHECK(ol_project_count(p) == 9);
    ol_project_index(p);
    size_t file;
    const char *rest;
    /* a script's sibling */
    CHECK(ol_project_resolve(p, idx[0], "utils.evaluate", &file, &rest) && file == idx[1] && strcmp(rest, "evaluate") == 0);
    /* a package module, and a class in it */
    CHECK(ol_project_resolve(p, idx[0], "pkg.meters.AverageMeter", &file, &rest) && file == idx[3] &&
          strcmp(rest, "AverageMeter") == 0);
    /* the package itself, through its __init__.py */
    CHECK(ol_project_resolve(p, idx[0], "pkg.RunningAverage", &file, &rest) && file == idx[2] &&
          strcmp(rest, "RunningAverage") == 0);
    /* relative imports walk up one directory per extra dot */
    CHECK(ol_project_resolve(p, idx[3], ".sub.deep.f", &file, &rest) && file == idx[5] && strcmp(rest, "f") == 0);
    CHECK(ol_project_resolve(p, idx[5], "..meters.AverageMeter", &file, &rest) && file == idx[3]);
    CHECK(ol_project_resolve(p, idx[2], ".meters", &file, &rest) && file == idx[3] && strcmp(rest, "") == 0);
    CHECK(ol_project_resolve(p, idx[5], "..RunningAverage", &file, &rest) && file == idx[2] &&
          strcmp(rest, "RunningAverage") == 0);
    CHECK(!ol_project_resolve(p, idx[3], "...x", &file, &rest));
    /* absolute names from inside a package: the directory above the top package */
    CHECK(ol_project_resolve(p, idx[5], "pkg.meters", &file, &rest) && file == idx[3] && strcmp(rest, "") == 0);
    /* ... before the package's own directory: pkg/pkg.py is not `pkg` there */
    CHECK(ol_project_resolve(p, idx[3], "pkg.meters.AverageMeter", &file, &rest) && file == idx[3] &&
          strcmp(rest, "AverageMeter") == 0);
    /* outside a package, the importing file's own directory comes first */
    CHECK(ol_project_resolve(p, idx[6], "utils.f", &file, &rest) && file == idx[6]);
    /* the run's common directory: a script in a subdirectory reaches the package */
    CHECK(ol_project_resolve(p, idx[7], "pkg.sub.deep.g", &file, &rest) && file == idx[5] && strcmp(rest, "g") == 0);
    /* libraries are not part of the project */
    CHECK(!ol_project_resolve(p, idx[0], "torch.nn.functional.relu", &file, &rest));
    CHECK(!ol_project_resolve(p, idx[0], "numpy", &file, &rest));
    /* summaries: published once, the first wins; replace swaps */
    CHECK(ol_project_claim(p, idx[1]) && !ol_project_claim(p, idx[1]) && ol_project_claimed(p, idx[1]));
    CHECK(ol_project_acquire(p, idx[1], NULL) == NULL);
    ol_file_summary *a = ol_file_summary_empty(), *b = ol_file_summary_empty();
    ol_project_publish(p, idx[1], a);
    ol_project_publish(p, idx[1], b);
    ol_file_summary *got = ol_project_acquire(p, idx[1], NULL);
    CHECK(got == a);
    ol_file_summary_release(got);
    ol_project_replace(p, idx[1], b);
    got = ol_project_acquire(p, idx[1], NULL);
    CHECK(got == b);
    ol_file_summary_release(got);
    ol_project_publish_missing(p, idx[0]);
    got = ol_project_acquire(p, idx[0], NULL);
    CHECK(got != NULL && got->fn_count == 0);
    ol_file_summary_release(got);
    /* a budget drops the summaries asked for least recently */
    ol_project_set_budget(p, 250);
    ol_file_summary *c = ol_file_summary_empty(), *d = ol_file_summary_empty(), *e = ol_file_summary_empty();
    c->bytes = d->bytes = e->bytes = 100;
    ol_project_publish(p, idx[4], c);
    ol_project_publish(p, idx[5], d);
    got = ol_project_acquire(p, idx[4], NULL); /* c is now the newest */
    ol_file_summary_release(got);
    ol_project_publish(p, idx[6], e);          /* 300 bytes: d, the oldest of the three, goes */
    CHECK(ol_project_evicted(p, idx[5]) && !ol_project_evicted(p, idx[4]));
    CHECK(ol_project_acquire(p, idx[5], NULL) == NULL); /* no processor to build it again */
    got = ol_project_acquire(p, idx[4], NULL);
    CHECK(got == c);
    ol_file_summary_release(got);
    /* built again, d is kept for the rest of the run outside the budget (a
     * summary needed after it was dropped would be parsed per importer) */
    ol_project_publish(p, idx[5], d);
    CHECK(!ol_project_evicted(p, idx[5]) && !ol_project_evicted(p, idx[6]));
    ol_file_summary *f = ol_file_summary_empty();
    f->bytes = 100;
    ol_project_publish(p, idx[7], f); /* c, e, f: e, asked for least recently, goes; d stays */
    CHECK(ol_project_evicted(p, idx[6]) && !ol_project_evicted(p, idx[5]) && !ol_project_evicted(p, idx[4]));
    got = ol_project_acquire(p, idx[5], NULL);
    CHECK(got == d);
    ol_file_summary_release(got);
    ol_project_usage u;
    ol_project_stats(p, &u);
    CHECK(u.evictions >= 2 && u.rebuilds == 1 && u.most_held >= 400);
    ol_file_summary_release(c);
    ol_file_summary_release(d);
    ol_file_summary_release(e);
    ol_file_summary_release(f);
    ol_file_summary_release(a);
    ol_file_summary_release(b);
    ol_project_free(p);
}

static void test_function_summaries(void)
{
    parsed x;
    parse_text(&x, "import torch\n"
                   "import torch.nn as nn\n"
                   "import torch.nn.functional as F\n"
                   "model = nn.Linear(4, 2)\n"
                   "device = torch.device('cuda')\n"
                   "class Meter:\n"
                   "    def __init__(self):\n"
                   "        self.sum = 0\n"
                   "        self.vals = []\n"
                   "    def update(self, val, n=1):\n"
                   "        self.sum += val * n\n"
                   "    def keep(self, val):\n"
                   "        self.vals.append(val)\n"
                   "    def safe(self, val):\n"
                   "        if torch.is_tensor(val):\n"
                   "            val = val.item()\n"
                   "        self.sum += val\n"
                   "    def log(self, val):\n"
                   "        self.update(val)\n"
                   "def step(x, y):\n"
                   "    out = model(x)\n"
                   "    return F.cross_entropy(out, y), out.argmax(1).float().mean().item()\n"
                   "def as_dict(x, y):\n"
                   "    return {'loss': F.cross_entropy(model(x), y), 'n': x.sum().item()}\n"
                   "def batchify(data, bs):\n"
                   "    return data.view(bs, -1).to(device)\n"
                   "def get_batch(source, i):\n"
                   "    return source[i:i + 35]\n"
                   "def train(x, y, opt):\n"
                   "    loss, acc = step(x, y)\n"
                   "    loss.backward()\n"
                   "    opt.step()\n"
                   "def outer(x, y, opt):\n"
                   "    train(x, y, opt)\n"
                   "@torch.no_grad()\n"
                   "def predict(x):\n"
                   "    return model(x)\n");
    ol_file_summary *s = ol_summarize(&x.model);
    const ol_fn_summary *update = ol_summary_function(s, "Meter.update");
    CHECK(update && update->bound && update->store_count == 1 && update->stores[0].param == 1 &&
          update->stores[0].into == OL_INTO_SELF && update->stores[0].how == OL_STORE_ADD);
    const ol_fn_summary *keep = ol_summary_function(s, "Meter.keep");
    CHECK(keep && keep->store_count == 1 && keep->stores[0].how == OL_STORE_COLLECT);
    const ol_fn_summary *safe = ol_summary_function(s, "Meter.safe");
    CHECK(safe && safe->store_count == 0);
    /* through self.update(val) */
    const ol_fn_summary *log = ol_summary_function(s, "Meter.log");
    CHECK(log && log->store_count == 1 && log->stores[0].param == 1 && log->stores[0].into == OL_INTO_SELF);
    const ol_fn_summary *step = ol_summary_function(s, "step");
    CHECK(step && step->elem_count == 2);
    CHECK(step && step->elems[0].index == 0 && (step->elems[0].val.flags & OL_VF_GRAPH) &&
          (step->elems[0].val.flags & OL_VF_LOSS));
    CHECK(step && step->elems[1].val.kind == OL_V_NUMBER);
    const ol_fn_summary *dict = ol_summary_function(s, "as_dict");
    bool loss_key = false, n_key = false;
    for (size_t i = 0; dict && i < dict->elem_count; i++) {
        if (dict->elems[i].key && strcmp(dict->elems[i].key, "loss") == 0)
            loss_key = (dict->elems[i].val.flags & OL_VF_GRAPH) != 0;
        if (dict->elems[i].key && strcmp(dict->elems[i].key, "n") == 0)
            n_key = dict->elems[i].val.kind == OL_V_NUMBER;
    }
    CHECK(loss_key && n_key);
    const ol_fn_summary *batchify = ol_summary_function(s, "batchify");
    CHECK(batchify && (batchify->facts & OL_FN_RET_ON_DEVICE));
    const ol_fn_summary *get_batch = ol_summary_function(s, "get_batch");
    CHECK(get_batch && get_batch->param_sliced == 1u && get_batch->param_batched == 0);
    const ol_fn_summary *train = ol_summary_function(s, "train");
    CHECK(train && (train->facts & OL_FN_BACKWARD) && (train->facts & OL_FN_STEP) && (train->facts & OL_FN_FORWARD));
    /* facts reach callers of callers */
    const ol_fn_summary *outer = ol_summary_function(s, "outer");
    CHECK(outer && (outer->facts & OL_FN_BACKWARD) && (outer->facts & OL_FN_STEP));
    const ol_fn_summary *predict = ol_summary_function(s, "predict");
    CHECK(predict && (predict->facts & OL_FN_NO_GRAD) && !(predict->facts & OL_FN_FORWARD) &&
          !(predict->ret.flags & OL_VF_GRAPH));
    const ol_class_summary *meter = ol_summary_class(s, "Meter");
    CHECK(meter && !meter->is_module);
    CHECK(ol_summary_import(s, "F") && strcmp(ol_summary_import(s, "F")->qual, "torch.nn.functional") == 0);
    CHECK(ol_summary_function(s, "missing") == NULL && ol_summary_function(s, "Meter.missing") == NULL);
    ol_file_summary_release(s);
    parsed_free(&x);
}

static void test_lower_bound(void)
{
    const uint32_t a[] = {2, 4, 4, 9};
    CHECK(ol_lower_bound_u32(a, 4, 0) == 0 && ol_lower_bound_u32(a, 4, 2) == 0);
    CHECK(ol_lower_bound_u32(a, 4, 3) == 1 && ol_lower_bound_u32(a, 4, 4) == 1);
    CHECK(ol_lower_bound_u32(a, 4, 5) == 3 && ol_lower_bound_u32(a, 4, 10) == 4);
    CHECK(ol_lower_bound_u32(NULL, 0, 1) == 0);
}

/* Case-insensitive search (util.h): `# NOQA`, `Content-Length`. */
static void test_find_ci(void)
{
    const char *s = "x = 1  # NoQa: OOM101";
    CHECK(ol_find_ci(s, strlen(s), "noqa") == s + 9);
    CHECK(ol_find_ci(s, 10, "noqa") == NULL); /* stops at n */
    CHECK(ol_find_ci(s, strlen(s), "oom101") == s + 15);
    CHECK(ol_find_ci("", 0, "a") == NULL && ol_find_ci("ab", 2, "abc") == NULL);
}

/* The edit distance behind "did you mean" (util.h). */
static void test_edit_distance(void)
{
    CHECK(ol_edit_distance("select", 6, "select", 6) == 0);
    CHECK(ol_edit_distance("selct", 5, "select", 6) == 1);
    CHECK(ol_edit_distance("fail_on", 7, "fail-on", 7) == 1);
    CHECK(ol_edit_distance("", 0, "fix", 3) == 3);
    CHECK(ol_edit_distance("fixx", 3, "fix", 3) == 0); /* a_len counts, not the NUL */
    char long_name[70];
    memset(long_name, 'a', sizeof long_name);
    CHECK(ol_edit_distance(long_name, sizeof long_name, "a", 1) == SIZE_MAX);
}

/* The torch floor a dependency file declares (torchfloor.h). */
static void test_torch_floor(void)
{
#define FLOOR(s) ol_torch_floor_in_text(s, strlen(s))
    CHECK(FLOOR("numpy\ntorch>=2.3.1\n") == 203);
    CHECK(FLOOR("torch == 1.13.0") == 113);
    CHECK(FLOOR("install_requires=[\"torch~=2.1\", \"tqdm\"]") == 201);
    CHECK(FLOOR("[tool.poetry.dependencies]\ntorch = \"^2.4\"\n") == 204);
    CHECK(FLOOR("dependencies = [\"torch >= 2.0\"]") == 200);
    CHECK(FLOOR("torchvision>=0.18\ntorch\n") == 0);  /* torch without a bound */
    CHECK(FLOOR("torch<3\n") == 0);
    CHECK(FLOOR("pytorch-lightning>=2.0\n") == 0);
    CHECK(FLOOR("") == 0);
#undef FLOOR
}

/* Which parameters reach code that raises on a CUDA tensor (hostuse.h). */
static void test_host_params(void)
{
    parsed x;
    parse_text(&x, "import json\n"
                   "import numpy as np\n"
                   "import matplotlib.pyplot as plt\n"
                   "def report(path, preds, out):\n"
                   "    kept = [p for p in preds if p['ok']]\n"
                   "    json.dump(kept, out)\n"
                   "def any_json(preds, out):\n"
                   "    json.dump(preds, out, default=str)\n"
                   "def curve(ax, c, label):\n"
                   "    c = c  # rebinding is followed too\n"
                   "    ax.plot(np.arange(3), c.mean(1))\n"
                   "def moved(c, device):\n"
                   "    print(c.numpy())\n"
                   "    return c.to(device)\n"
                   "def listed(c):\n"
                   "    return np.array(c.tolist())\n"
                   "def saved(path, arr):\n"
                   "    np.save(path, arr)\n"
                   "class Plotter:\n"
                   "    def show(self, hist):\n"
                   "        for k, v in hist.items():\n"
                   "            plt.plot(v)\n");
    ol_file_summary *s = ol_summarize(&x.model);
    const ol_fn_summary *f = ol_summary_function(s, "report");
    CHECK(f && f->param_host == 2u);
    f = ol_summary_function(s, "any_json");
    CHECK(f && f->param_host == 0);
    f = ol_summary_function(s, "curve");
    CHECK(f && f->param_host == 2u);
    f = ol_summary_function(s, "moved");
    CHECK(f && f->param_host == 0);
    f = ol_summary_function(s, "listed");
    CHECK(f && f->param_host == 0);
    f = ol_summary_function(s, "saved");
    CHECK(f && f->param_host == 2u);
    f = ol_summary_function(s, "Plotter.show");
    CHECK(f && f->param_host == 2u);
    ol_file_summary_release(s);
    parsed_free(&x);
}

/* ---- portable.h: the paths macOS takes, run here ---------------------------------- */

/* A watched signal raised at ourselves makes the descriptor readable with its
 * number; closing the watch puts the old disposition back (checked with
 * SIGHUP ignored before and after). */
static void sigwatch_case(ol_sigwatch_how how)
{
    struct sigaction ign, before;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGHUP, &ign, &before);
    static const int sigs[] = {SIGTERM, SIGHUP};
    int fd = ol_sigwatch_open(sigs, OL_ARRAY_LEN(sigs), how);
    CHECK(fd >= 0);
    if (fd < 0) {
        sigaction(SIGHUP, &before, NULL);
        return;
    }
    CHECK(ol_sigwatch_open(sigs, 1, how) == -1); /* one watch at a time */
    CHECK(ol_sigwatch_take(fd) == 0);           /* nothing yet */
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    kill(getpid(), SIGTERM); /* would end the test binary if not caught */
    struct pollfd p = {fd, POLLIN, 0};
    CHECK(poll(&p, 1, 2000) == 1);
    CHECK(ol_sigwatch_take(fd) == SIGTERM);
    CHECK(ol_sigwatch_take(fd) == 0);
    raise(SIGHUP);
    CHECK(poll(&p, 1, 2000) == 1);
    CHECK(ol_sigwatch_take(fd) == SIGHUP);
    ol_sigwatch_close(fd);
    struct sigaction after;
    sigaction(SIGHUP, NULL, &after);
    CHECK(after.sa_handler == SIG_IGN);
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    CHECK(!sigismember(&mask, SIGTERM));
    /* a second watch can start once the first is closed */
    fd = ol_sigwatch_open(sigs, 1, how);
    CHECK(fd >= 0);
    ol_sigwatch_close(fd);
    sigaction(SIGHUP, &before, NULL);
}

static void test_sigwatch_native(void)
{
    sigwatch_case(OL_SIGWATCH_NATIVE);
}

static void test_sigwatch_self_pipe(void)
{
    sigwatch_case(OL_SIGWATCH_SELF_PIPE);
}

/* A grandchild that watches a parent-death pipe ends when its parent ends:
 * the test holds the read end of `alive`, whose only write end the grandchild
 * keeps, so end of file there means the grandchild is gone. Without the watch
 * it would sleep forever (and is killed after the 5 s wait). */
static void test_pdeath_pipe(void)
{
    int alive[2], pidpipe[2];
    CHECK(pipe(alive) == 0 && pipe(pidpipe) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t mid = fork();
    if (mid == 0) {
        close(alive[0]);
        close(pidpipe[0]);
        int death[2];
        if (!ol_pdeath_pipe(death))
            _exit(3);
        pid_t grand = fork();
        if (grand == 0) {
            close(pidpipe[1]);
            if (!ol_pdeath_watch(death))
                _exit(4);
            for (;;)
                pause();
        }
        close(alive[1]);
        ssize_t w = write(pidpipe[1], &grand, sizeof grand);
        (void)w;
        _exit(grand > 0 ? 0 : 5); /* death[1] closes with us */
    }
    close(alive[1]);
    close(pidpipe[1]);
    int st = 0;
    CHECK(mid > 0 && waitpid(mid, &st, 0) == mid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pid_t grand = 0;
    CHECK(read(pidpipe[0], &grand, sizeof grand) == (ssize_t)sizeof grand);
    struct pollfd p = {alive[0], POLLIN, 0};
    int n = poll(&p, 1, 5000);
    char b;
    bool gone = n == 1 && read(alive[0], &b, 1) == 0;
    CHECK(gone);
    if (!gone && grand > 0)
        kill(grand, SIGKILL);
    close(alive[0]);
    close(pidpipe[0]);
}

static void test_fallocate_grows(void)
{
    char path[] = "/tmp/oomlint-unit-falloc.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    unlink(path);
    CHECK(write(fd, "abc", 3) == 3);
    CHECK(ol_fallocate(fd, 4096) == 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 4096);
    CHECK(ol_fallocate(fd, 10) == 0); /* never shrinks */
    CHECK(fstat(fd, &st) == 0 && st.st_size == 4096);
    char head[3];
    CHECK(pread(fd, head, 3, 0) == 3 && memcmp(head, "abc", 3) == 0);
    close(fd);
    CHECK(ol_fallocate(-1, 10) != 0);
}

/* ---- evidence: a finding's notes in every output --------------------------------- */

/* The byte offset of the first `needle` in text. */
static uint32_t offset_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p ? (uint32_t)(p - text) : 0;
}

static const char evidence_py[] = "import torch\n"
                                  "\n"
                                  "def evaluate(model, loader):\n"
                                  "    for x in loader:\n"
                                  "        out = model(x)\n";

/* A .py file with two findings: one with every kind of evidence (a fact in
 * its own file, a step in another file, a step in its own, a fact in a third
 * file known by its line only) that rests on a guess, and one with none. */
static void evidence_sample_py(ol_file_result *r)
{
    memset(r, 0, sizeof(*r));
    r->path = ol_xstrdup("pkg/train.py");
    ol_source_init_text(&r->src, "pkg/train.py", ol_xstrdup(evidence_py), strlen(evidence_py));
    r->has_source = r->read_ok = true;
    ol_diag d = {0};
    d.rule = ol_rule_find("OOM201");
    d.start = offset_of(evidence_py, "model(x)");
    d.end = d.start + 8;
    d.message = ol_xstrdup("`model(...)` runs with autograd on");
    d.help = ol_xstrdup("evaluate under `torch.no_grad()`");
    uint32_t name = offset_of(evidence_py, "evaluate(");
    ol_diag_note(&d, OL_NOTE_FACT, name, name + 8, "evaluation code: `%s()`", "evaluate");
    ol_diag_note_file(&d, OL_NOTE_STEP, "pkg/data.py", 12, 10, 12, 16, "`run()` calls `evaluate()` with autograd on");
    uint32_t loop = offset_of(evidence_py, "for x");
    ol_diag_note(&d, OL_NOTE_STEP, loop, (uint32_t)strlen(evidence_py) - 1, "each batch of `loader[1:]` runs the model");
    ol_diag_note_file(&d, OL_NOTE_FACT, "pkg/config.py", 7, 0, 0, 0, "the device is chosen here");
    d.guess = "a name's spelling";
    ol_vec_push(&r->diags, d);
    ol_diag plain = {0};
    plain.rule = ol_rule_find("OOM101");
    plain.start = offset_of(evidence_py, "out");
    plain.end = plain.start + 3;
    plain.message = ol_xstrdup("a finding without evidence");
    ol_vec_push(&r->diags, plain);
}

static const char evidence_nb[] =
    "{\n"
    " \"cells\": [\n"
    "  {\"cell_type\": \"markdown\", \"metadata\": {}, \"source\": [\"# Eval\"]},\n"
    "  {\"cell_type\": \"code\", \"metadata\": {}, \"outputs\": [], \"execution_count\": null, \"source\": [\n"
    "    \"import torch\\n\",\n"
    "    \"def evaluate(model, loader):\\n\",\n"
    "    \"    pass\"\n"
    "  ]},\n"
    "  {\"cell_type\": \"code\", \"metadata\": {}, \"outputs\": [], \"execution_count\": null, \"source\": [\n"
    "    \"for x in loader:\\n\",\n"
    "    \"    out = model(x)\"\n"
    "  ]}\n"
    " ],\n"
    " \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 5\n"
    "}\n";

/* A notebook whose finding (cell 3) has its evidence in cell 2. */
static bool evidence_sample_nb(ol_file_result *r)
{
    memset(r, 0, sizeof(*r));
    r->path = ol_xstrdup("pkg/eval.ipynb");
    ol_buf err = {0};
    bool ok = ol_notebook_load(&r->src, "pkg/eval.ipynb", ol_xstrdup(evidence_nb), strlen(evidence_nb), &err);
    ol_buf_free(&err);
    if (!ok)
        return false;
    r->has_source = r->read_ok = true;
    ol_diag d = {0};
    d.rule = ol_rule_find("OOM201");
    d.start = offset_of(r->src.text, "model(x)");
    d.end = d.start + 8;
    d.message = ol_xstrdup("`model(...)` runs with autograd on");
    uint32_t name = offset_of(r->src.text, "evaluate(");
    ol_diag_note(&d, OL_NOTE_FACT, name, name + 8, "evaluation code: `evaluate()`");
    ol_vec_push(&r->diags, d);
    return true;
}

/* The report of the results in a format, as a string (owned). */
static char *emit_to_string(const ol_file_result *results, size_t count, ol_format format)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return ol_xstrdup("");
    ol_emit_options o = {0};
    o.format = format;
    o.quiet = true;
    ol_emit(f, results, count, &o);
    fclose(f);
    return text;
}

/* 1-based line of the first line of text holding needle. */
static uint32_t line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    uint32_t line = 1;
    for (const char *q = text; p && q < p; q++)
        line += *q == '\n';
    return p ? line : 0;
}

static void test_note_api(void)
{
    ol_diag d = {0};
    d.rule = ol_rule_find("OOM201");
    d.message = ol_xstrdup("m");
    ol_diag_note(&d, OL_NOTE_FACT, 10, 4, "at %d", 10);
    CHECK(d.notes.len == 1 && d.notes.items[0].start == 10 && d.notes.items[0].end == 10);
    CHECK(d.notes.len == 1 && d.notes.items[0].path == NULL && strcmp(d.notes.items[0].message, "at 10") == 0);
    ol_diag_note_file(&d, OL_NOTE_STEP, "other.py", 8, 5, 8, 2, "%s", "called here");
    CHECK(d.notes.len == 2);
    const ol_note *n = &d.notes.items[1];
    /* an end before the start is the start */
    CHECK(n->kind == OL_NOTE_STEP && strcmp(n->path, "other.py") == 0 && n->line == 8 && n->col == 5);
    CHECK(n->end_line == 8 && n->end_col == 5);
    ol_diag_note_file(&d, OL_NOTE_FACT, "third.py", 3, 0, 0, 0, "line only");
    CHECK(d.notes.len == 3 && d.notes.items[2].end_line == 3 && d.notes.items[2].col == 0 &&
          d.notes.items[2].end_col == 0);
    ol_diag_note_file(&d, OL_NOTE_FACT, NULL, 3, 1, 3, 2, "nowhere");
    CHECK(d.notes.len == 3);
    CHECK(strcmp(ol_note_kind_name(OL_NOTE_FACT), "fact") == 0 && strcmp(ol_note_kind_name(OL_NOTE_STEP), "step") == 0);
    CHECK(ol_note_equal(&d.notes.items[1], &d.notes.items[1]));
    CHECK(!ol_note_equal(&d.notes.items[1], &d.notes.items[2]));
    /* of one finding made twice, the one read from the code is kept */
    ol_diag guessed = {0}, read = {0};
    guessed.guess = "a name's spelling";
    CHECK(ol_diag_supersedes(&read, &guessed));
    CHECK(!ol_diag_supersedes(&guessed, &read));
    CHECK(!ol_diag_supersedes(&read, &read));
    /* the report is written: the notes go with the message */
    ol_diag_slim(&d);
    CHECK(d.message == NULL && d.notes.len == 0 && d.notes.items == NULL);
    ol_diag_note(&d, OL_NOTE_FACT, 1, 2, "again");
    ol_diag_free(&d);
    CHECK(d.notes.len == 0 && d.notes.items == NULL);
}

static void test_text_notes(void)
{
    ol_file_result r;
    evidence_sample_py(&r);
    char *text = emit_to_string(&r, 1, OL_FMT_TEXT);
    const char *want = "pkg/train.py:5:15: OOM201 [warning] `model(...)` runs with autograd on\n"
                       "  |\n"
                       "4 |     for x in loader:\n"
                       "5 |         out = model(x)\n"
                       "  |               ^^^^^^^^\n"
                       "  = help: evaluate under `torch.no_grad()`\n"
                       "  = note: evaluation code: `evaluate()`\n"
                       "     --> pkg/train.py:3:5\n"
                       "    3 | def evaluate(model, loader):\n"
                       "      |     --------\n"
                       "  = note: `run()` calls `evaluate()` with autograd on\n"
                       "     --> pkg/data.py:12:10\n"
                       "  = note: each batch of `loader[1:]` runs the model\n"
                       "     --> pkg/train.py:4:5\n"
                       "    4 |     for x in loader:\n"
                       "      |     ----------------\n"
                       "  = note: the device is chosen here\n"
                       "     --> pkg/config.py:7\n"
                       "  = note: this finding rests on a guess (a name's spelling)\n"
                       "\n"
                       "pkg/train.py:5:9: OOM101 [error] a finding without evidence\n"
                       "  |\n"
                       "4 |     for x in loader:\n"
                       "5 |         out = model(x)\n"
                       "  |         ^^^\n"
                       "\n";
    CHECK(strcmp(text, want) == 0);
    if (strcmp(text, want) != 0)
        fprintf(stderr, "got:\n%s", text);
    free(text);
    /* concise: one line per finding, whatever its evidence */
    text = emit_to_string(&r, 1, OL_FMT_CONCISE);
    CHECK(strcmp(text, "pkg/train.py:5:15: OOM201 `model(...)` runs with autograd on\n"
                       "pkg/train.py:5:9: OOM101 a finding without evidence\n") == 0);
    free(text);
    /* a notebook's note is placed in its cell, numbered as the cell numbers it */
    ol_file_result nb;
    CHECK(evidence_sample_nb(&nb));
    text = emit_to_string(&nb, 1, OL_FMT_TEXT);
    CHECK(strstr(text, "pkg/eval.ipynb:cell 3:2:11: OOM201") != NULL);
    CHECK(strstr(text, "  = note: evaluation code: `evaluate()`\n"
                       "     --> pkg/eval.ipynb:cell 2:2:5\n"
                       "    2 | def evaluate(model, loader):\n"
                       "      |     --------\n") != NULL);
    free(text);
    ol_file_result_free(&nb);
    ol_file_result_free(&r);
}

static const cJSON *json_at(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool json_is(const cJSON *o, const char *key, double v)
{
    const cJSON *x = json_at(o, key);
    return cJSON_IsNumber(x) && x->valuedouble == v;
}

static bool json_str(const cJSON *o, const char *key, const char *s)
{
    const cJSON *x = json_at(o, key);
    return cJSON_IsString(x) && strcmp(x->valuestring, s) == 0;
}

static void test_json_evidence(void)
{
    ol_file_result r[2];
    evidence_sample_py(&r[0]);
    CHECK(evidence_sample_nb(&r[1]));
    char *text = emit_to_string(r, 2, OL_FMT_JSON);
    cJSON *all = cJSON_Parse(text);
    CHECK(cJSON_GetArraySize(all) == 3);
    const cJSON *f = cJSON_GetArrayItem(all, 0);
    const cJSON *ev = json_at(f, "evidence");
    CHECK(cJSON_GetArraySize(ev) == 4);
    const cJSON *e = cJSON_GetArrayItem(ev, 0);
    CHECK(json_str(e, "kind", "fact") && json_str(e, "path", "pkg/train.py") && json_is(e, "line", 3) &&
          json_is(e, "column", 5) && json_is(e, "end_line", 3) && json_is(e, "end_column", 13) &&
          json_str(e, "message", "evaluation code: `evaluate()`") && !json_at(e, "cell"));
    e = cJSON_GetArrayItem(ev, 1);
    CHECK(json_str(e, "kind", "step") && json_str(e, "path", "pkg/data.py") && json_is(e, "line", 12) &&
          json_is(e, "column", 10) && json_is(e, "end_line", 12) && json_is(e, "end_column", 16));
    e = cJSON_GetArrayItem(ev, 2);
    CHECK(json_str(e, "kind", "step") && json_is(e, "line", 4) && json_is(e, "end_line", 5) &&
          json_is(e, "end_column", 23));
    /* a line without columns */
    e = cJSON_GetArrayItem(ev, 3);
    CHECK(json_str(e, "path", "pkg/config.py") && json_is(e, "line", 7) && cJSON_IsNull(json_at(e, "column")) &&
          json_is(e, "end_line", 7) && cJSON_IsNull(json_at(e, "end_column")));
    CHECK(json_str(f, "confidence", "low") && json_str(f, "guessed_from", "a name's spelling"));
    /* every finding has both fields */
    f = cJSON_GetArrayItem(all, 1);
    CHECK(cJSON_IsArray(json_at(f, "evidence")) && cJSON_GetArraySize(json_at(f, "evidence")) == 0);
    CHECK(json_str(f, "confidence", "high") && !json_at(f, "guessed_from"));
    /* a notebook's note names its cell, and its line in the cell */
    f = cJSON_GetArrayItem(all, 2);
    e = cJSON_GetArrayItem(json_at(f, "evidence"), 0);
    CHECK(json_is(f, "cell", 3) && json_is(f, "line", 2));
    CHECK(json_str(e, "path", "pkg/eval.ipynb") && json_is(e, "cell", 2) && json_is(e, "line", 2) &&
          json_is(e, "column", 5));
    cJSON_Delete(all);
    free(text);
    /* JUnit: the failure's text ends with the evidence */
    text = emit_to_string(r, 1, OL_FMT_JUNIT);
    CHECK(strstr(text, "&#10;note: evaluation code: `evaluate()` (pkg/train.py:3:5)"
                       "&#10;note: `run()` calls `evaluate()` with autograd on (pkg/data.py:12:10)"
                       "&#10;note: each batch of `loader[1:]` runs the model (pkg/train.py:4:5)"
                       "&#10;note: the device is chosen here (pkg/config.py:7)"
                       "&#10;note: this finding rests on a guess (a name&apos;s spelling)</failure>") != NULL);
    free(text);
    ol_file_result_free(&r[0]);
    ol_file_result_free(&r[1]);
}

static const cJSON *sarif_region(const cJSON *location)
{
    return json_at(json_at(location, "physicalLocation"), "region");
}

static const cJSON *sarif_artifact(const cJSON *location)
{
    return json_at(json_at(location, "physicalLocation"), "artifactLocation");
}

static const char *sarif_text(const cJSON *o)
{
    const cJSON *t = json_at(json_at(o, "message"), "text");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static void test_sarif_evidence(void)
{
    ol_file_result r[2];
    evidence_sample_py(&r[0]);
    CHECK(evidence_sample_nb(&r[1]));
    char *text = emit_to_string(r, 2, OL_FMT_SARIF);
    cJSON *log = cJSON_Parse(text);
    const cJSON *results = json_at(cJSON_GetArrayItem(json_at(log, "runs"), 0), "results");
    CHECK(cJSON_GetArraySize(results) == 3);
    const cJSON *res = cJSON_GetArrayItem(results, 0);
    /* GitHub shows related locations through links in the message */
    CHECK(strcmp(sarif_text(res), "`model(...)` runs with autograd on (evidence: [evaluation code: `evaluate()`](1); "
                                  "[`run()` calls `evaluate()` with autograd on](2); [each batch of `loader\\[1:\\]` "
                                  "runs the model](3); [the device is chosen here](4))") == 0);
    const cJSON *related = json_at(res, "relatedLocations");
    CHECK(cJSON_GetArraySize(related) == 4);
    for (int i = 0; i < cJSON_GetArraySize(related); i++)
        CHECK(json_is(cJSON_GetArrayItem(related, i), "id", i + 1));
    const cJSON *loc = cJSON_GetArrayItem(related, 0);
    CHECK(json_str(sarif_artifact(loc), "uri", "pkg/train.py") && json_str(sarif_artifact(loc), "uriBaseId", "%SRCROOT%"));
    CHECK(json_is(sarif_region(loc), "startLine", 3) && json_is(sarif_region(loc), "startColumn", 5) &&
          json_is(sarif_region(loc), "endLine", 3) && json_is(sarif_region(loc), "endColumn", 13));
    CHECK(strcmp(sarif_text(loc), "evaluation code: `evaluate()`") == 0);
    /* another file of the run: relative to the same root, whole lines */
    loc = cJSON_GetArrayItem(related, 1);
    CHECK(json_str(sarif_artifact(loc), "uri", "pkg/data.py") && json_str(sarif_artifact(loc), "uriBaseId", "%SRCROOT%"));
    CHECK(json_is(sarif_region(loc), "startLine", 12) && json_is(sarif_region(loc), "endLine", 12) &&
          !json_at(sarif_region(loc), "startColumn"));
    loc = cJSON_GetArrayItem(related, 3);
    CHECK(json_str(sarif_artifact(loc), "uri", "pkg/config.py") && json_is(sarif_region(loc), "startLine", 7));
    /* the steps in order, then the finding */
    const cJSON *flows = json_at(res, "codeFlows");
    CHECK(cJSON_GetArraySize(flows) == 1);
    const cJSON *threads = json_at(cJSON_GetArrayItem(flows, 0), "threadFlows");
    CHECK(cJSON_GetArraySize(threads) == 1);
    const cJSON *steps = json_at(cJSON_GetArrayItem(threads, 0), "locations");
    CHECK(cJSON_GetArraySize(steps) == 3);
    const cJSON *s0 = json_at(cJSON_GetArrayItem(steps, 0), "location");
    const cJSON *s1 = json_at(cJSON_GetArrayItem(steps, 1), "location");
    const cJSON *s2 = json_at(cJSON_GetArrayItem(steps, 2), "location");
    CHECK(json_str(sarif_artifact(s0), "uri", "pkg/data.py") && json_is(sarif_region(s0), "startLine", 12));
    CHECK(json_str(sarif_artifact(s1), "uri", "pkg/train.py") && json_is(sarif_region(s1), "startLine", 4) &&
          strcmp(sarif_text(s1), "each batch of `loader[1:]` runs the model") == 0);
    CHECK(json_is(sarif_region(s2), "startLine", 5) && json_is(sarif_region(s2), "startColumn", 15) &&
          strcmp(sarif_text(s2), "`model(...)` runs with autograd on") == 0);
    const cJSON *props = json_at(res, "properties");
    CHECK(json_str(props, "confidence", "low") && json_str(props, "guessedFrom", "a name's spelling"));
    /* no evidence: no related locations, no flow, no links, high confidence */
    res = cJSON_GetArrayItem(results, 1);
    CHECK(!json_at(res, "relatedLocations") && !json_at(res, "codeFlows"));
    CHECK(strcmp(sarif_text(res), "a finding without evidence") == 0);
    CHECK(json_str(json_at(res, "properties"), "confidence", "high") && !json_at(json_at(res, "properties"), "guessedFrom"));
    /* a notebook's note: whole lines of the .ipynb, its cell and line in its message; facts make no flow */
    res = cJSON_GetArrayItem(results, 2);
    loc = cJSON_GetArrayItem(json_at(res, "relatedLocations"), 0);
    uint32_t def_line = line_of(evidence_nb, "def evaluate");
    CHECK(json_is(sarif_region(loc), "startLine", def_line) && json_is(sarif_region(loc), "endLine", def_line) &&
          !json_at(sarif_region(loc), "startColumn"));
    CHECK(strcmp(sarif_text(loc), "evaluation code: `evaluate()` (cell 2, line 2)") == 0);
    CHECK(!json_at(res, "codeFlows"));
    cJSON_Delete(log);
    free(text);
    ol_file_result_free(&r[0]);
    ol_file_result_free(&r[1]);
}

static void test_lsp_related_information(void)
{
    ol_server s;
    memset(&s, 0, sizeof(s));
    s.enc = OL_ENC_UTF16;
    ol_unit *u = ol_unit_new("file:///w/pkg/train.py", false);
    evidence_sample_py(&u->result);
    ol_docs_put(&s.docs, ol_doc_new(u->uri, "python", 1, evidence_py, strlen(evidence_py)));
    /* the other file is open: its code-point columns become UTF-16 units (the emoji counts two) */
    char *cwd = getcwd(NULL, 0);
    char *data_path = ol_xasprintf("%s/pkg/data.py", cwd ? cwd : "");
    char *data_uri = ol_path_to_uri(data_path);
    ol_buf data = {0};
    for (int i = 1; i < 12; i++)
        ol_buf_puts(&data, "\n");
    ol_buf_puts(&data, "x = '\xF0\x9F\x98\x80'; run(a)\n");
    ol_docs_put(&s.docs, ol_doc_new(data_uri, "python", 1, data.data, data.len));
    const ol_diag *d = &u->result.diags.items[0];
    ol_lsp_pos a = {4, 14}, b = {4, 22};

    /* a client that does not show relatedInformation gets none, and the same message */
    cJSON *j = ol_server_diagnostic(&s, u, d, a, b);
    CHECK(!json_at(j, "relatedInformation"));
    CHECK(json_str(j, "message", "`model(...)` runs with autograd on"));
    CHECK(json_str(json_at(j, "data"), "confidence", "low") && json_str(json_at(j, "data"), "guessedFrom", "a name's spelling"));
    cJSON_Delete(j);

    s.related_information = true;
    j = ol_server_diagnostic(&s, u, d, a, b);
    CHECK(json_str(j, "message", "`model(...)` runs with autograd on"));
    const cJSON *rel = json_at(j, "relatedInformation");
    CHECK(cJSON_GetArraySize(rel) == 4);
    char *text = cJSON_PrintUnformatted(rel);
    char *config_path = ol_xasprintf("%s/pkg/config.py", cwd ? cwd : "");
    char *config_uri = ol_path_to_uri(config_path);
    char *want = ol_xasprintf(
        "[{\"location\":{\"uri\":\"file:///w/pkg/train.py\",\"range\":{\"start\":{\"line\":2,\"character\":4},"
        "\"end\":{\"line\":2,\"character\":12}}},\"message\":\"evaluation code: `evaluate()`\"},"
        "{\"location\":{\"uri\":\"%s\",\"range\":{\"start\":{\"line\":11,\"character\":10},"
        "\"end\":{\"line\":11,\"character\":16}}},\"message\":\"`run()` calls `evaluate()` with autograd on\"},"
        "{\"location\":{\"uri\":\"file:///w/pkg/train.py\",\"range\":{\"start\":{\"line\":3,\"character\":4},"
        "\"end\":{\"line\":4,\"character\":22}}},\"message\":\"each batch of `loader[1:]` runs the model\"},"
        "{\"location\":{\"uri\":\"%s\",\"range\":{\"start\":{\"line\":6,\"character\":0},"
        "\"end\":{\"line\":6,\"character\":0}}},\"message\":\"the device is chosen here\"}]",
        data_uri, config_uri);
    CHECK(strcmp(text, want) == 0);
    if (strcmp(text, want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", text, want);
    free(want);
    free(text);
    cJSON_Delete(j);
    /* closed: code points stand for UTF-16 units */
    ol_docs_remove(&s.docs, data_uri);
    j = ol_server_diagnostic(&s, u, d, a, b);
    const cJSON *range = json_at(json_at(cJSON_GetArrayItem(json_at(j, "relatedInformation"), 1), "location"), "range");
    CHECK(json_is(json_at(range, "start"), "character", 9) && json_is(json_at(range, "end"), "character", 15));
    cJSON_Delete(j);
    /* a finding without evidence or guess: neither field */
    j = ol_server_diagnostic(&s, u, &u->result.diags.items[1], a, b);
    CHECK(!json_at(j, "relatedInformation") && !json_at(j, "data"));
    cJSON_Delete(j);
    free(config_path);
    free(config_uri);
    free(data_path);
    free(data_uri);
    free(cwd);
    ol_buf_free(&data);
    ol_unit_free(u);
    ol_docs_free(&s.docs);
}

/* `oomlint-unit --evidence-sample FORMAT`: the findings above in FORMAT,
 * for tests/sarif_tests.py to validate with the schema and the Multitool. */
static int evidence_sample(const char *format_name)
{
    ol_format format;
    if (!ol_format_parse(format_name, &format)) {
        fprintf(stderr, "oomlint-unit: unknown format '%s'\n", format_name);
        return 2;
    }
    ol_file_result r[2];
    evidence_sample_py(&r[0]);
    if (!evidence_sample_nb(&r[1])) {
        ol_file_result_free(&r[0]);
        return 1;
    }
    ol_emit_options o = {0};
    o.format = format;
    ol_emit(stdout, r, 2, &o);
    ol_file_result_free(&r[0]);
    ol_file_result_free(&r[1]);
    return 0;
}

/* ---- the evaluator answers the same whichever question comes first ---------- */

/* Is n an expression the rules ask the value of? */
static bool valued_expression(const ol_tree *t, ol_nid n)
{
    switch (ol_kind_of(t, n)) {
    case OL_N_call:
    case OL_N_identifier:
    case OL_N_attribute:
    case OL_N_subscript:
    case OL_N_binary_operator:
        return true;
    default:
        return false;
    }
}

/* The file the checks below read, parsed and modelled; false (and a line on
 * stderr) when it cannot be read. */
static bool checked_open(ol_parser *p, const char *path, ol_source *src, ol_tree *tree, ol_model *m)
{
    char *bytes;
    size_t n;
    ol_buf err = {0};
    bool read = ol_read_file(path, (size_t)1 << 24, &bytes, &n) == 0;
    if (!read || !ol_source_init(src, path, bytes, n, &err)) {
        fprintf(stderr, "oomlint-unit: %s: cannot be read%s%s\n", path, err.len ? ": " : "", err.len ? err.data : "");
        if (read)
            ol_source_free(src); /* a failed decode leaves src holding the path and an empty text */
        ol_buf_free(&err);
        return false;
    }
    ol_buf_free(&err);
    ol_parse(p, src, tree);
    ol_model_build(m, tree);
    return true;
}

static void checked_close(ol_source *src, ol_tree *tree, ol_model *m)
{
    ol_model_free(m);
    ol_tree_free(tree);
    ol_source_free(src);
}

/* `oomlint-unit --order-check FILE...` (fixture_tests.py): for every
 * expression of each file, its value asked first in the model (every value
 * forgotten before) must equal its value asked after all the expressions
 * before it in the text. A cut cycle whose provisional values stayed cached
 * made the two differ. Prints each file's count and each difference; exit 1
 * when any differs, 2 when a file cannot be read. */
static int order_check(int count, char **paths)
{
    int status = 0;
    size_t checked = 0, differ = 0;
    ol_grammar g;
    ol_parser p;
    ol_grammar_init(&g);
    ol_parser_init(&p, &g);
    for (int k = 0; k < count; k++) {
        const char *path = paths[k];
        ol_source src;
        ol_tree tree;
        ol_model m;
        if (!checked_open(&p, path, &src, &tree, &m)) {
            status = 2;
            continue;
        }
        size_t nodes = tree.nodes.len, here = 0;
        ol_val *first = ol_xcalloc(nodes + 1, sizeof(ol_val));
        for (ol_nid i = 0; i < nodes; i++) {
            if (!valued_expression(&tree, i))
                continue;
            ol_model_forget(&m);
            first[i] = ol_eval(&m, i);
        }
        ol_model_forget(&m);
        for (ol_nid i = 0; i < nodes; i++) {
            if (!valued_expression(&tree, i))
                continue;
            ol_val v = ol_eval(&m, i);
            checked++;
            if (v.kind == first[i].kind && v.flags == first[i].flags && v.ref == first[i].ref && v.info == first[i].info)
                continue;
            here++;
            char *text = ol_node_str_short(&tree, i);
            ol_pos at = ol_source_pos(&src, ol_node_at(&tree, i)->start);
            printf("%s:%u:%u: `%s` is kind %d flags %#x asked first, kind %d flags %#x asked in order\n", path,
                   at.line, at.col, text, first[i].kind, first[i].flags, v.kind, v.flags);
            free(text);
        }
        differ += here;
        free(first);
        checked_close(&src, &tree, &m);
    }
    ol_parser_free(&p);
    ol_grammar_free(&g);
    printf("%zu of %zu values differ\n", differ, checked);
    return status ? status : differ ? 1 : 0;
}

/* `oomlint-unit --reach-check FILE...` (fixture_tests.py): ol_value_reaches
 * keeps one walk per `into` and answers every value from it; for every call
 * of each function against each of the function's return values and the
 * operands of its `backward()` calls, that answer must equal a walk made for
 * the one value (ol_value_reaches_walk). Prints the count and each
 * difference; exit 1 when any differs, 2 when a file cannot be read. */
static int reach_check(int count, char **paths)
{
    int status = 0;
    size_t checked = 0, reached = 0, differ = 0;
    ol_grammar g;
    ol_parser p;
    ol_grammar_init(&g);
    ol_parser_init(&p, &g);
    for (int k = 0; k < count; k++) {
        const char *path = paths[k];
        ol_source src;
        ol_tree tree;
        ol_model m;
        if (!checked_open(&p, path, &src, &tree, &m)) {
            status = 2;
            continue;
        }
        /* (value, into) pairs: a call and a return value or backward operand of its function */
        OL_VEC(ol_nid) pairs = {0};
        for (size_t i = 0; i < m.calls.len; i++) {
            ol_nid call = m.calls.items[i].node;
            uint32_t fn = ol_function_of(&m, call);
            if (fn != OL_NO_INDEX)
                for (size_t r = 0; r < m.functions.items[fn].returns.len; r++) {
                    ol_vec_push(&pairs, call);
                    ol_vec_push(&pairs, m.functions.items[fn].returns.items[r]);
                }
            for (size_t b = 0; b < m.calls.len; b++) {
                const ol_call *c = &m.calls.items[b];
                if (c->name != m.names.backward || c->receiver == OL_NONE || ol_function_of(&m, c->node) != fn)
                    continue;
                ol_vec_push(&pairs, call);
                ol_vec_push(&pairs, c->receiver);
            }
        }
        bool *alone = ol_xcalloc(pairs.len / 2 + 1, sizeof(bool));
        for (size_t i = 0; i + 1 < pairs.len; i += 2)
            alone[i / 2] = ol_value_reaches_walk(&m, pairs.items[i], pairs.items[i + 1]);
        for (size_t i = 0; i + 1 < pairs.len; i += 2) {
            bool kept = ol_value_reaches(&m, pairs.items[i], pairs.items[i + 1]);
            checked++;
            reached += kept;
            if (kept == alone[i / 2])
                continue;
            differ++;
            char *a = ol_node_str_short(&tree, pairs.items[i]), *b = ol_node_str_short(&tree, pairs.items[i + 1]);
            ol_pos at = ol_source_pos(&src, ol_node_at(&tree, pairs.items[i])->start);
            printf("%s:%u:%u: `%s` reaches `%s`: %s alone, %s from the kept walk\n", path, at.line, at.col, a, b,
                   alone[i / 2] ? "yes" : "no", kept ? "yes" : "no");
            free(a);
            free(b);
        }
        free(alone);
        ol_vec_free(&pairs);
        checked_close(&src, &tree, &m);
    }
    ol_parser_free(&p);
    ol_grammar_free(&g);
    printf("%zu of %zu answers differ (%zu reach)\n", differ, checked, reached);
    return status ? status : differ ? 1 : 0;
}

/* ---- oomlint explain's readers (explain.h) ---------------------------------- */

static void test_explain_sizes(void)
{
    int64_t b;
    size_t used;
    CHECK(ol_oom_parse_size("20.00 MiB.", 10, &b, &used) && b == 20 * 1048576 && used == 9);
    CHECK(ol_oom_parse_size("0 bytes is free", 15, &b, &used) && b == 0 && used == 7);
    CHECK(ol_oom_parse_size("1.52 GB,", 8, &b, &used) && b == llround(1.52 * 1073741824.0));
    CHECK(ol_oom_parse_size("3.15 GiB", 8, &b, &used) && b == llround(3.15 * 1073741824.0));
    CHECK(ol_oom_parse_size("17179869184.00 GiB", 18, &b, &used) && b > ((int64_t)1 << 62));
    CHECK(!ol_oom_parse_size("12 parrots", 10, &b, &used));
    CHECK(!ol_oom_parse_size("GiB", 3, &b, &used));
    CHECK(!ol_oom_parse_size("5 Gbit", 6, &b, &used));
    ol_buf s = {0};
    ol_oom_format_size(&s, 1073741824);
    CHECK(s.data && strcmp(s.data, "1.00 GiB") == 0);
    ol_buf_clear(&s);
    ol_oom_format_size(&s, 512);
    CHECK(s.data && strcmp(s.data, "512 bytes") == 0);
    ol_buf_free(&s);
}

static void test_explain_message_forms(void)
{
    ol_oom_kind k;
    ol_oom_figures f;
    const char *v2 = "CUDA out of memory. Tried to allocate 1.16 GiB. GPU 3 has a total capacity of 31.36 GiB of which "
                     "471.69 MiB is free. Including non-PyTorch memory, this process has 16.63 GiB memory in use. "
                     "Process 19239 has 14.26 GiB memory in use. Of the allocated memory 15.03 GiB is allocated by "
                     "PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.";
    CHECK(ol_oom_parse_message(v2, strlen(v2), &k, &f) && k == OL_OOM_CUDA);
    CHECK(f.device == 3 && f.requested == llround(1.16 * 1073741824.0));
    CHECK(f.total == llround(31.36 * 1073741824.0) && f.free == llround(471.69 * 1048576.0));
    CHECK(f.this_process == llround(16.63 * 1073741824.0));
    CHECK(f.nprocs == 1 && f.procs[0].pid == 19239 && f.procs[0].bytes == llround(14.26 * 1073741824.0));
    CHECK(f.allocated == llround(15.03 * 1073741824.0) && f.reserved_unallocated == 1073741824);
    CHECK(f.reserved == f.allocated + f.reserved_unallocated);
    const char *v1 = "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB "
                     "already allocated; 3.12 MiB free; 2.00 GiB allowed; 14.71 GiB reserved in total by PyTorch)";
    CHECK(ol_oom_parse_message(v1, strlen(v1), &k, &f) && k == OL_OOM_CUDA && f.device == 0);
    CHECK(f.allocated == llround(14.56 * 1073741824.0) && f.reserved == llround(14.71 * 1073741824.0));
    CHECK(f.free == llround(3.12 * 1048576.0) && f.allowed == 2 * 1073741824LL);
    CHECK(f.reserved_unallocated == f.reserved - f.allocated && f.this_process == OL_BYTES_UNKNOWN);
    const char *mps = "MPS backend out of memory (MPS allocated: 18.04 GB, other allocations: 5.21 MB, max allowed: "
                      "18.13 GB). Tried to allocate 256 bytes on shared pool.";
    CHECK(ol_oom_parse_message(mps, strlen(mps), &k, &f) && k == OL_OOM_MPS && f.requested == 256 && f.shared_pool);
    CHECK(f.other_allocations == llround(5.21 * 1048576.0) && f.allowed == llround(18.13 * 1073741824.0));
    const char *lib = "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`";
    CHECK(ol_oom_parse_message(lib, strlen(lib), &k, &f) && k == OL_OOM_CUBLAS && f.requested == OL_BYTES_UNKNOWN);
    const char *none = "Epoch 3: loss 0.25, 12.00 GiB allocated";
    CHECK(!ol_oom_parse_message(none, strlen(none), &k, &f));
}

/* The log read whole and a byte at a time: the same events. */
static void test_explain_log_stream(void)
{
    const char *text = "\x1b[31m[rank1]: Traceback (most recent call last):\x1b[0m\r\n"
                       "[rank0]: Traceback (most recent call last):\n"
                       "[rank1]:   File \"/w/train.py\", line 9, in step\n"
                       "[rank0]:   File \"/w/train.py\", line 12, in step\n"
                       "[rank1]:     loss.backward()\n"
                       "[rank0]:     out = model(x)\n"
                       " 12%|#  | 120/1000 [00:10<01:20, 11.0it/s]\r 13%|#  | 130/1000 [00:11<01:19, 11.0it/s]\r"
                       "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a "
                       "total capacity of 79.15 GiB of which 1.00 GiB is free.\n"
                       "[rank0]: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
                       "capacity; 14.56 GiB already allocated; 3.12 MiB free; 14.71 GiB reserved in total by PyTorch)";
    ol_oom_log whole, bytes;
    ol_oom_log_init(&whole);
    ol_oom_log_feed(&whole, text, strlen(text));
    ol_oom_log_finish(&whole);
    ol_oom_log_init(&bytes);
    for (size_t i = 0; text[i]; i++)
        ol_oom_log_feed(&bytes, text + i, 1);
    ol_oom_log_finish(&bytes);
    CHECK(whole.events.len == 2 && bytes.events.len == 2);
    for (size_t i = 0; i < whole.events.len && i < bytes.events.len; i++) {
        const ol_oom_event *a = &whole.events.items[i], *b = &bytes.events.items[i];
        CHECK(strcmp(a->message, b->message) == 0 && a->log_line == b->log_line && a->frames.len == b->frames.len);
        CHECK(strcmp(a->rank, b->rank) == 0 && a->fig.requested == b->fig.requested);
    }
    if (whole.events.len == 2) {
        const ol_oom_event *r1 = &whole.events.items[0], *r0 = &whole.events.items[1];
        CHECK(strcmp(r1->rank, "rank1") == 0 && strcmp(r1->exc_type, "torch.OutOfMemoryError") == 0);
        CHECK(r1->frames.len == 1 && r1->frames.items[0].line == 9 && strcmp(r1->frames.items[0].code, "loss.backward()") == 0);
        CHECK(r1->step == 130 && r1->steps_total == 1000 && r1->log_line == 7);
        CHECK(strcmp(r0->rank, "rank0") == 0 && r0->frames.len == 1 && r0->frames.items[0].line == 12);
        CHECK(strcmp(r0->exc_type, "RuntimeError") == 0 && r0->fig.device == 0);
    }
    ol_oom_log_free(&whole);
    ol_oom_log_free(&bytes);
}

static void test_explain_user_files(void)
{
    CHECK(ol_oom_user_file("/home/u/proj/train.py"));
    CHECK(ol_oom_user_file("train.py"));
    CHECK(!ol_oom_user_file("/opt/conda/lib/python3.11/site-packages/torch/_tensor.py"));
    CHECK(!ol_oom_user_file("/usr/lib/python3/dist-packages/transformers/trainer.py"));
    CHECK(!ol_oom_user_file("/usr/lib/python3.11/runpy.py"));
    CHECK(!ol_oom_user_file("/src/pytorch/torch/nn/modules/module.py"));
    CHECK(!ol_oom_user_file("<frozen runpy>"));
    CHECK(ol_oom_user_file("<ipython-input-3-5e2f>") && ol_oom_notebook_cell("<ipython-input-3-5e2f>"));
    CHECK(ol_oom_user_file("/home/u/torchvision_exp/torch_utils.py"));
}

static bool pickle_fails(const char *bytes, size_t n, const char *why)
{
    ol_pickle p;
    ol_buf err = {0};
    bool ok = ol_pickle_read(&p, bytes, n, &err);
    bool matched = !ok && err.data && strstr(err.data, why) != NULL;
    if (!matched)
        fprintf(stderr, "  pickle: %s\n", err.data ? err.data : "(read)");
    if (ok)
        ol_pickle_free(&p);
    ol_buf_free(&err);
    return matched;
}

static void test_explain_pickle(void)
{
    /* pickle.dumps({"segments": [{"size": 300, "ok": True}], "n": -2, "f": 1.5, "t": (1, None)}, protocol=2) */
    static const char p2[] = "\x80\x02}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02}q\x03(X\x04\x00\x00\x00sizeq\x04M,\x01X"
                             "\x02\x00\x00\x00okq\x05\x88uaX\x01\x00\x00\x00nq\x06J\xfe\xff\xff\xffX\x01\x00\x00\x00"
                             "fq\x07G?\xf8\x00\x00\x00\x00\x00\x00X\x01\x00\x00\x00tq\x08K\x01N\x86q\tu.";
    ol_pickle p;
    ol_buf err = {0};
    CHECK(ol_pickle_read(&p, p2, sizeof(p2) - 1, &err));
    if (p.root) {
        const ol_pval *segs = ol_pval_get(p.root, "segments");
        CHECK(segs && segs->kind == OL_PV_LIST && segs->len == 1);
        if (segs && segs->len == 1)
            CHECK(ol_pval_int(ol_pval_get(segs->u.items[0], "size"), 0) == 300);
        CHECK(ol_pval_int(ol_pval_get(p.root, "n"), 0) == -2);
        const ol_pval *f = ol_pval_get(p.root, "f");
        CHECK(f && f->kind == OL_PV_FLOAT && f->u.f == 1.5);
        const ol_pval *t = ol_pval_get(p.root, "t");
        CHECK(t && t->kind == OL_PV_TUPLE && t->len == 2 && t->u.items[1]->kind == OL_PV_NONE);
        ol_pickle_free(&p);
    }
    ol_buf_free(&err);
    /* LONG1 of 5 bytes: an address above 4 GiB (pickle.dumps([1 << 32, -1], protocol=2)) */
    static const char big[] = "\x80\x02]q\x00(\x8a\x05\x00\x00\x00\x00\x01J\xff\xff\xff\xff"
                             "e.";
    CHECK(ol_pickle_read(&p, big, sizeof(big) - 1, &err));
    if (p.root && p.root->len == 2) {
        CHECK(p.root->u.items[0]->u.i == ((int64_t)1 << 32) && p.root->u.items[1]->u.i == -1);
        ol_pickle_free(&p);
    }
    ol_buf_free(&err);
    /* an object: GLOBAL and REDUCE are refused, by name */
    static const char obj[] = "\x80\x02" "c__builtin__\nset\nq\x00]q\x01\x85q\x02Rq\x03.";
    static const char neg[] = "\x80\x02\x8a\x02\x00\x80.";
    CHECK(ol_pickle_read(&p, neg, sizeof(neg) - 1, &err));
    if (p.root) {
        CHECK(p.root->kind == OL_PV_INT && p.root->u.i == -32768);
        ol_pickle_free(&p);
    }
    ol_buf_free(&err);
    CHECK(pickle_fails(obj, sizeof(obj) - 1, "GLOBAL"));
    /* a list that holds itself: l = []; l.append(l) */
    static const char rec[] = "\x80\x02]q\x00h\x00" "a.";
    CHECK(pickle_fails(rec, sizeof(rec) - 1, "recursive"));
    /* nesting past the bound, without the reader recursing */
    ol_buf deep = {0};
    ol_buf_puts(&deep, "\x80\x04");
    for (int i = 0; i < 5000; i++)
        ol_buf_putc(&deep, ']');
    for (int i = 0; i < 4999; i++)
        ol_buf_putc(&deep, 'a');
    ol_buf_putc(&deep, '.');
    CHECK(pickle_fails(deep.data, deep.len, "nested deeper"));
    ol_buf_free(&deep);
    static const char cut[] = "\x80\x02]q\x00(K\x01K\x02";
    CHECK(pickle_fails(cut, sizeof(cut) - 1, "ends"));
    static const char unknown[] = "\x80\x02\xff.";
    CHECK(pickle_fails(unknown, sizeof(unknown) - 1, "unknown pickle opcode 0xff"));
    CHECK(pickle_fails("PK\x03\x04", 4, "zip archive"));
    static const char unset[] = "\x80\x02h\x07.";
    CHECK(pickle_fails(unset, sizeof(unset) - 1, "never stored"));
    static const char two[] = "\x80\x02K\x01K\x02.";
    CHECK(pickle_fails(two, sizeof(two) - 1, "more than one value"));
}

static void test_explain_snapshot(void)
{
    /* {"segments": [{"device": 0, "total_size": 100, "blocks": [{"size": 60, "state": "active_allocated",
     *   "frames": [{"filename": "/u/a.py", "line": 7, "name": "f"}]}, {"size": 40, "state": "inactive"}]}]}
     * written by pickle.dumps(..., protocol=4) */
    static const char snap[] =
        "\x80\x04\x95\xb3\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x08segments\x94]\x94}\x94(\x8c\x06"
        "device\x94K\x00\x8c\ntotal_size\x94Kd\x8c\x06"
        "blocks\x94]\x94(}\x94(\x8c\x04size\x94K<\x8c\x05state\x94\x8c\x10"
        "active_allocated\x94\x8c\x06"
        "frames\x94]\x94}\x94(\x8c\x08"
        "filename\x94\x8c\x07/u/a.py\x94\x8c\x04line\x94K\x07\x8c\x04name\x94\x8c\x01"
        "f\x94uau}\x94(h\tK(h\n\x8c\x08inactive\x94ueuas.";
    ol_pickle p;
    ol_buf err = {0};
    bool read = ol_pickle_read(&p, snap, sizeof(snap) - 1, &err);
    CHECK(read);
    if (!read) {
        fprintf(stderr, "  %s\n", err.data ? err.data : "");
        ol_buf_free(&err);
        return;
    }
    ol_mem_snapshot s;
    CHECK(ol_mem_snapshot_read(&s, p.root, -1, &err));
    CHECK(s.reserved == 100 && s.alive == 60 && s.inactive == 40 && s.largest_inactive == 40);
    CHECK(s.lines.len == 1 && s.lines.items[0].line == 7 && strcmp(s.lines.items[0].file, "/u/a.py") == 0);
    CHECK(s.lines.len == 1 && s.lines.items[0].bytes == 60 && s.lines.items[0].leaf);
    ol_mem_snapshot_free(&s);
    ol_pickle_free(&p);
    ol_buf_free(&err);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--order-check") == 0)
        return order_check(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "--reach-check") == 0)
        return reach_check(argc - 2, argv + 2);
    if (argc == 3 && strcmp(argv[1], "--evidence-sample") == 0)
        return evidence_sample(argv[2]);
    static const test_case tests[] = {
        T(test_probe_stats),
        T(test_probe_svg),
        T(test_probe_svg_stacked),
        T(test_probe_sizes),
        T(test_probe_nvml_absent_or_usable),
        T(test_utf8_plain),
        T(test_bom_and_crlf),
        T(test_latin1_declared),
        T(test_invalid_utf8_reports_where),
        T(test_utf8_validate_every_offset),
        T(test_string_helpers),
        T(test_nul_and_unknown_encoding),
        T(test_coding_only_on_first_two_lines),
        T(test_utf16_columns),
        T(test_tree_shape),
        T(test_syntax_errors_collected),
        T(test_deep_nesting_does_not_crash),
        T(test_comment_runs),
        T(test_imports_resolve),
        T(test_import_dotted_binds_first_name),
        T(test_values_follow_assignments),
        T(test_batch_index_variables),
        T(test_reaching_defs_respect_order),
        T(test_backward_marks_unknown_values),
        T(test_params_from_call_sites),
        T(test_self_attributes_across_methods),
        T(test_path_shapes),
        T(test_loader_loops_are_data_loops),
        T(test_contexts),
        T(test_grad_setters_spelled),
        T(test_model_lookups),
        T(test_first_time_blocks),
        T(test_numpy_shows_no_graph),
        T(test_suppressions),
        T(test_disable_file_only_in_leading_comments),
        T(test_suppression_spans_and_use),
        T(test_format_and_severity_names),
        T(test_selection),
        T(test_name_tokens),
        T(test_fix_overlap_rejected),
        T(test_fix_identical_edits_applied_once),
        T(test_fix_one_per_statement),
        T(test_fix_round_sets_aside_a_breaking_fix),
        T(test_fix_round_keeps_to_the_python_floor),
        T(test_fix_fits_quotes_in_fstrings),
        T(test_python_floor_from_requires_python),
        T(test_syntax_newer_than_the_floor),
        T(test_notebook_cells),
        T(test_notebook_magics_only_at_logical_line_start),
        T(test_dangling_assignment_is_a_syntax_error),
        T(test_bad_notebooks),
        T(test_toml_values),
        T(test_toml_errors),
        T(test_glob_match),
        T(test_wildmatch),
        T(test_selection_layers),
        T(test_config_parse),
        T(test_info_findings_are_notices),
        T(test_parse_arena_blocks),
        T(test_parse_arena_reuse),
        T(test_parse_arena_scopes),
        T(test_parse_arena_threads),
        T(test_flatten_matches_cursor_walk),
        T(test_unbalanced_parse),
        T(test_syntax_error_cascades),
        T(test_lsp_positions),
        T(test_lsp_incremental_changes),
        T(test_lsp_framing),
        T(test_incremental_parse_matches_fresh),
        T(test_project_resolution),
        T(test_project_may_define_files),
        T(test_words_scan),
        T(test_function_summaries),
        T(test_host_params),
        T(test_lower_bound),
        T(test_torch_floor),
        T(test_find_ci),
        T(test_edit_distance),
        T(test_sigwatch_native),
        T(test_sigwatch_self_pipe),
        T(test_pdeath_pipe),
        T(test_fallocate_grows),
        T(test_note_api),
        T(test_text_notes),
        T(test_json_evidence),
        T(test_sarif_evidence),
        T(test_lsp_related_information),
        T(test_explain_sizes),
        T(test_explain_message_forms),
        T(test_explain_log_stream),
        T(test_explain_user_files),
        T(test_explain_pickle),
        T(test_explain_snapshot),
    };
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        current_test = tests[i].name;
        int before = checks_failed;
        tests[i].fn();
        if (checks_failed == before) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "unit: %s failed\n", tests[i].name);
        }
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
