/*
 * cli.h - the command line: parsing arguments into an ol_cli, and the
 * commands (lint, `rules`, `rule CODE`).
 *
 * Flags follow the conventions Ruff users know: --select / --extend-select /
 * --ignore take codes or prefixes, repeated or comma-separated; --flag=value
 * and --flag value both work; `--` ends the options. A bad flag is a usage
 * error (exit 2) that names the flag.
 */
#ifndef OL_CLI_H
#define OL_CLI_H

#include <stdbool.h>

#include "emit.h"
#include "select.h"
#include "version.h"

typedef enum ol_command {
    OL_CMD_LINT,
    OL_CMD_RULES,
    OL_CMD_RULE,
    OL_CMD_HELP,
    OL_CMD_VERSION,
    OL_CMD_SERVER,      /* `oomlint server`: the language server (server.h) */
} ol_command;

typedef enum ol_color {
    OL_COLOR_AUTO,
    OL_COLOR_ALWAYS,
    OL_COLOR_NEVER,
} ol_color;

typedef struct ol_cli {
    ol_command command;
    ol_strvec paths;
    ol_selection selection;
    ol_strvec exclude;
    bool force_exclude;
    ol_format format;
    bool format_given;
    ol_severity fail_on;    /* --fail-on: the least severe finding that fails the run */
    bool fail_on_given;
    ol_color color;
    bool exit_zero, quiet, statistics;
    bool fix, unsafe_fixes, diff;
    bool timings;           /* --timings: where the time went, on stderr */
    char *stdin_filename;
    int threads;
    char *config_path;      /* --config PATH */
    bool isolated;          /* --isolated: ignore configuration files */
    bool show_settings;     /* --show-settings: print resolved settings, lint nothing */
    int respect_gitignore;  /* --[no-]respect-gitignore: -1 not given, else 0 or 1 */
    bool show_files;
    bool add_noqa;          /* --add-noqa: suppress every finding in place */        /* --show-files: print the files a run would lint, lint nothing */
    char *rule_code;        /* for `rule CODE` */
    bool markdown;          /* `rule CODE --markdown` / `rules --markdown DIR` */
    char *output_file;      /* --output-file: the report goes there, not to stdout */
} ol_cli;

/* Parses argv. On a usage error returns false and writes a message to err. */
bool ol_cli_parse(ol_cli *cli, int argc, char **argv, ol_buf *err);
void ol_cli_free(ol_cli *cli);
void ol_cli_usage(FILE *out);

/* `oomlint rules` and `oomlint rule CODE`. Return the exit code. */
int ol_cmd_rules(const ol_cli *cli, FILE *out);
int ol_cmd_rule(const ol_cli *cli, FILE *out, FILE *err);

#endif
