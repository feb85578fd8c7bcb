/*
 * cli.c - argument parsing, usage text, and the documentation commands.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "docs.h"
#include "rule.h"

void ol_cli_usage(FILE *out)
{
    fputs("oomlint " OL_VERSION " - find the PyTorch training code that runs GPUs out of memory\n"
          "\n"
          "Usage:\n"
          "  oomlint [OPTIONS] [PATH ...]      lint files, directories (recursively) or - (stdin)\n"
          "  oomlint check [OPTIONS] [PATH ...]\n"
          "  oomlint rules [--format json]     list every rule\n"
          "  oomlint rule CODE                 explain a rule (what, why, example, fix)\n"
          "  oomlint version                   print the version\n"
          "  oomlint server [OPTIONS]          the language server (LSP over stdio) for editors\n"
          "  oomlint probe [OPTIONS]           measure each rule's cost, or confirm findings in\n"
          "                                    your own script (oomlint probe --help)\n"
          "  oomlint explain LOG [SNAPSHOT]    your job died? from its out-of-memory error to the\n"
          "                                    line to change (oomlint explain --help)\n"
          "\n"
          "Rule selection:\n"
          "  --select CODES          run only these rules (codes or prefixes: OOM101, OOM5, ALL)\n"
          "  --extend-select CODES   add rules to the default set (opt-in rules such as OOM401)\n"
          "  --ignore CODES          do not run these rules\n",
          out);
    /* the opt-in rules from the registry, so that the list cannot go stale */
    fputs("  Opt-in rules (", out);
    size_t opt_in = 0;
    for (size_t i = 0; i < ol_rule_count; i++)
        if (ol_rules[i]->opt_in)
            fprintf(out, "%s%s", opt_in++ ? ", " : "", ol_rules[i]->code);
    fputs(") run only when selected by exact code\n"
          "  or by ALL (every rule). OOM201, OOM302 and OOM303 report code that runs once (a\n"
          "  forward in a notebook cell, a tensor built in __init__, a reload) only then.\n"
          "\n"
          "Configuration:\n"
          "  --config PATH           read [tool.oomlint] from this file for every input\n"
          "                          (default: the nearest pyproject.toml with [tool.oomlint],\n"
          "                          searched upward from each file's directory)\n"
          "  --isolated              ignore every configuration file\n"
          "  --show-settings         print the settings each PATH resolves to, lint nothing\n"
          "  Command-line --select replaces the config's rule set; --extend-select and\n"
          "  --ignore are applied on top of it and win over it.\n"
          "\n"
          "Files:\n"
          "  --exclude GLOB          skip matching files and directories (repeatable)\n"
          "  --extend-exclude GLOB   the same as --exclude: both add to the built-in skips\n"
          "  --force-exclude         apply --exclude to paths named on the command line too\n"
          "  --stdin-filename NAME   the name to report for input read from -\n"
          "  --show-files            print the files that would be linted, lint nothing\n"
          "  --no-respect-gitignore  lint files that .gitignore, .git/info/exclude or git's\n"
          "                          global excludes file ignore (they are skipped by default)\n"
          "\n"
          "Fixes:\n"
          "  --fix                   apply safe fixes (with -, print the fixed code to stdout)\n"
          "  --unsafe-fixes          also apply fixes that may change behaviour\n"
          "  --diff                  print the fixes as a unified diff; write nothing\n"
          "  --add-noqa              add `# noqa: CODE` to every line with a finding\n"
          "\n"
          "Output:\n"
          "  --output-format FORMAT  full (default; also `text`), concise (one line per finding),\n"
          "                          json, sarif (SARIF 2.1.0, for code scanning), github\n"
          "                          (GitHub Actions annotations), gitlab (GitLab Code Quality)\n"
          "                          or junit (JUnit XML); --format is the same option\n"
          "  -o, --output-file PATH  write the report to PATH instead of standard output\n"
          "  --statistics            print a count per rule instead of each finding; [*] before a\n"
          "                          rule's name: --fix fixes each of its findings, [~] some\n"
          "  -q, --quiet             print findings only, no summary\n"
          "  --color WHEN            auto (default), always or never\n"
          "  --fail-on SEVERITY      the least severe finding that fails the run: error,\n"
          "                          warning (default) or info\n"
          "  --exit-zero             exit 0 even when there are findings (not when a file\n"
          "                          could not be linted: that is exit 2)\n"
          "\n"
          "Other:\n"
          "  -j, --threads N         lint on N threads (default: one per CPU)\n"
          "  --timings               print where the time went (per phase and rule) to stderr\n"
          "  --version               print the version\n"
          "  -h, --help              print this help\n"
          "\n"
          "Suppress a finding with `# noqa: OOM101` (or `# oomlint: disable=OOM101`) on its line,\n"
          "or a whole file with `# oomlint: disable-file` in its leading comments;\n"
          "`--extend-select OOM003` reports the suppressions that suppress nothing.\n"
          "\n"
          "Exit status: 0 no findings at or above --fail-on (info findings are shown but do not\n"
          "fail by default; a run whose every path was excluded is 0 too), 1 such findings,\n"
          "2 the run could not do what it was asked: a usage or configuration error, a report\n"
          "or fix that could not be written, or a file that was not linted (missing, unreadable,\n"
          "undecodable, not a regular file, too large: its OOM001 finding says why, and the\n"
          "other files are still reported). --exit-zero turns 1 into 0, never 2.\n",
          out);
}

typedef enum opt_id {
    OPT_SELECT,
    OPT_EXTEND_SELECT,
    OPT_IGNORE,
    OPT_EXCLUDE,
    OPT_FORCE_EXCLUDE,
    OPT_STDIN_FILENAME,
    OPT_FORMAT,
    OPT_STATISTICS,
    OPT_QUIET,
    OPT_COLOR,
    OPT_EXIT_ZERO,
    OPT_THREADS,
    OPT_VERSION,
    OPT_HELP,
    OPT_MARKDOWN,
    OPT_FIX,
    OPT_UNSAFE_FIXES,
    OPT_DIFF,
    OPT_CONFIG,
    OPT_ISOLATED,
    OPT_SHOW_SETTINGS,
    OPT_TIMINGS,
    OPT_OUTPUT_FILE,
    OPT_FAIL_ON,
    OPT_STDIO,
    OPT_SHOW_FILES,
    OPT_RESPECT_GITIGNORE,
    OPT_ADD_NOQA,
    OPT_NO_RESPECT_GITIGNORE,
} opt_id;

typedef struct opt_spec {
    const char *long_name;
    char short_name;
    bool takes_value;
    opt_id id;
} opt_spec;

static const opt_spec options[] = {
    {"select", 0, true, OPT_SELECT},
    {"extend-select", 0, true, OPT_EXTEND_SELECT},
    {"ignore", 0, true, OPT_IGNORE},
    {"exclude", 0, true, OPT_EXCLUDE},
    {"extend-exclude", 0, true, OPT_EXCLUDE},
    {"show-files", 0, false, OPT_SHOW_FILES},
    {"respect-gitignore", 0, false, OPT_RESPECT_GITIGNORE},
    {"add-noqa", 0, false, OPT_ADD_NOQA},
    {"no-respect-gitignore", 0, false, OPT_NO_RESPECT_GITIGNORE},
    {"force-exclude", 0, false, OPT_FORCE_EXCLUDE},
    {"stdin-filename", 0, true, OPT_STDIN_FILENAME},
    {"format", 0, true, OPT_FORMAT},
    {"output-format", 0, true, OPT_FORMAT},
    {"statistics", 0, false, OPT_STATISTICS},
    {"quiet", 'q', false, OPT_QUIET},
    {"color", 0, true, OPT_COLOR},
    {"exit-zero", 0, false, OPT_EXIT_ZERO},
    {"threads", 'j', true, OPT_THREADS},
    {"version", 'V', false, OPT_VERSION},
    {"help", 'h', false, OPT_HELP},
    {"markdown", 0, false, OPT_MARKDOWN},
    {"fix", 0, false, OPT_FIX},
    {"unsafe-fixes", 0, false, OPT_UNSAFE_FIXES},
    {"diff", 0, false, OPT_DIFF},
    {"timings", 0, false, OPT_TIMINGS},
    {"config", 0, true, OPT_CONFIG},
    {"isolated", 0, false, OPT_ISOLATED},
    {"show-settings", 0, false, OPT_SHOW_SETTINGS},
    {"output-file", 'o', true, OPT_OUTPUT_FILE},
    {"fail-on", 0, true, OPT_FAIL_ON},
    {"stdio", 0, false, OPT_STDIO},
};

/* A selector list with nothing in it, or an empty element (`--select ''`,
 * `--select OOM1,`), is a mistake: `--select ''` would silently run no rule. */
static bool selector_list_ok(const char *flag, const char *value, ol_buf *err)
{
    const char *p = value;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool blank = true;
        for (size_t i = 0; i < len && blank; i++)
            blank = p[i] == ' ' || p[i] == '\t';
        if (blank) {
            if (!*value || strspn(value, " \t") == strlen(value))
                ol_buf_printf(err, "option '%s' needs at least one rule code or prefix (e.g. OOM101, OOM5, ALL)",
                              flag);
            else
                ol_buf_printf(err, "option '%s' has an empty element in '%s'", flag, value);
            return false;
        }
        if (!comma)
            return true;
        p = comma + 1;
    }
}

static bool apply(ol_cli *cli, opt_id id, const char *flag, const char *value, ol_buf *err)
{
    if ((id == OPT_SELECT || id == OPT_EXTEND_SELECT || id == OPT_IGNORE) && !selector_list_ok(flag, value, err))
        return false;
    switch (id) {
    case OPT_SELECT:
        cli->selection.has_select = true;
        ol_selectors_add(&cli->selection.select, value);
        break;
    case OPT_EXTEND_SELECT:
        ol_selectors_add(&cli->selection.extend_select, value);
        break;
    case OPT_IGNORE:
        ol_selectors_add(&cli->selection.ignore, value);
        break;
    case OPT_EXCLUDE: {
        /* comma-separated like Ruff, repeatable */
        const char *p = value;
        while (*p) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (len)
                ol_vec_push(&cli->exclude, ol_xstrndup(p, len));
            p += len + (comma ? 1 : 0);
        }
        break;
    }
    case OPT_FORCE_EXCLUDE:
        cli->force_exclude = true;
        break;
    case OPT_STDIN_FILENAME:
        free(cli->stdin_filename);
        cli->stdin_filename = ol_xstrdup(value);
        break;
    case OPT_FORMAT:
        cli->format_given = true;
        if (!ol_format_parse(value, &cli->format)) {
            ol_buf_printf(err, "invalid value '%s' for '%s' (expected: " OL_FORMAT_NAMES ")", value, flag);
            return false;
        }
        break;
    case OPT_FAIL_ON:
        cli->fail_on_given = true;
        if (!ol_severity_parse(value, &cli->fail_on)) {
            ol_buf_printf(err, "invalid value '%s' for '%s' (expected: error, warning, info)", value, flag);
            return false;
        }
        break;
    case OPT_STATISTICS:
        cli->statistics = true;
        break;
    case OPT_QUIET:
        cli->quiet = true;
        break;
    case OPT_COLOR:
        if (strcmp(value, "auto") == 0)
            cli->color = OL_COLOR_AUTO;
        else if (strcmp(value, "always") == 0)
            cli->color = OL_COLOR_ALWAYS;
        else if (strcmp(value, "never") == 0)
            cli->color = OL_COLOR_NEVER;
        else {
            ol_buf_printf(err, "invalid value '%s' for '%s' (expected: auto, always, never)", value, flag);
            return false;
        }
        break;
    case OPT_EXIT_ZERO:
        cli->exit_zero = true;
        break;
    case OPT_THREADS: {
        char *end;
        long n = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || n < 1 || n > 256) {
            ol_buf_printf(err, "invalid value '%s' for '%s' (expected a number from 1 to 256)", value, flag);
            return false;
        }
        cli->threads = (int)n;
        break;
    }
    case OPT_VERSION:
        cli->command = OL_CMD_VERSION;
        break;
    case OPT_HELP:
        cli->command = OL_CMD_HELP;
        break;
    case OPT_MARKDOWN:
        cli->markdown = true;
        break;
    case OPT_FIX:
        cli->fix = true;
        break;
    case OPT_UNSAFE_FIXES:
        cli->unsafe_fixes = true;
        break;
    case OPT_DIFF:
        cli->diff = true;
        break;
    case OPT_TIMINGS:
        cli->timings = true;
        break;
    case OPT_CONFIG:
        free(cli->config_path);
        cli->config_path = ol_xstrdup(value);
        break;
    case OPT_ISOLATED:
        cli->isolated = true;
        break;
    case OPT_SHOW_SETTINGS:
        cli->show_settings = true;
        break;
    case OPT_SHOW_FILES:
        cli->show_files = true;
        break;
    case OPT_ADD_NOQA:
        cli->add_noqa = true;
        break;
    case OPT_RESPECT_GITIGNORE:
    case OPT_NO_RESPECT_GITIGNORE:
        cli->respect_gitignore = id == OPT_RESPECT_GITIGNORE;
        break;
    case OPT_STDIO:
        /* `server --stdio`, as clients such as vscode-languageclient pass it;
         * stdio is the only transport */
        break;
    case OPT_OUTPUT_FILE:
        if (!*value) {
            ol_buf_printf(err, "option '%s' needs a file name", flag);
            return false;
        }
        free(cli->output_file);
        cli->output_file = ol_xstrdup(value);
        break;
    }
    return true;
}

/* The long option a misspelt one most likely meant, or NULL. */
static const char *closest_option(const char *name, size_t len)
{
    const char *names[OL_ARRAY_LEN(options)];
    for (size_t k = 0; k < OL_ARRAY_LEN(options); k++)
        names[k] = options[k].long_name;
    return ol_closest_word(name, len, names, OL_ARRAY_LEN(options));
}

/* `-fix`, `-quiet`, `-output-format`: a long option written with one dash.
 * Caught before the short-option reading would take `-output-format` for
 * `-o utput-format` and write the report to a file of that name. */
static const char *single_dash_long(const char *arg)
{
    const char *name = arg + 1;
    size_t len = strcspn(name, "=");
    if (len < 2)
        return NULL;
    for (size_t k = 0; k < OL_ARRAY_LEN(options); k++)
        if (strlen(options[k].long_name) == len && strncmp(options[k].long_name, name, len) == 0)
            return options[k].long_name;
    return NULL;
}

static const char *const subcommands[] = {"check", "rules", "rule", "server", "version", "probe", "explain"};

/* `oomlint chek .`: a first argument that names no file and is a
 * subcommand misspelt is a usage error, not a path that does not exist. */
static bool misspelt_subcommand(const char *arg, ol_buf *err)
{
    struct stat st;
    if (arg[0] == '-' || lstat(arg, &st) == 0 || strchr(arg, '/') || strchr(arg, '.'))
        return false;
    const char *near = ol_closest_word(arg, strlen(arg), subcommands, OL_ARRAY_LEN(subcommands));
    if (!near)
        return false;
    ol_buf_printf(err, "unknown command '%s' (did you mean '%s'?); no file or directory of that name exists either",
                  arg, near);
    return true;
}

bool ol_cli_parse(ol_cli *cli, int argc, char **argv, ol_buf *err)
{
    memset(cli, 0, sizeof(*cli));
    cli->fail_on = OL_SEV_WARNING;
    cli->respect_gitignore = -1;
    int i = 1;
    /* subcommands come first; `check` is the default one */
    if (i < argc) {
        if (strcmp(argv[i], "check") == 0) {
            i++;
        } else if (strcmp(argv[i], "rules") == 0) {
            cli->command = OL_CMD_RULES;
            i++;
        } else if (strcmp(argv[i], "rule") == 0) {
            cli->command = OL_CMD_RULE;
            i++;
        } else if (strcmp(argv[i], "server") == 0) {
            cli->command = OL_CMD_SERVER;
            i++;
        } else if (strcmp(argv[i], "version") == 0) {
            cli->command = OL_CMD_VERSION;
            i++;
        } else if (misspelt_subcommand(argv[i], err)) {
            return false;
        }
    }
    bool options_done = false;
    ol_command sub = cli->command;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (sub == OL_CMD_RULE) {
                if (cli->rule_code) {
                    ol_buf_printf(err, "'rule' takes one rule code, got '%s' too", arg);
                    return false;
                }
                cli->rule_code = ol_xstrdup(arg);
            } else if (sub == OL_CMD_RULES || sub == OL_CMD_SERVER || sub == OL_CMD_VERSION) {
                ol_buf_printf(err, "'%s' takes no paths (got '%s')",
                              sub == OL_CMD_RULES ? "rules" : sub == OL_CMD_SERVER ? "server" : "version", arg);
                return false;
            } else {
                ol_vec_push(&cli->paths, ol_xstrdup(arg));
            }
            continue;
        }
        const opt_spec *spec = NULL;
        const char *value = NULL;
        char flag[64];
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            for (size_t k = 0; k < OL_ARRAY_LEN(options); k++)
                if (strlen(options[k].long_name) == len && strncmp(options[k].long_name, name, len) == 0)
                    spec = &options[k];
            snprintf(flag, sizeof flag, "--%.*s", (int)(len < 40 ? len : 40), name);
            if (!spec) {
                ol_buf_printf(err, "unknown option '%s'", flag);
                const char *near = closest_option(name, len);
                if (near)
                    ol_buf_printf(err, " (did you mean '--%s'?)", near);
                return false;
            }
            if (eq) {
                if (!spec->takes_value) {
                    ol_buf_printf(err, "option '%s' takes no value", flag);
                    return false;
                }
                value = eq + 1;
            }
        } else {
            for (size_t k = 0; k < OL_ARRAY_LEN(options); k++)
                if (options[k].short_name && options[k].short_name == arg[1])
                    spec = &options[k];
            snprintf(flag, sizeof flag, "-%c", arg[1]);
            const char *long_name = single_dash_long(arg);
            if (long_name || !spec || (arg[2] != '\0' && !spec->takes_value)) {
                ol_buf_printf(err, "unknown option '%.40s'", arg);
                if (!long_name && arg[2] != '\0')
                    long_name = closest_option(arg + 1, strcspn(arg + 1, "="));
                if (long_name)
                    ol_buf_printf(err, " (did you mean '--%s'?)", long_name);
                return false;
            }
            if (arg[2] != '\0')
                value = arg + 2;
        }
        if (spec->takes_value && !value) {
            if (i + 1 >= argc) {
                ol_buf_printf(err, "option '%s' needs a value", flag);
                return false;
            }
            value = argv[++i];
        }
        if (!apply(cli, spec->id, flag, value, err))
            return false;
    }
    if (cli->command == OL_CMD_LINT || cli->command == OL_CMD_RULES || cli->command == OL_CMD_SERVER) {
        const char *bad = ol_selection_invalid(&cli->selection);
        if (bad) {
            ol_buf_printf(err, "unknown rule selector '%s'", bad);
            if (!ol_selector_suggest(bad, err))
                ol_buf_puts(err, " (see 'oomlint rules')");
            return false;
        }
    }
    if (cli->add_noqa && (cli->fix || cli->diff)) {
        ol_buf_puts(err, "'--add-noqa' cannot be used with '--fix' or '--diff'");
        return false;
    }
    for (size_t k = 0; cli->add_noqa && k < cli->paths.len; k++)
        if (strcmp(cli->paths.items[k], "-") == 0) {
            ol_buf_puts(err, "'--add-noqa' writes files: it cannot be used with standard input (-)");
            return false;
        }
    if (cli->isolated && cli->config_path) {
        ol_buf_puts(err, "'--config' cannot be used with '--isolated'");
        return false;
    }
    if (cli->command == OL_CMD_RULE && !cli->rule_code) {
        ol_buf_puts(err, "'rule' needs a rule code, e.g. 'oomlint rule OOM101'");
        return false;
    }
    if (cli->command == OL_CMD_LINT && cli->paths.len == 0)
        ol_vec_push(&cli->paths, ol_xstrdup("."));
    return true;
}

void ol_cli_free(ol_cli *cli)
{
    ol_strvec_free(&cli->paths);
    ol_selection_free(&cli->selection);
    ol_strvec_free(&cli->exclude);
    free(cli->stdin_filename);
    free(cli->config_path);
    free(cli->rule_code);
    free(cli->output_file);
    memset(cli, 0, sizeof(*cli));
}

/* ---- documentation commands ---------------------------------------------------- */

int ol_cmd_rules(const ol_cli *cli, FILE *out)
{
    if (cli->format == OL_FMT_JSON) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < ol_rule_count; i++) {
            const ol_rule *r = ol_rules[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "code", r->code);
            cJSON_AddStringToObject(o, "name", r->name);
            cJSON_AddStringToObject(o, "severity", ol_severity_name(r->severity));
            cJSON_AddBoolToObject(o, "opt_in", r->opt_in);
            cJSON_AddBoolToObject(o, "fixable", r->fix != NULL);
            cJSON_AddStringToObject(o, "summary", r->summary);
            cJSON_AddItemToArray(arr, o);
        }
        ol_json_print(out, arr);
        return 0;
    }
    fprintf(out, "%-7s %-36s %-8s %-4s %s\n", "CODE", "NAME", "SEVERITY", "FIX", "SUMMARY");
    for (size_t i = 0; i < ol_rule_count; i++) {
        const ol_rule *r = ol_rules[i];
        fprintf(out, "%-7s %-36s %-8s %-4s %s%s\n", r->code, r->name, ol_severity_name(r->severity),
                r->fix ? "yes" : "-", r->opt_in ? "(opt-in) " : "", r->summary);
    }
    return 0;
}

int ol_cmd_rule(const ol_cli *cli, FILE *out, FILE *err)
{
    char code[16];
    size_t n = 0;
    for (const char *p = cli->rule_code; *p && n + 1 < sizeof code; p++)
        code[n++] = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
    code[n] = '\0';
    const ol_rule *r = ol_rule_find(code);
    if (!r) {
        /* accept the rule's name as well */
        for (size_t i = 0; i < ol_rule_count && !r; i++)
            if (strcmp(ol_rules[i]->name, cli->rule_code) == 0)
                r = ol_rules[i];
    }
    if (!r) {
        ol_buf why = {0};
        ol_buf_printf(&why, "unknown rule '%s'", cli->rule_code);
        if (!ol_selector_suggest(cli->rule_code, &why))
            ol_buf_puts(&why, " (see 'oomlint rules')");
        fprintf(err, "oomlint: error: %s\n", why.data);
        ol_buf_free(&why);
        return 2;
    }
    ol_buf b = {0};
    if (cli->markdown) {
        ol_rule_doc_markdown(r, &b);
        fputs(b.data, out);
        ol_buf_free(&b);
        return 0;
    }
    ol_rule_doc_terminal(r, &b);
    fputs(b.data, out);
    ol_buf_free(&b);
    return 0;
}
