/*
 * train.c - the training run for profile-guided optimisation of the parser.
 *
 * The Makefile builds the tree-sitter runtime and the Python grammar once
 * with -fprofile-generate, links them with oomlint's own parse path
 * (syntax.c: the arena, parse with a time budget, the cursor walk that
 * flattens the tree) into this program, and runs it over the Python files
 * in the repository (fixtures, examples, tests, scripts: offline and
 * deterministic). The counts it leaves behind tell the compiler which
 * branches of the runtime and the grammar are hot when the runtime and the
 * grammar are compiled again for oomlint. Only those two are profiled; our
 * own code changes too often for a stored profile to stay true.
 *
 *     train FILE...      (one path per argument; unreadable files are skipped)
 */
#include <stdio.h>
#include <stdlib.h>

#include "source.h"
#include "syntax.h"
#include "util.h"

int main(int argc, char **argv)
{
    ol_grammar g;
    if (!ol_grammar_init(&g)) {
        fputs("train: the grammar does not load\n", stderr);
        return 2;
    }
    ol_parser p;
    ol_parser_init(&p, &g);
    size_t files = 0, bytes = 0, nodes = 0;
    /* twice over: the second pass sees a warm arena, as most files do */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 1; i < argc; i++) {
            char *text = NULL;
            size_t len = 0;
            if (ol_read_file(argv[i], OL_MAX_SOURCE_BYTES, &text, &len) != 0)
                continue;
            ol_source src;
            ol_buf err = {0};
            bool ok = ol_source_init(&src, argv[i], text, len, &err);
            ol_buf_free(&err);
            if (ok) {
                ol_tree t;
                ol_parse(&p, &src, &t);
                files++;
                bytes += src.len;
                nodes += t.nodes.len;
                ol_tree_free(&t);
            }
            ol_source_free(&src);
        }
    }
    ol_parser_free(&p);
    ol_grammar_free(&g);
    printf("train: parsed %zu files, %zu bytes, %zu nodes\n", files, bytes, nodes);
    return files ? 0 : 1;
}
