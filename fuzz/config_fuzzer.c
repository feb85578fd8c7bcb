/*
 * config_fuzzer.c - libFuzzer target over the configuration reader.
 *
 * Input bytes are a pyproject.toml: TOML parsing (toml.c, on
 * tree-sitter-toml), the [tool.oomlint] table and its keys (config.c), rule
 * selection in layers with a fixed command line on top (select.c), and every
 * exclude and per-file-ignores pattern matched against a few paths
 * (ol_glob_match: braces, `**`, character classes). Anything the sanitizers
 * report, a crash or a hang is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "rule.h"
#include "select.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[][2] = {
    {"train.py", "/p/train.py"},
    {"src/gen/model.py", "/p/src/gen/model.py"},
    {"tests/test_a.py", "/p/tests/test_a.py"},
    {"notebooks/deep/x.ipynb", "/p/notebooks/deep/x.ipynb"},
    {NULL, "/elsewhere/a/b.py"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ol_config c;
    bool found = false;
    ol_buf err = {0};
    bool ok = ol_config_parse(&c, "pyproject.toml", (const char *)data, size, &found, &err);
    ol_buf_free(&err);
    if (ok && found) {
        bool *enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
        ol_selection cli = {0};
        ol_selectors_add(&cli.ignore, "OOM7");
        const ol_selection *layers[] = {&c.selection, &cli};
        ol_selection_resolve_layers(layers, 2, enabled);
        for (size_t p = 0; p < OL_ARRAY_LEN(paths); p++) {
            for (size_t i = 0; i < c.exclude.len; i++)
                (void)ol_glob_match(c.exclude.items[i], paths[p][0], paths[p][1], true);
            for (size_t i = 0; i < c.per_file_ignores.len; i++)
                if (ol_glob_match(c.per_file_ignores.items[i].pattern, paths[p][0], paths[p][1], false))
                    ol_selection_apply_ignores(&c.per_file_ignores.items[i].selectors, enabled);
        }
        ol_selection_free(&cli);
        free(enabled);
    }
    ol_config_free(&c);
    return 0;
}
