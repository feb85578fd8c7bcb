/*
 * main.c - oomlint's entry point: parse the command line, find the
 * configuration, discover inputs, lint them in parallel, emit, and choose
 * the exit status.
 *
 * Exit status: 0 no findings at or above --fail-on (also a run whose every
 * path was excluded, so a pre-commit hook handed only excluded files
 * passes); 1 such findings (after --fix: findings left; --diff: fixes to
 * show); 2 when the run could not do what it was asked:
 * a usage or configuration error, a report that could not be written
 * (standard output or --output-file), a fix that could not be written or a
 * file that changed on disk while it was being fixed, or a file that was
 * not linted (missing, unreadable, undecodable, not a regular file, too
 * large, or set aside after a crash: its OOM001 finding is reported with
 * the rest), however many others were. A run that did not lint what it was
 * given must not pass, so --exit-zero, which is about findings, turns 1
 * into 0 and never 2 (as ShellCheck, unlike Ruff's E902). A directory with
 * no Python in it is a warning and 0, as in Ruff.
 *
 * Nothing is written before the arguments and the configuration are known
 * good: the report file is opened only then, it may not be one of the
 * inputs (compared by device and inode, so a link to an input is caught
 * too), and it is built aside and renamed into place at the end
 * (writefile.h).
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "discover.h"
#include "emit.h"
#include "explain.h"
#include "fix.h"
#include "lint.h"
#include "probe.h"
#include "rule.h"
#include "server.h"
#include "supervise.h"
#include "writefile.h"

#include "commit.h" /* OL_COMMIT: build/gen/commit.h, written by the Makefile */

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
    memset(o, 0, sizeof(*o)); /* options the command line does not set are off */
    o->isolated = cli->isolated;
    o->config_path = cli->config_path;
    o->cli = &cli->selection;
    o->cli_exclude = &cli->exclude;
    o->stdin_filename = cli->stdin_filename;
}

/* "oomlint: error: " and a message that may hold a file name, escaped. */
static void print_error(const char *message)
{
    ol_buf b = {0};
    ol_escape_display(&b, message, false);
    fprintf(stderr, "oomlint: error: %s\n", b.data ? b.data : "");
    ol_buf_free(&b);
}

static int config_failed(ol_resolver *r)
{
    print_error(r->error.data ? r->error.data : "bad configuration");
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

/* respect-gitignore: the command line's, else the run's configuration's,
 * else on */
static bool respect_gitignore(const ol_cli *cli, const ol_config *run_config)
{
    if (cli->respect_gitignore >= 0)
        return cli->respect_gitignore;
    return !run_config || run_config->respect_gitignore != 0;
}

/* --show-files: the files a run would lint, one a line, in the order it
 * would lint them; a path that cannot be linted is an error (exit 2). */
static int run_show_files(const ol_cli *cli)
{
    ol_config_options copts;
    config_options(cli, &copts);
    ol_resolver resolver;
    if (!ol_resolver_init(&resolver, &copts))
        return config_failed(&resolver);
    const ol_config *run_config = NULL;
    if (!ol_resolver_run_config(&resolver, &run_config))
        return config_failed(&resolver);
    ol_input_vec inputs = {0};
    size_t excluded = 0;
    ol_discover_options dopts = {&cli->exclude, cli->force_exclude, cli->stdin_filename, ol_resolver_excluded,
                                 &resolver, &excluded, respect_gitignore(cli, run_config)};
    ol_discover((const char *const *)cli->paths.items, cli->paths.len, &dopts, &inputs);
    if (resolver.failed) {
        ol_input_vec_free(&inputs);
        return config_failed(&resolver);
    }
    int status = 0;
    ol_buf line = {0};
    for (size_t i = 0; i < inputs.len; i++) {
        const ol_input *in = &inputs.items[i];
        ol_buf_clear(&line);
        if (in->error) {
            ol_buf_printf(&line, "cannot lint '%s': %s", in->path, strerror(in->error));
            print_error(line.data);
            status = 2;
            continue;
        }
        ol_escape_display(&line, in->path, true);
        printf("%s\n", line.data);
    }
    if (inputs.len == 0 && !cli->quiet)
        fputs("oomlint: warning: no Python files or notebooks found in the given paths\n", stderr);
    ol_buf_free(&line);
    ol_input_vec_free(&inputs);
    ol_resolver_free(&resolver);
    return status;
}

static void print_timings(const ol_timings *t, uint64_t wall_ns, int threads)
{
    double total =
        (double)(t->read_ns + t->parse_ns + t->model_ns + t->summarize_ns + t->words_ns + t->rules_ns + t->filter_ns +
                 t->fix_ns);
    if (total <= 0)
        total = 1;
    long cpus = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(stderr, "oomlint timings: %zu files, %.2f MB, wall %.3f s, %ld thread%s (phase times summed over threads)\n",
            t->files, (double)t->bytes / 1e6, (double)wall_ns / 1e9, cpus, cpus == 1 ? "" : "s");
    /* words: other files' words read for the rules' questions (ol_project_time_words) */
    enum { READ, PARSE, MODEL, SUMMARIZE, WORDS, RULES, FILTER, FIX };
    struct { const char *name; uint64_t ns; } phases[] = {
        [READ] = {"read+decode", t->read_ns}, [PARSE] = {"parse", t->parse_ns}, [MODEL] = {"model", t->model_ns},
        [SUMMARIZE] = {"summarize", t->summarize_ns}, [WORDS] = {"words", t->words_ns},
        [RULES] = {"rules", t->rules_ns}, [FILTER] = {"filter", t->filter_ns}, [FIX] = {"fix", t->fix_ns},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(phases); i++) {
        if ((i == FIX || i == WORDS) && phases[i].ns == 0)
            continue;
        fprintf(stderr, "  %-12s %8.3f s  %5.1f%%", phases[i].name, (double)phases[i].ns / 1e9,
                100.0 * (double)phases[i].ns / total);
        if (i == PARSE && phases[i].ns)
            fprintf(stderr, "  %.1f MB/s per thread", (double)t->bytes / 1e6 / ((double)phases[i].ns / 1e9));
        fputc('\n', stderr);
        if (i == RULES)
            for (size_t r = 0; r < ol_rule_count; r++)
                if (t->rule_ns[r])
                    fprintf(stderr, "    %-10s %8.3f s\n", ol_rules[r]->code, (double)t->rule_ns[r] / 1e9);
    }
    fprintf(stderr, "  %-12s %8.1f MB/s overall\n", "throughput", (double)t->bytes / 1e6 / ((double)wall_ns / 1e9));
    if (t->summary_bytes)
        fprintf(stderr, "  %-12s %8.2f MB held at most, %zu dropped for the budget, %zu built again\n", "summaries",
                (double)t->summary_bytes / 1e6, t->summary_evictions, t->summary_rebuilds);
    if (t->linted_ahead || t->summarized_ahead)
        fprintf(stderr,
                "  %-12s %8zu files linted inside another's turn, %zu only summarized ahead of their own"
                " (their models built again there: %.3f s of the model's time)\n",
                "ahead", t->linted_ahead, t->summarized_ahead, (double)t->rebuild_ns / 1e9);
    if (t->report_on_disk)
        fprintf(stderr, "  %-12s %8.1f KB waited for the files before them on disk, %.1f KB in memory at most\n",
                "report", (double)t->report_on_disk / 1e3, (double)t->report_waited / 1e3);
}

/* Is the file at `path` the same file as `other` (by device and inode)? */
static bool same_file(const struct stat *st, const char *other)
{
    struct stat o;
    return stat(other, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* --output-file must not name a file the run reads: an input (by whatever
 * name or link), the --config file, or what standard input is. */
static bool output_is_an_input(const ol_cli *cli, const ol_input_vec *inputs, ol_buf *why)
{
    struct stat st;
    if (stat(cli->output_file, &st) != 0 || !S_ISREG(st.st_mode))
        return false; /* new, or a FIFO or device: nothing to lose */
    for (size_t i = 0; i < inputs->len; i++) {
        const ol_input *in = &inputs->items[i];
        if (in->from_stdin) {
            struct stat so;
            if (fstat(STDIN_FILENO, &so) == 0 && so.st_dev == st.st_dev && so.st_ino == st.st_ino) {
                ol_buf_puts(why, "it is what standard input reads");
                return true;
            }
        } else if (!in->error && same_file(&st, in->path)) {
            if (strcmp(in->path, cli->output_file) == 0)
                ol_buf_puts(why, "it is one of the files to lint");
            else
                ol_buf_printf(why, "it is one of the files to lint (`%s`)", in->path);
            return true;
        }
    }
    if (cli->config_path && same_file(&st, cli->config_path)) {
        ol_buf_puts(why, "it is the configuration file");
        return true;
    }
    return false;
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
    /* run-wide settings: the command line, else the configuration covering
     * the current directory */
    const ol_config *run_config = NULL;
    if (!ol_resolver_run_config(&resolver, &run_config)) {
        ol_grammar_free(&grammar);
        return config_failed(&resolver);
    }
    if (run_config && run_config->output_format && !cli->format_given)
        ol_format_parse(run_config->output_format, &cli->format);
    if (run_config && run_config->fail_on && !cli->fail_on_given)
        ol_severity_parse(run_config->fail_on, &cli->fail_on);

    ol_settings settings = {0};
    settings.enabled = ol_xcalloc(ol_rule_count, sizeof(bool));
    settings.exact = ol_xcalloc(ol_rule_count, sizeof(bool));
    ol_selection_resolve_exact(&cli->selection, settings.enabled, settings.exact);

    ol_input_vec inputs = {0};
    size_t excluded = 0;
    ol_discover_options dopts = {&cli->exclude, cli->force_exclude, cli->stdin_filename, ol_resolver_excluded,
                                 &resolver, &excluded, respect_gitignore(cli, run_config)};
    ol_discover((const char *const *)cli->paths.items, cli->paths.len, &dopts, &inputs);
    /* each input is linted with the rule set of the configuration covering it */
    for (size_t i = 0; i < inputs.len && !resolver.failed; i++)
        ol_resolver_settings_for(&resolver, &inputs.items[i], &inputs.items[i].settings);
    if (resolver.failed) {
        ol_input_vec_free(&inputs);
        free(settings.enabled);
        free(settings.exact);
        ol_grammar_free(&grammar);
        return config_failed(&resolver);
    }

    /* --output-file: everything that would go to stdout goes there. Opened
     * now that the arguments and configuration are known good, and before
     * anything is fixed, so a bad path fails before any file changes. */
    FILE *out = stdout;
    ol_report_file report = {0};
    if (cli->output_file) {
        ol_buf why = {0};
        bool refused = output_is_an_input(cli, &inputs, &why);
        if (refused || !ol_report_open(&report, cli->output_file, &why)) {
            fprintf(stderr, "oomlint: error: %s '%s': %s\n", refused ? "refusing to write the report to" : "cannot write",
                    cli->output_file, why.data ? why.data : "unknown reason");
            ol_buf_free(&why);
            ol_input_vec_free(&inputs);
            free(settings.enabled);
            free(settings.exact);
            ol_resolver_free(&resolver);
            ol_grammar_free(&grammar);
            return 2;
        }
        ol_buf_free(&why);
        out = report.fp;
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
    ol_run_options run = {OL_FIX_NONE, cli->unsafe_fixes, cli->timings ? &timings : NULL, guard, NULL, NULL,
                          cli->add_noqa};
    if (cli->diff)
        run.fix_mode = OL_FIX_DIFF;
    else if (cli->fix)
        run.fix_mode = OL_FIX_WRITE;
    bool color = cli->output_file ? cli->color == OL_COLOR_ALWAYS : want_color(cli->color, guard);
    /* --add-noqa's summary is the count of directives it added (as Ruff's) */
    ol_emit_options eo = {cli->format, color, cli->quiet || cli->add_noqa, cli->statistics, cli->unsafe_fixes};
    /* each file's part of the report is made when it is linted, and written
     * as soon as the files before it are (a report from standard input
     * with --fix goes elsewhere: that run keeps everything to the end) */
    bool from_stdin = false;
    for (size_t i = 0; i < inputs.len; i++)
        from_stdin |= inputs.items[i].from_stdin;
    ol_renderer renderer;
    ol_renderer_init(&renderer, &eo, cli->diff);
    ol_report_writer writer;
    ol_writer_init(&writer, out, cli->format, &renderer);
    if (!from_stdin) {
        run.render = &renderer;
        if (!cli->diff)
            run.stream = &writer;
    }
    ol_file_result *results = ol_xcalloc(inputs.len ? inputs.len : 1, sizeof(ol_file_result));
    ol_lint_all(&grammar, &settings, &run, inputs.items, inputs.len, stdin_bytes, stdin_len, results, cli->threads);
    ol_guard_reporting(guard);

    size_t failing = 0, fixed = 0, unread = 0, noqa_added = 0;
    bool stdin_fixed_output = false, fix_failed = false;
    for (size_t i = 0; i < inputs.len; i++) {
        for (size_t k = 0; k < results[i].diags.len; k++)
            if (results[i].diags.items[k].rule->severity <= cli->fail_on)
                failing++;
        if (!results[i].read_ok)
            unread++;
        fixed += results[i].fixed;
        noqa_added += results[i].noqa_added;
        if (results[i].fix_error)
            print_error(results[i].fix_error);
        fix_failed |= results[i].fix_failed;
        if (results[i].fix_output)
            stdin_fixed_output = true;
    }
    int status = failing > 0 ? 1 : 0;
    if (cli->diff) {
        /* the diffs are the output; the count goes to stderr, and so does
         * every file whose diff cannot be shown */
        for (size_t i = 0; i < inputs.len; i++) {
            if (results[i].fix_diff)
                fputs(results[i].fix_diff, out);
            if (!results[i].read_ok)
                for (size_t k = 0; k < results[i].diags.len; k++)
                    if (results[i].diags.items[k].rule == &ol_rule_oom001)
                        print_error(results[i].diags.items[k].message);
        }
        if (!cli->quiet) {
            /* as Ruff words it; the fixes --unsafe-fixes would add are counted */
            size_t unapplied = 0;
            for (size_t i = 0; i < inputs.len && !cli->unsafe_fixes; i++)
                for (size_t k = 0; k < results[i].diags.len; k++)
                    unapplied += results[i].diags.items[k].fix && results[i].diags.items[k].fix->unsafe;
            const char *s = fixed == 1 ? "" : "s", *es = unapplied == 1 ? "" : "es";
            if (unapplied && fixed)
                fprintf(stderr, "Would fix %zu finding%s (%zu additional fix%s available with `--unsafe-fixes`).\n",
                        fixed, s, unapplied, es);
            else if (unapplied)
                fprintf(stderr, "No findings would be fixed (%zu fix%s available with `--unsafe-fixes`).\n", unapplied,
                        es);
            else if (fixed)
                fprintf(stderr, "Would fix %zu finding%s.\n", fixed, s);
            else
                fputs("No findings would be fixed.\n", stderr);
        }
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
        for (size_t i = 0; i < inputs.len; i++)
            if (!results[i].written)
                ol_writer_part(&writer, &results[i]);
        ol_writer_end(&writer, results, inputs.len);
        if (cli->add_noqa && !cli->quiet)
            fprintf(stderr, "Added %zu noqa directive%s.\n", noqa_added, noqa_added == 1 ? "" : "s");
    }
    /* problems with suppression comments (unknown codes), in input order */
    for (size_t i = 0; i < inputs.len && !cli->quiet; i++) {
        for (size_t k = 0; k < results[i].warnings.len; k++) {
            ol_buf b = {0};
            ol_escape_display(&b, results[i].warnings.items[k], false);
            fprintf(stderr, "oomlint: warning: %s\n", b.data ? b.data : "");
            ol_buf_free(&b);
        }
    }
    /* a report that did not arrive is a failed run, whatever it said */
    bool write_failed = writer.failed; /* a part that could not be read back (said) */
    if (out == stdout) {
        int err = 0;
        if (!ol_stream_ok(stdout, &err)) {
            fprintf(stderr, "oomlint: error: cannot write the report to standard output: %s\n", strerror(err));
            write_failed = true;
        }
    } else {
        ol_buf why = {0};
        if (!ol_report_commit(&report, &why)) {
            fprintf(stderr, "oomlint: error: cannot write '%s': %s; %s\n", cli->output_file,
                    why.data ? why.data : "unknown reason", "any earlier report there was kept");
            write_failed = true;
        }
        ol_buf_free(&why);
    }
    timings.report_waited = writer.most_held;
    timings.report_on_disk = writer.spill_len;
    if (cli->timings)
        print_timings(&timings, ol_now_ns() - wall_start, cli->threads);
    ol_timings_free(&timings);

    if (inputs.len == 0 && excluded > 0) {
        /* pre-commit with --force-exclude hands over only excluded files:
         * there is nothing to lint, and nothing wrong (Ruff does the same) */
        if (!cli->quiet)
            fputs("oomlint: warning: no Python files or notebooks to lint: every path given is excluded\n", stderr);
        status = 0;
    } else if (inputs.len == 0) {
        /* an empty directory, or one with no Python in it: nothing wrong,
         * but said (as Ruff does); a path that does not exist is an input
         * with its error, so it never gets here */
        if (!cli->quiet)
            fputs("oomlint: warning: no Python files or notebooks found in the given paths\n", stderr);
        status = 0;
    } else if (cli->exit_zero) {
        status = 0;
    }
    if (unread > 0 && !cli->diff && !cli->quiet)
        /* --diff has named each one on stderr already */
        fprintf(stderr, "oomlint: error: %zu file%s not linted (%s OOM001 finding says why): exit status 2\n",
                unread, unread == 1 ? " was" : "s were", unread == 1 ? "its" : "each one's");
    if (write_failed || fix_failed || unread > 0)
        status = 2;

    for (size_t i = 0; i < inputs.len; i++)
        ol_file_result_free(&results[i]);
    free(results);
    ol_writer_free(&writer);
    ol_renderer_free(&renderer);
    free(stdin_bytes);
    ol_input_vec_free(&inputs);
    free(settings.enabled);
    free(settings.exact);
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
    /* `oomlint probe` runs programs rather than linting: its own options (probe.c) */
    if (argc > 1 && strcmp(argv[1], "probe") == 0)
        return ol_probe_main(argc - 1, argv + 1);
    /* `oomlint explain` reads a crash's log and snapshot: its own options (explain.c) */
    if (argc > 1 && strcmp(argv[1], "explain") == 0)
        return ol_explain_main(argc - 1, argv + 1);
    ol_cli cli;
    ol_buf err = {0};
    if (!ol_cli_parse(&cli, argc, argv, &err)) {
        fprintf(stderr, "oomlint: error: %s\nRun 'oomlint --help' for usage.\n", err.data ? err.data : "bad usage");
        ol_buf_free(&err);
        ol_cli_free(&cli);
        return 2;
    }
    ol_buf_free(&err);
    /* past a file-size limit (ulimit -f) a write fails with EFBIG and is
     * reported, instead of the kernel killing the run halfway */
    signal(SIGXFSZ, SIG_IGN);
    int status = 0;
    switch (cli.command) {
    case OL_CMD_HELP:
        ol_cli_usage(stdout);
        break;
    case OL_CMD_VERSION:
        printf("oomlint %s (commit %s)\n", OL_VERSION, OL_COMMIT);
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
        } else if (cli.show_files) {
            status = run_show_files(&cli);
        } else {
            ol_supervise_options so = {false};
            for (size_t i = 0; i < cli.paths.len; i++)
                so.read_stdin |= strcmp(cli.paths.items[i], "-") == 0;
            status = ol_supervise(&so, run_lint_guarded, &cli);
        }
        break;
    case OL_CMD_SERVER:
        status = ol_server_main(&cli);
        break;
    }
    bool served = cli.command == OL_CMD_SERVER;
    ol_cli_free(&cli);
    /* whatever a command printed must have arrived (`oomlint rules > /dev/full`);
     * the server's exit status is the protocol's (0 after shutdown, else 1) */
    int werr = 0;
    if (!served && !ol_stream_ok(stdout, &werr) && status != 2) {
        fprintf(stderr, "oomlint: error: cannot write to standard output: %s\n", strerror(werr));
        status = 2;
    }
    return status;
}
