/*
 * emit_gitlab.c - GitLab Code Quality reports (`--output-format gitlab`):
 * a JSON array with one object per finding, as GitLab's code quality
 * widget and merge-request diff read it (artifacts:reports:codequality):
 *
 *   {"description": "MESSAGE", "check_name": "OOM101",
 *    "fingerprint": "32 hex digits", "severity": "major",
 *    "location": {"path": "src/train.py", "lines": {"begin": 13, "end": 13}}}
 *
 * The path is relative to the project's directory ($CI_PROJECT_DIR in a
 * pipeline, else the current directory), as GitLab matches it against the
 * repository's files. Severities: error is critical, warning major, info
 * minor. The fingerprint identifies a finding across runs: a hash of the
 * path, the rule, the message and which occurrence of that message in the
 * file it is, so a finding keeps its fingerprint when lines above it move
 * (GitLab compares fingerprints to say what a merge request fixed or
 * added) and no two findings share one. A notebook finding gives the lines
 * of the .ipynb file itself, and its cell and line in the description.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "emit.h"
#include "rule.h"

static const char *severity(ol_severity s)
{
    return s == OL_SEV_ERROR ? "critical" : s == OL_SEV_WARNING ? "major" : "minor";
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

/* The path as GitLab names the file: relative to root when below it. */
static char *project_path(const char *root, const char *path)
{
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    if (!root || path[0] != '/')
        return ol_xstrdup(path);
    size_t n = strlen(root);
    if (n > 1 && strncmp(path, root, n) == 0 && path[n] == '/')
        return ol_xstrdup(path + n + 1);
    return ol_xstrdup(path);
}

char *ol_gitlab_root(void)
{
    const char *dir = getenv("CI_PROJECT_DIR");
    if (dir && dir[0] == '/')
        return ol_xstrdup(dir);
    return ol_sarif_cwd();
}

void ol_emit_gitlab_file(ol_buf *b, const char *root, const ol_file_result *r)
{
    char *path = project_path(root, r->path);
    /* a relative path given on the command line is relative to the current
     * directory; under another $CI_PROJECT_DIR it is made absolute first */
    if (path[0] != '/' && root) {
        char *cwd = ol_sarif_cwd();
        if (cwd && strcmp(cwd, root) != 0) {
            char *abs = ol_xasprintf("%s/%s", cwd, path);
            free(path);
            path = project_path(root, abs);
            free(abs);
        }
        free(cwd);
    }
    for (size_t i = 0; i < r->diags.len; i++) {
        const ol_diag *d = &r->diags.items[i];
        ol_location loc = ol_diag_location(r, d);
        bool located = r->has_source && d->rule != &ol_rule_oom001;
        bool notebook = located && r->src.notebook;
        size_t occurrence = 0;
        for (size_t k = 0; k < i; k++)
            occurrence += r->diags.items[k].rule == d->rule && strcmp(r->diags.items[k].message, d->message) == 0;
        char index[32];
        int index_len = snprintf(index, sizeof index, "%zu", occurrence);
        uint64_t h1 = 1469598103934665603u, h2 = 0x9e3779b97f4a7c15u;
        const char *parts[] = {path, d->rule->code, d->message};
        for (size_t p = 0; p < 3; p++) {
            h1 = fnv1a(h1, parts[p], strlen(parts[p]) + 1);
            h2 = fnv1a(h2, parts[p], strlen(parts[p]) + 1);
        }
        h1 = fnv1a(h1, index, (size_t)index_len);
        h2 = fnv1a(h2 ^ h1, index, (size_t)index_len);
        char fingerprint[33];
        snprintf(fingerprint, sizeof fingerprint, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);

        cJSON *o = cJSON_CreateObject();
        ol_buf text = {0};
        ol_buf_puts(&text, d->message);
        if (notebook && loc.cell)
            ol_buf_printf(&text, " (cell %u, line %u)", loc.cell, loc.line);
        ol_json_add_text(o, "description", text.data);
        ol_buf_free(&text);
        cJSON_AddStringToObject(o, "check_name", d->rule->code);
        cJSON_AddStringToObject(o, "fingerprint", fingerprint);
        cJSON_AddStringToObject(o, "severity", severity(d->rule->severity));
        cJSON *location = cJSON_AddObjectToObject(o, "location");
        ol_json_add_text(location, "path", path);
        cJSON *lines = cJSON_AddObjectToObject(location, "lines");
        uint32_t begin = 1, end = 1;
        if (notebook && loc.cell) {
            begin = loc.file_line;
            end = loc.file_end_line;
        } else if (located && !notebook) {
            begin = loc.line;
            end = loc.end_line;
        }
        cJSON_AddNumberToObject(lines, "begin", begin);
        cJSON_AddNumberToObject(lines, "end", end >= begin ? end : begin);
        if (i > 0)
            ol_buf_puts(b, ",\n  ");
        ol_json_items(b, o, 1);
    }
    free(path);
}
