/*
 * emit_sarif.c - the SARIF 2.1.0 output (`--format sarif`), shaped for
 * GitHub code scanning (github/codeql-action/upload-sarif) and checked in
 * the test suite against the official schema and the SARIF Multitool with
 * GitHub's ingestion rules.
 *
 * One run. tool.driver names oomlint and carries every rule of the registry
 * with its documentation, so a consumer can explain a finding without
 * oomlint at hand. Each finding becomes a result pointing at its file by a
 * URI relative to the current directory (uriBaseId %SRCROOT%, which
 * originalUriBaseIds maps to the directory) when the file lies under it, and
 * by an absolute file: URI otherwise. Regions are 1-based with end columns
 * exclusive and count UTF-16 code units (the run's columnKind). A notebook
 * finding points at the lines of the .ipynb file itself, the only lines a
 * code-scanning viewer can show, and names the cell and line in its message.
 * Fixes of .py findings become fixes[].artifactChanges[].replacements;
 * notebook fixes are left out, because their edits are in cell coordinates,
 * not in the .ipynb's JSON text. A finding's evidence (its notes) becomes
 * relatedLocations, linked from the message as GitHub wants them
 * ("... (evidence: [text](1))"), and its chain of calls, when it has one, a
 * codeFlow ending at the finding; properties.confidence says whether it
 * rests on a guess (properties.guessedFrom: on what).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "docs.h"
#include "emit.h"
#include "figures.h"
#include "rule.h"
#include "version.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define SARIF_INFORMATION_URI "https://github.com/oomlint/oomlint"
#define SARIF_SRCROOT "%SRCROOT%"

/* ---- strings -------------------------------------------------------------------- */

/* SARIF is JSON, and JSON text must be UTF-8. Messages come from decoded
 * sources and are valid already; paths are bytes and may not be: every
 * string goes through ol_json_add_text (emit_json.c), which turns invalid
 * bytes into U+FFFD. */

/* {"text": s} under key. */
static void add_message(cJSON *obj, const char *key, const char *s)
{
    cJSON *m = cJSON_AddObjectToObject(obj, key);
    ol_json_add_text(m, "text", s);
}

/* Percent-encodes a path for a URI: unreserved characters and '/' stay,
 * every other byte becomes %XX, so spaces, '%', '#', '?', ':' and non-ASCII
 * names all give valid URI references. */
static void uri_encode_path(ol_buf *b, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~' || c == '/') {
            ol_buf_putc(b, (char)c);
        } else {
            ol_buf_putc(b, '%');
            ol_buf_putc(b, hex[c >> 4]);
            ol_buf_putc(b, hex[c & 15]);
        }
    }
}

/* ---- where files are ------------------------------------------------------------------- */

typedef struct sarif_paths {
    char *cwd; /* absolute, no trailing slash unless it is "/"; NULL if unknown */
} sarif_paths;

static char *current_dir(void)
{
    size_t size = 256;
    for (;;) {
        char *buf = ol_xmalloc(size);
        if (getcwd(buf, size))
            return buf;
        free(buf);
        if (errno != ERANGE || size > (1u << 20))
            return NULL;
        size *= 2;
    }
}

/* Joins path onto cwd (when relative) and removes ".", ".." and repeated
 * slashes lexically, as a shell's `cd -L` would. */
static char *absolute_path(const char *cwd, const char *path)
{
    ol_buf joined = {0};
    if (path[0] != '/') {
        ol_buf_puts(&joined, cwd);
        ol_buf_putc(&joined, '/');
    }
    ol_buf_puts(&joined, path);
    /* segment start offsets in out, to pop on ".." */
    OL_VEC(size_t) starts = {0};
    ol_buf out = {0};
    const char *p = joined.data;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            break;
        if (len == 1 && p[0] == '.') {
            /* nothing */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (starts.len) {
                out.len = starts.items[--starts.len];
                out.data[out.len] = '\0';
            }
        } else {
            ol_vec_push(&starts, out.len);
            ol_buf_putc(&out, '/');
            ol_buf_add(&out, p, len);
        }
        p += len;
    }
    if (out.len == 0)
        ol_buf_putc(&out, '/');
    ol_vec_free(&starts);
    ol_buf_free(&joined);
    return ol_buf_take(&out);
}

/* The artifactLocation of a result's file: relative to %SRCROOT% when the
 * file is under the current directory, else an absolute file: URI. */
static cJSON *artifact_location(const sarif_paths *sp, const char *path)
{
    cJSON *loc = cJSON_CreateObject();
    ol_buf uri = {0};
    if (!sp->cwd) {
        /* no known root: keep the path as given, relative if it is */
        if (path[0] == '/')
            ol_buf_puts(&uri, "file://");
        uri_encode_path(&uri, path);
        ol_json_add_text(loc, "uri", uri.data);
        if (path[0] != '/')
            cJSON_AddStringToObject(loc, "uriBaseId", SARIF_SRCROOT);
        ol_buf_free(&uri);
        return loc;
    }
    char *abs = absolute_path(sp->cwd, path);
    size_t root_len = strlen(sp->cwd);
    const char *rel = NULL;
    if (strcmp(sp->cwd, "/") == 0)
        rel = abs[1] ? abs + 1 : NULL;
    else if (strncmp(abs, sp->cwd, root_len) == 0 && abs[root_len] == '/' && abs[root_len + 1])
        rel = abs + root_len + 1;
    if (rel) {
        uri_encode_path(&uri, rel);
        ol_json_add_text(loc, "uri", uri.data);
        cJSON_AddStringToObject(loc, "uriBaseId", SARIF_SRCROOT);
    } else {
        ol_buf_puts(&uri, "file://");
        uri_encode_path(&uri, abs);
        ol_json_add_text(loc, "uri", uri.data);
    }
    ol_buf_free(&uri);
    free(abs);
    return loc;
}

/* ---- the driver and its rules ------------------------------------------------------------- */

static const char *sarif_level(ol_severity s)
{
    return s == OL_SEV_ERROR ? "error" : s == OL_SEV_WARNING ? "warning" : "note";
}

static void add_tags(cJSON *props, const char *tags)
{
    cJSON *arr = cJSON_AddArrayToObject(props, "tags");
    const char *p = tags;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && *p == ' ') {
            p++;
            len--;
        }
        while (len && p[len - 1] == ' ')
            len--;
        if (len) {
            char *tag = ol_xstrndup(p, len);
            cJSON_AddItemToArray(arr, cJSON_CreateString(tag));
            free(tag);
        }
        if (!comma)
            break;
        p = comma + 1;
    }
}

static void add_figure(cJSON *obj, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, key, v);
}

static cJSON *measured_side(const ol_probe_side *s)
{
    cJSON *o = cJSON_CreateObject();
    add_figure(o, "peak_bytes", s->peak_bytes);
    add_figure(o, "growth_bytes_per_step", s->growth_bytes_per_step);
    add_figure(o, "graph_nodes_per_step", s->graph_nodes_per_step);
    add_figure(o, "time_per_step_s", s->time_per_step_s);
    add_figure(o, "zero_grad_fraction", s->zero_grad_fraction);
    add_figure(o, "reserved_peak_bytes", s->reserved_peak_bytes);
    add_figure(o, "driver_peak_bytes", s->driver_peak_bytes);
    return o;
}

/* The rule's committed probe measurements (figures.h), each with its device
 * and torch version, as a property of the rule. */
static void add_measured(cJSON *props, const ol_rule *r)
{
    cJSON *arr = NULL;
    for (size_t i = 0; i < ol_probe_figure_count; i++) {
        const ol_probe_figure *f = &ol_probe_figures[i];
        if (strcmp(f->rule, r->code) != 0)
            continue;
        if (!arr)
            arr = cJSON_AddArrayToObject(props, "measured");
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "device", f->device);
        cJSON_AddStringToObject(m, "torch", f->torch);
        cJSON_AddStringToObject(m, "scenario", f->scenario);
        cJSON_AddStringToObject(m, "verdict", f->verdict);
        if (f->confirmed_by[0])
            cJSON_AddStringToObject(m, "confirmedBy", f->confirmed_by);
        if (strcmp(f->verdict, "not measured") == 0 && f->note[0])
            cJSON_AddStringToObject(m, "why", f->note);
        if (f->agree >= 0)
            cJSON_AddBoolToObject(m, "agree", f->agree == 1);
        if (f->measured) {
            cJSON_AddItemToObject(m, "bad", measured_side(&f->bad));
            cJSON_AddItemToObject(m, "fixed", measured_side(&f->fixed));
        }
        cJSON_AddItemToArray(arr, m);
    }
}

static cJSON *rule_descriptor(const ol_rule *r)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "id", r->code);
    cJSON_AddStringToObject(d, "name", r->name);
    add_message(d, "shortDescription", r->summary);
    add_message(d, "fullDescription", r->what);
    cJSON *help = cJSON_AddObjectToObject(d, "help");
    ol_buf text = {0}, markdown = {0};
    ol_rule_doc_plain(r, &text);
    ol_rule_doc_markdown(r, &markdown);
    ol_json_add_text(help, "text", text.data);
    ol_json_add_text(help, "markdown", markdown.data);
    ol_buf_free(&text);
    ol_buf_free(&markdown);
    char *uri = ol_xasprintf("%s%s.md", OL_DOCS_URL, r->code);
    cJSON_AddStringToObject(d, "helpUri", uri);
    free(uri);
    cJSON *config = cJSON_AddObjectToObject(d, "defaultConfiguration");
    cJSON_AddStringToObject(config, "level", sarif_level(r->severity));
    cJSON *props = cJSON_AddObjectToObject(d, "properties");
    add_tags(props, r->tags);
    if (r->precision)
        cJSON_AddStringToObject(props, "precision", r->precision);
    add_measured(props, r);
    return d;
}

static cJSON *driver(void)
{
    cJSON *drv = cJSON_CreateObject();
    cJSON_AddStringToObject(drv, "name", "oomlint");
    cJSON_AddStringToObject(drv, "version", OL_VERSION);
    cJSON_AddStringToObject(drv, "semanticVersion", OL_VERSION);
    cJSON_AddStringToObject(drv, "informationUri", SARIF_INFORMATION_URI);
    cJSON *rules = cJSON_AddArrayToObject(drv, "rules");
    for (size_t i = 0; i < ol_rule_count; i++)
        cJSON_AddItemToArray(rules, rule_descriptor(ol_rules[i]));
    return drv;
}

/* ---- results ------------------------------------------------------------------------------------ */

static cJSON *line_region(uint32_t line, uint32_t col16, uint32_t end_line, uint32_t end_col16)
{
    cJSON *region = cJSON_CreateObject();
    cJSON_AddNumberToObject(region, "startLine", line);
    cJSON_AddNumberToObject(region, "startColumn", col16);
    cJSON_AddNumberToObject(region, "endLine", end_line);
    cJSON_AddNumberToObject(region, "endColumn", end_col16);
    return region;
}

static cJSON *fix_object(const sarif_paths *sp, const ol_file_result *r, const ol_fix *fix)
{
    cJSON *f = cJSON_CreateObject();
    add_message(f, "description", fix->message);
    cJSON *changes = cJSON_AddArrayToObject(f, "artifactChanges");
    cJSON *change = cJSON_CreateObject();
    cJSON_AddItemToObject(change, "artifactLocation", artifact_location(sp, r->path));
    cJSON *replacements = cJSON_AddArrayToObject(change, "replacements");
    for (size_t i = 0; i < fix->edits.len; i++) {
        const ol_edit *e = &fix->edits.items[i];
        ol_diag span = {0};
        span.start = e->start;
        span.end = e->end;
        ol_location loc = ol_diag_location(r, &span);
        cJSON *rep = cJSON_CreateObject();
        cJSON_AddItemToObject(rep, "deletedRegion", line_region(loc.line, loc.col16, loc.end_line, loc.end_col16));
        if (e->content[0]) {
            cJSON *inserted = cJSON_AddObjectToObject(rep, "insertedContent");
            ol_json_add_text(inserted, "text", e->content);
        }
        cJSON_AddItemToArray(replacements, rep);
    }
    cJSON_AddItemToArray(changes, change);
    cJSON *props = cJSON_AddObjectToObject(f, "properties");
    cJSON_AddStringToObject(props, "applicability", fix->unsafe ? "unsafe" : "safe");
    if (fix->unsafe && fix->unsafe_reason)
        ol_json_add_text(props, "unsafeReason", fix->unsafe_reason);
    return f;
}

/* ---- the evidence ------------------------------------------------------------------------------ */

/* A finding's own message as SARIF text: with its cell and line for a
 * notebook finding, which points at whole lines of the .ipynb. */
static char *result_text(const ol_file_result *r, const ol_diag *d, const ol_location *loc)
{
    bool located = r->has_source && d->rule != &ol_rule_oom001;
    if (located && r->src.notebook && loc->cell)
        return ol_xasprintf("%s (cell %u, line %u)", d->message, loc->cell, loc->line);
    return ol_xstrdup(d->message);
}

/* The region of a place of a finding of r: the finding's own, or one of
 * its notes (ol_diag_location and ol_note_location give them). In a
 * notebook a place is whole lines of the .ipynb, whose columns are not the
 * cell's; in another file whole lines too, since the note's columns count
 * code points, the run's count UTF-16 units, and the other file's text is
 * not at hand to convert them. */
static cJSON *place_region(const ol_file_result *r, bool other_file, bool located, const ol_location *loc)
{
    bool notebook = located && r->src.notebook;
    cJSON *region = cJSON_CreateObject();
    if (other_file || notebook) {
        if (!other_file && !loc->cell) {
            /* nothing better known: the file's first line */
            cJSON_AddNumberToObject(region, "startLine", 1);
            return region;
        }
        cJSON_AddNumberToObject(region, "startLine", loc->file_line);
        cJSON_AddNumberToObject(region, "endLine", loc->file_end_line);
    } else if (!located) {
        /* no source (OOM001): the file's first line */
        cJSON_AddNumberToObject(region, "startLine", 1);
    } else {
        cJSON_Delete(region);
        region = line_region(loc->line, loc->col16, loc->end_line, loc->end_col16);
    }
    return region;
}

/* A location object: its id (0: none), the file, its region and a message. */
static cJSON *place_object(const sarif_paths *sp, size_t id, const char *path, cJSON *region, const char *text)
{
    cJSON *location = cJSON_CreateObject();
    if (id)
        cJSON_AddNumberToObject(location, "id", (double)id);
    cJSON *physical = cJSON_AddObjectToObject(location, "physicalLocation");
    cJSON_AddItemToObject(physical, "artifactLocation", artifact_location(sp, path));
    cJSON_AddItemToObject(physical, "region", region);
    if (text)
        add_message(location, "message", text);
    return location;
}

/* A note as a location: relative to %SRCROOT% like the result's, in
 * whatever file it is; in a notebook its message names its cell and line. */
static cJSON *note_location(const sarif_paths *sp, const ol_file_result *r, const ol_note *n, size_t id)
{
    const char *path;
    ol_location loc = ol_note_location(r, n, &path);
    char *text = !n->path && r->has_source && r->src.notebook && loc.cell
                     ? ol_xasprintf("%s (cell %u, line %u)", n->message, loc.cell, loc.line)
                     : ol_xstrdup(n->message);
    cJSON *location = place_object(sp, id, path, place_region(r, n->path != NULL, r->has_source, &loc), text);
    free(text);
    return location;
}

/* Appends s with its square brackets escaped (`\[`), as SARIF wants them in
 * a message with embedded links: only the links added here are links. */
static void sarif_escape_brackets(ol_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '[' || *s == ']')
            ol_buf_putc(b, '\\');
        ol_buf_putc(b, *s);
    }
}

/* A result's message with its evidence linked: GitHub code scanning shows
 * related locations only through links in the message ("[text](id)"). */
static char *linked_text(const char *base, const ol_diag *d)
{
    ol_buf b = {0};
    sarif_escape_brackets(&b, base);
    ol_buf_puts(&b, " (evidence: ");
    for (size_t i = 0; i < d->notes.len; i++) {
        if (i > 0)
            ol_buf_puts(&b, "; ");
        ol_buf_putc(&b, '[');
        sarif_escape_brackets(&b, d->notes.items[i].message);
        ol_buf_printf(&b, "](%zu)", i + 1);
    }
    ol_buf_putc(&b, ')');
    return ol_buf_take(&b);
}

/* relatedLocations: every note, with ids 1, 2, ... as the message links
 * them; codeFlows: where the finding has steps, one thread flow through
 * them in order that ends at the finding ("Show paths" on GitHub). */
static void add_evidence(cJSON *res, const sarif_paths *sp, const ol_file_result *r, const ol_diag *d,
                         const ol_location *loc, bool located, const char *text)
{
    cJSON *related = cJSON_AddArrayToObject(res, "relatedLocations");
    size_t steps = 0;
    for (size_t i = 0; i < d->notes.len; i++) {
        cJSON_AddItemToArray(related, note_location(sp, r, &d->notes.items[i], i + 1));
        steps += d->notes.items[i].kind == OL_NOTE_STEP;
    }
    if (!steps)
        return;
    cJSON *flows = cJSON_AddArrayToObject(res, "codeFlows");
    cJSON *flow = cJSON_CreateObject();
    cJSON *threads = cJSON_AddArrayToObject(flow, "threadFlows");
    cJSON *thread = cJSON_CreateObject();
    cJSON *locations = cJSON_AddArrayToObject(thread, "locations");
    for (size_t i = 0; i < d->notes.len; i++) {
        if (d->notes.items[i].kind != OL_NOTE_STEP)
            continue;
        cJSON *step = cJSON_CreateObject();
        cJSON_AddItemToObject(step, "location", note_location(sp, r, &d->notes.items[i], 0));
        cJSON_AddItemToArray(locations, step);
    }
    cJSON *last = cJSON_CreateObject();
    cJSON_AddItemToObject(last, "location", place_object(sp, 0, r->path, place_region(r, false, located, loc), text));
    cJSON_AddItemToArray(locations, last);
    cJSON_AddItemToArray(threads, thread);
    cJSON_AddItemToArray(flows, flow);
}

static cJSON *result_object(const sarif_paths *sp, const ol_file_result *r, const ol_diag *d)
{
    const ol_rule *rule = d->rule;
    ol_location loc = ol_diag_location(r, d);
    bool located = r->has_source && rule != &ol_rule_oom001;
    bool notebook = located && r->src.notebook;

    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "ruleId", rule->code);
    cJSON_AddNumberToObject(res, "ruleIndex", (double)ol_rule_index(rule));
    cJSON_AddStringToObject(res, "level", sarif_level(rule->severity));
    char *text = result_text(r, d, &loc);
    if (d->notes.len) {
        char *linked = linked_text(text, d);
        add_message(res, "message", linked);
        free(linked);
    } else {
        add_message(res, "message", text);
    }

    cJSON *locations = cJSON_AddArrayToObject(res, "locations");
    cJSON_AddItemToArray(locations, place_object(sp, 0, r->path, place_region(r, false, located, &loc), NULL));
    if (d->notes.len)
        add_evidence(res, sp, r, d, &loc, located, text);
    free(text);

    if (d->fix && located && !notebook) {
        cJSON *fixes = cJSON_AddArrayToObject(res, "fixes");
        cJSON_AddItemToArray(fixes, fix_object(sp, r, d->fix));
    }
    cJSON *props = cJSON_AddObjectToObject(res, "properties");
    cJSON_AddStringToObject(props, "confidence", ol_diag_confidence(d));
    if (d->guess)
        ol_json_add_text(props, "guessedFrom", d->guess);
    return res;
}

char *ol_sarif_cwd(void)
{
    return current_dir();
}

/* The results are at this depth in the log: log, runs, run, results. */
#define RESULTS_DEPTH 4
#define RESULTS_SEP ",\n        "

void ol_emit_sarif_file(ol_buf *b, const char *cwd, const ol_file_result *r)
{
    sarif_paths sp = {(char *)cwd};
    for (size_t i = 0; i < r->diags.len; i++) {
        if (i > 0)
            ol_buf_puts(b, RESULTS_SEP);
        ol_json_items(b, result_object(&sp, r, &r->diags.items[i]), RESULTS_DEPTH);
    }
}

/* The log around its results: printed with one placeholder result, which
 * the results of each file replace, and printed without any. */
#define PLACEHOLDER "\x01"
#define PLACEHOLDER_JSON "\"\\u0001\""

static char *sarif_log(const char *cwd, bool placeholder)
{
    cJSON *log = cJSON_CreateObject();
    cJSON_AddStringToObject(log, "$schema", SARIF_SCHEMA);
    cJSON_AddStringToObject(log, "version", "2.1.0");
    cJSON *runs = cJSON_AddArrayToObject(log, "runs");
    cJSON *run = cJSON_CreateObject();
    cJSON *tool = cJSON_AddObjectToObject(run, "tool");
    cJSON_AddItemToObject(tool, "driver", driver());
    if (cwd) {
        cJSON *bases = cJSON_AddObjectToObject(run, "originalUriBaseIds");
        cJSON *root = cJSON_AddObjectToObject(bases, SARIF_SRCROOT);
        ol_buf uri = {0};
        ol_buf_puts(&uri, "file://");
        uri_encode_path(&uri, cwd);
        if (uri.data[uri.len - 1] != '/')
            ol_buf_putc(&uri, '/');
        ol_json_add_text(root, "uri", uri.data);
        ol_buf_free(&uri);
    }
    cJSON_AddStringToObject(run, "columnKind", "utf16CodeUnits");
    cJSON *list = cJSON_AddArrayToObject(run, "results");
    if (placeholder)
        cJSON_AddItemToArray(list, cJSON_CreateString(PLACEHOLDER));
    cJSON_AddItemToArray(runs, run);
    ol_buf pretty = {0};
    ol_json_items(&pretty, log, 0);
    ol_buf_putc(&pretty, '\n');
    return ol_buf_take(&pretty);
}

void ol_sarif_frame(const char *cwd, char **head, char **tail, char **empty)
{
    char *log = sarif_log(cwd, true);
    /* the placeholder is the last string of the log */
    size_t len = strlen(log), plen = strlen(PLACEHOLDER_JSON), at = len;
    while (at >= plen && memcmp(log + at - plen, PLACEHOLDER_JSON, plen) != 0)
        at--;
    if (at < plen)
        abort(); /* cannot happen: the log and its placeholder are ours */
    *head = ol_xstrndup(log, at - plen);
    *tail = ol_xstrdup(log + at);
    free(log);
    *empty = sarif_log(cwd, false);
}
