/*
 * main.c - oomlint's entry point: parse the command line, find the
 * configuration, discover inputs, lint them in parallel, emit, and choose
 * the exit status
 * (0 no findings, 1 findings, 2 usage error or nothing could be linted).
 *
 * A lint run happens under a supervisor (supervise.h): run_lint executes in
 * a child process whose report the parent passes on only once the child has
 * finished, and a file the child crashed on (or ran out of memory or time
 * on) is set aside with an OOM001 finding while the run is redone for the
 * rest. So no single file can take the report down with it. Standard input
 * is read by the supervisor before forking and handed to run_lint in the
 * guard, so a second child sees it too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "discover.h"
#include "emit.h"
#include "fix.h"
#include "lint.h"
#include "rule.h"
#include "supervise.h"

static bool want_color(ol_color c, const ol_guard *guard)
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
    /* under the supervisor stdout is a pipe to it; it knows the real one */
    bool tty = guard && guard->shared ? guard->stdout_tty : isatty(STDOUT_FILENO);
    return tty && !(term && strcmp(term, "dumb") == 0);
}

static void config_options(const ol_cli *cli, ol_config_options *o)
{
    o->isolated = cli->isolated;
    o->config_path = cli->config_path;
    o->cli = &cli->selection;
    o->cli_exclude = &cli->exclude;
    o->stdin_filename = cli->stdin_filename;
}

static int config_failed(ol_resolver *r)
{
    fprintf(stderr, "oomlint: error: %s\n", r->error.data ? r->error.data : "bad configuration");
    ol_resolver_free(r);
    return 2;
}

/* --show-settings: what each named path would be linted with. */
static int run_show_settings(const ol_cli *cli)
{
    ol_config_options copts;
    config_options(cli, &copts);
    ol_resolver resolver;
    if (!ol_resolver_init(&resolver, &copts))
        return config_failed(&resolver);
    ol_buf out = {0};
    for (size_t i = 0; i < cli->paths.len; i++) {
        ol_input in = {0};
        in.from_stdin = strcmp(cli->paths.items[i], "-") == 0;
        in.path = in.from_stdin && cli->stdin_filename ? cli->stdin_filename : cli->paths.items[i];
        if (i > 0)
            ol_buf_putc(&out, '\n');
        if (!ol_resolver_show(&resolver, &in, &out)) {
            ol_buf_free(&out);
            return config_failed(&resolver);
        }
    }
    fputs(out.data ? out.data : "", stdout);
    ol_buf_free(&out);
    ol_resolver_free(&resolver);
    return 0;
}

static void print_timings(const ol_timings *t, uint64_t wall_ns, int threads)
{
    double total = (double)(t->read_ns + t->parse_ns + t->model_ns + t->rules_ns + t->filter_ns + t->fix_ns);
    if (total <= 0)
        total = 1;
    long cpus = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(stderr, "oomlint timings: %zu files, %.2f MB, wall %.3f s, %ld thread%s (phase times summed over threads)\n",
            t->files, (double)t->bytes / 1e6, (double)wall_ns / 1e9, cpus, cpus == 1 ? "" : "s");
    struct { const char *name; uint64_t ns; } phases[] = {
        {"read+decode", t->read_ns}, {"parse", t->parse_ns}, {"model", t->model_ns},
        {"rules", t->rules_ns}, {"filter", t->filter_ns}, {"fix", t->fix_ns},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(phases); i++) {
        if (i == 5 && phases[i].ns == 0)
            continue;
        fprintf(stderr, "  %-12s %8.3f s  %5.1f%%", phases[i].name, (double)phases[i].ns / 1e9,
                100.0 * (double)phases[i].ns / total);
        if (i == 1 && phases[i].ns)
            fprintf(stderr, "  %.1f MB/s per thread", (double)t->bytes / 1e6 / ((double)phases[i].ns / 1e9));
        fputc('\n', stderr);
        if (i == 3)
            for (size_t r = 0; r < ol_rule_count; r++)
                if (t->rule_ns[r])
                    fprintf(stderr, "    %-10s %8.3f s\n", ol_rules[r]->code, (double)t->rule_ns[r] / 1e9);
    }
    fprintf(stderr, "  %-12s %8.1f MB/s overall\n", "throughput", (double)t->bytes / 1e6 / ((double)wall_ns / 1e9));
}

static int run_lint(ol_cli *cli, const ol_guard *guard)
{
    ol_grammar grammar;
    if (!ol_grammar_init(&grammar)) {
        fputs("oomlint: error: the bundled Python grammar is not compatible with the tree-sitter runtime\n", stderr);
        return 2;
    }
    ol_config_options copts;
    config_options(cli, &copts);
    ol_resolver resolver;
    if (!ol_resolver_init(&resolver, &copts)) {
        ol_grammar_free(&grammar);
        return config_failed(&resolver);
    }
    /* --output-file: everything that would go to stdout goes there; opened
     * before anything runs, so a bad path fails before any file is fixed */
    FILE *out = stdout;
    if (cli->output_file) {
        out = fopen(cli->output_file, "w");
        if (!out) {
            fprintf(stderr, "oomlint: error: cannot write '%s': %s\n", cli->output_file, strerror(errno));
            ol_resolver_free(&resolver);
            ol_grammar_free(&grammar);
            return 2;
        }
    }
    ol_settings settings;
    settings.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve(&cli->selection, settings.enabled);

    ol_input_vec inputs = {0};
    ol_discover_options dopts = {&cli->exclude, cli->force_exclude, cli->stdin_filename, ol_resolver_excluded,
                                 &resolver};
    ol_discover((const char *const *)cli->paths.items, cli->paths.len, &dopts, &inputs);
    /* each input is linted with the rule set of the configuration covering it */
    for (size_t i = 0; i < inputs.len && !resolver.failed; i++)
        ol_resolver_settings_for(&resolver, &inputs.items[i], &inputs.items[i].settings);
    if (resolver.failed) {
        if (out != stdout)
            fclose(out);
        ol_input_vec_free(&inputs);
        free(settings.enabled);
        ol_grammar_free(&grammar);
        return config_failed(&resolver);
    }

    char *stdin_bytes = NULL;
    size_t stdin_len = 0;
    for (size_t i = 0; i < inputs.len; i++) {
        if (!inputs.items[i].from_stdin)
            continue;
        if (guard && guard->stdin_read) {
            /* read by the supervisor; a copy, so that this run owns what it frees */
            if (guard->stdin_error)
                inputs.items[i].error = guard->stdin_error;
            else {
                stdin_bytes = ol_xstrndup(guard->stdin_bytes, guard->stdin_len);
                stdin_len = guard->stdin_len;
            }
            break;
        }
        int err = ol_read_stream(STDIN_FILENO, OL_MAX_SOURCE_BYTES, &stdin_bytes, &stdin_len);
        if (err) {
            inputs.items[i].error = err;
            stdin_bytes = NULL;
            stdin_len = 0;
        }
        break;
    }

    ol_timings timings;
    ol_timings_init(&timings);
    uint64_t wall_start = ol_now_ns();
    ol_run_options run = {OL_FIX_NONE, cli->unsafe_fixes, cli->timings ? &timings : NULL, guard};
    if (cli->diff)
        run.fix_mode = OL_FIX_DIFF;
    else if (cli->fix)
        run.fix_mode = OL_FIX_WRITE;
    ol_file_result *results = ol_xcalloc(inputs.len ? inputs.len : 1, sizeof(ol_file_result));
    ol_lint_all(&grammar, &settings, &run, inputs.items, inputs.len, stdin_bytes, stdin_len, results, cli->threads);
    ol_guard_reporting(guard);

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
    bool color = cli->output_file ? cli->color == OL_COLOR_ALWAYS : want_color(cli->color, guard);
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
    if (cli->timings)
        print_timings(&timings, ol_now_ns() - wall_start, cli->threads);
    ol_timings_free(&timings);
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
    ol_resolver_free(&resolver);
    ol_grammar_free(&grammar);
    return status;
}

static int run_lint_guarded(void *cli, const ol_guard *guard)
{
    return run_lint(cli, guard);
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
        if (cli.show_settings) {
            status = run_show_settings(&cli);
        } else {
            ol_supervise_options so = {false};
            for (size_t i = 0; i < cli.paths.len; i++)
                so.read_stdin |= strcmp(cli.paths.items[i], "-") == 0;
            status = ol_supervise(&so, run_lint_guarded, &cli);
        }
        break;
    }
    ol_cli_free(&cli);
    return status;
}
