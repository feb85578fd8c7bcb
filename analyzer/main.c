/*
 * main.c - oomlint's entry point: parse the command line, discover inputs,
 * lint them in parallel, emit, and choose the exit status
 * (0 no findings, 1 findings, 2 usage error or nothing could be linted).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "discover.h"
#include "emit.h"
#include "fix.h"
#include "lint.h"
#include "rule.h"

static bool want_color(ol_color c)
{
    if (c == OL_COLOR_ALWAYS)
        return true;
    if (c == OL_COLOR_NEVER)
        return false;
    const char *no_color = getenv("NO_COLOR");
    if (no_color && *no_color)
        return false;
    const char *force = getenv("FORCE_COLOR");
    if (force && *force)
        return true;
    const char *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

static int run_lint(ol_cli *cli)
{
    ol_grammar grammar;
    if (!ol_grammar_init(&grammar)) {
        fputs("oomlint: error: the bundled Python grammar is not compatible with the tree-sitter runtime\n", stderr);
        return 2;
    }
    /* --output-file: everything that would go to stdout goes there; opened
     * first, so a bad path fails before any file is fixed */
    FILE *out = stdout;
    if (cli->output_file) {
        out = fopen(cli->output_file, "w");
        if (!out) {
            fprintf(stderr, "oomlint: error: cannot write '%s': %s\n", cli->output_file, strerror(errno));
            ol_grammar_free(&grammar);
            return 2;
        }
    }
    ol_settings settings;
    settings.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve(&cli->selection, settings.enabled);

    ol_input_vec inputs = {0};
    ol_discover_options dopts = {&cli->exclude, cli->force_exclude, cli->stdin_filename};
    ol_discover((const char *const *)cli->paths.items, cli->paths.len, &dopts, &inputs);

    char *stdin_bytes = NULL;
    size_t stdin_len = 0;
    for (size_t i = 0; i < inputs.len; i++) {
        if (!inputs.items[i].from_stdin)
            continue;
        int err = ol_read_stream(STDIN_FILENO, OL_MAX_SOURCE_BYTES, &stdin_bytes, &stdin_len);
        if (err) {
            inputs.items[i].error = err;
            stdin_bytes = NULL;
            stdin_len = 0;
        }
        break;
    }

    ol_run_options run = {OL_FIX_NONE, cli->unsafe_fixes};
    if (cli->diff)
        run.fix_mode = OL_FIX_DIFF;
    else if (cli->fix)
        run.fix_mode = OL_FIX_WRITE;
    ol_file_result *results = ol_xcalloc(inputs.len ? inputs.len : 1, sizeof(ol_file_result));
    ol_lint_all(&grammar, &settings, &run, inputs.items, inputs.len, stdin_bytes, stdin_len, results, cli->threads);

    size_t findings = 0, analyzed = 0, fixed = 0, fixed_files = 0;
    bool stdin_fixed_output = false;
    for (size_t i = 0; i < inputs.len; i++) {
        findings += results[i].diags.len;
        if (results[i].read_ok)
            analyzed++;
        fixed += results[i].fixed;
        if (results[i].fixed)
            fixed_files++;
        if (results[i].fix_error)
            fprintf(stderr, "oomlint: error: %s: %s\n", results[i].path, results[i].fix_error);
        if (results[i].fix_output)
            stdin_fixed_output = true;
    }
    bool color = cli->output_file ? cli->color == OL_COLOR_ALWAYS : want_color(cli->color);
    ol_emit_options eo = {cli->format, color, cli->quiet, cli->statistics, cli->unsafe_fixes};
    int status = findings > 0 ? 1 : 0;
    if (cli->diff) {
        /* the diffs are the output; the count goes to stderr */
        for (size_t i = 0; i < inputs.len; i++)
            if (results[i].fix_diff)
                fputs(results[i].fix_diff, out);
        if (!cli->quiet)
            fprintf(stderr, "%s %zu finding%s in %zu file%s.\n", fixed ? "Would fix" : "No fixes for", fixed,
                    fixed == 1 ? "" : "s", fixed_files, fixed_files == 1 ? "" : "s");
        status = fixed > 0 ? 1 : 0;
    } else if (stdin_fixed_output) {
        /* `oomlint --fix -`: the fixed code on stdout, what is left on stderr */
        for (size_t i = 0; i < inputs.len; i++)
            if (results[i].fix_output)
                fwrite(results[i].fix_output, 1, results[i].fix_output_len, out);
        eo.color = false;
        eo.quiet = true;
        ol_emit_text(stderr, results, inputs.len, &eo);
    } else {
        switch (cli->format) {
        case OL_FMT_JSON:
            ol_emit_json(out, results, inputs.len, &eo);
            break;
        case OL_FMT_SARIF:
            ol_emit_sarif(out, results, inputs.len, &eo);
            break;
        case OL_FMT_GITHUB:
            ol_emit_github(out, results, inputs.len, &eo);
            break;
        case OL_FMT_TEXT:
            ol_emit_text(out, results, inputs.len, &eo);
            break;
        }
        if (cli->fix && fixed > 0 && !cli->quiet && cli->format == OL_FMT_TEXT)
            fprintf(out, "Fixed %zu finding%s in %zu file%s.\n", fixed, fixed == 1 ? "" : "s", fixed_files,
                    fixed_files == 1 ? "" : "s");
    }
    fflush(stdout);
    bool write_failed = out != stdout && fclose(out) != 0;
    if (write_failed)
        fprintf(stderr, "oomlint: error: cannot write '%s': %s\n", cli->output_file, strerror(errno));

    if (analyzed == 0 && !cli->diff) {
        if (inputs.len == 0)
            fputs("oomlint: error: no Python files or notebooks found in the given paths\n", stderr);
        status = 2;
    } else if (cli->exit_zero) {
        status = 0;
    }
    if (write_failed)
        status = 2;

    for (size_t i = 0; i < inputs.len; i++)
        ol_file_result_free(&results[i]);
    free(results);
    free(stdin_bytes);
    ol_input_vec_free(&inputs);
    free(settings.enabled);
    ol_grammar_free(&grammar);
    return status;
}

int main(int argc, char **argv)
{
    ol_cli cli;
    ol_buf err = {0};
    if (!ol_cli_parse(&cli, argc, argv, &err)) {
        fprintf(stderr, "oomlint: error: %s\nRun 'oomlint --help' for usage.\n", err.data ? err.data : "bad usage");
        ol_buf_free(&err);
        ol_cli_free(&cli);
        return 2;
    }
    ol_buf_free(&err);
    int status = 0;
    switch (cli.command) {
    case OL_CMD_HELP:
        ol_cli_usage(stdout);
        break;
    case OL_CMD_VERSION:
        printf("oomlint %s\n", OL_VERSION);
        break;
    case OL_CMD_RULES:
        status = ol_cmd_rules(&cli, stdout);
        break;
    case OL_CMD_RULE:
        status = ol_cmd_rule(&cli, stdout, stderr);
        break;
    case OL_CMD_LINT:
        status = run_lint(&cli);
        break;
    }
    ol_cli_free(&cli);
    return status;
}
