/*
 * config.c - reading [tool.oomlint], finding the configuration that covers
 * each file, and turning it into the settings a file is linted with.
 *
 * Paths are compared lexically: every path is made absolute against the
 * current directory and `.`/`..` components are folded, without resolving
 * symbolic links (as Ruff does), so a file is covered by the configuration
 * above the path it was reached by. The directory cache is a small
 * open-addressing hash table owned by the resolver.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "glob.h"
#include "rule.h"
#include "toml.h"

/* pyproject.toml files are a few kilobytes. Parsing costs about 90 bytes of
 * memory per byte of TOML, so a stray 10 MB file would take most of a
 * gigabyte; past this size the run stops with a clear error instead. */
#define OL_CONFIG_MAX_BYTES (1024u * 1024u)

static const char *const known_keys[] = {"select",         "extend-select", "ignore",
                                         "per-file-ignores", "extend-per-file-ignores", "exclude",
                                         "extend-exclude", "respect-gitignore", "fail-on",
                                         "output-format"};

const char *const ol_default_test_patterns[] = {"test_*.py", "*_test.py", "tests.py", "conftest.py", "**/tests/**",
                                                "**/test/**", NULL};

/* Does every rule whose code starts with prefix run only outside tests? */
static bool prefix_only_training(const char *prefix)
{
    size_t n = strlen(prefix);
    bool any = false;
    for (size_t i = 0; i < ol_rule_count; i++) {
        const ol_rule *r = ol_rules[i];
        if (strncmp(r->code, prefix, n) != 0)
            continue;
        if (r->in_tests || !r->check)
            return false;
        any = true;
    }
    return any;
}

void ol_default_test_ignores(ol_strvec *out)
{
    bool *covered = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    for (size_t i = 0; i < ol_rule_count; i++) {
        const ol_rule *r = ol_rules[i];
        if (covered[i] || r->in_tests || !r->check)
            continue;
        /* the shortest prefix ("OOM1", "OOM50", "OOM501") that names only such rules */
        size_t len = strlen(r->code);
        char prefix[32];
        for (size_t k = 4; k <= len && k < sizeof prefix; k++) {
            memcpy(prefix, r->code, k);
            prefix[k] = '\0';
            if (k == len || prefix_only_training(prefix))
                break;
        }
        ol_vec_push(out, ol_xstrdup(prefix));
        size_t n = strlen(prefix);
        for (size_t j = 0; j < ol_rule_count; j++)
            if (strncmp(ol_rules[j]->code, prefix, n) == 0)
                covered[j] = true;
    }
    free(covered);
}

/* ---- paths --------------------------------------------------------------- */

typedef OL_VEC(char *) path_parts;

static void parts_free(path_parts *p)
{
    for (size_t i = 0; i < p->len; i++)
        free(p->items[i]);
    ol_vec_free(p);
}

/* Splits a path into components, dropping empty ones and `.`; with fold,
 * `..` removes the component before it (lexical normalisation). */
static void split_path(const char *path, bool fold, path_parts *out)
{
    const char *p = path;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.')) {
            /* nothing */
        } else if (fold && len == 2 && p[0] == '.' && p[1] == '.') {
            if (out->len > 0)
                free(out->items[--out->len]);
        } else {
            ol_vec_push(out, ol_xstrndup(p, len));
        }
        p += len + (slash ? 1 : 0);
    }
}

static char *join_parts(const path_parts *p, size_t count)
{
    ol_buf b = {0};
    for (size_t i = 0; i < count; i++) {
        ol_buf_putc(&b, '/');
        ol_buf_puts(&b, p->items[i]);
    }
    if (b.len == 0)
        ol_buf_putc(&b, '/');
    return ol_buf_take(&b);
}

/* path made absolute against cwd and normalised: "/a/b" ("/" for the root) */
static char *absolute(const char *cwd, const char *path)
{
    path_parts parts = {0};
    if (path[0] != '/')
        split_path(cwd, true, &parts);
    split_path(path, true, &parts);
    char *abs = join_parts(&parts, parts.len);
    parts_free(&parts);
    return abs;
}

/* "/a/b/c" -> "/a/b"; "/a" -> "/" */
static char *parent_dir(const char *abs)
{
    const char *slash = strrchr(abs, '/');
    if (!slash || slash == abs)
        return ol_xstrdup("/");
    return ol_xstrndup(abs, (size_t)(slash - abs));
}

/* The part of abs below dir ("a/b.py"), or NULL when abs is not below dir. */
static const char *below(const char *abs, const char *dir)
{
    if (strcmp(dir, "/") == 0)
        return abs + 1;
    size_t n = strlen(dir);
    if (strncmp(abs, dir, n) != 0)
        return NULL;
    if (abs[n] == '\0')
        return abs + n;
    if (abs[n] != '/')
        return NULL;
    return abs + n + 1;
}

/* How a path is shown: relative to the current directory when below it. */
static char *display_path(const char *cwd, const char *abs)
{
    const char *rel = cwd ? below(abs, cwd) : NULL;
    if (rel && *rel)
        return ol_xstrdup(rel);
    return ol_xstrdup(rel ? "." : abs);
}

/* ---- patterns ---------------------------------------------------------------- */

bool ol_glob_match(const char *pattern, const char *rel, const char *abs, bool any_name)
{
    return ol_glob_path_match(pattern, rel, abs, any_name);
}

/* ---- reading [tool.oomlint] --------------------------------------------------- */

typedef struct reader {
    const char *display;
    ol_buf *err;
} reader;

static bool config_error(reader *rd, uint32_t line, const char *fmt, ...) OL_PRINTF(3, 4);

static bool config_error(reader *rd, uint32_t line, const char *fmt, ...)
{
    ol_buf_clear(rd->err);
    ol_buf_printf(rd->err, "%s:%u: ", rd->display, line);
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(rd->err, fmt, ap);
    va_end(ap);
    return false;
}

/* A string from TOML that holds no NUL of its own. */
static bool plain_string(const ol_toml_value *v)
{
    return v->type == OL_TOML_STRING && strlen(v->text) == v->len;
}

/* key = ["OOM101", "OOM5", ...] into out, each checked against the registry. */
static bool read_selectors(reader *rd, const char *key, const ol_toml_entry *e, ol_strvec *out)
{
    const ol_toml_value *v = e->value;
    if (v->type != OL_TOML_ARRAY)
        return config_error(rd, v->line, "'%s' must be an array of rule codes, like [\"OOM101\", \"OOM5\"]; got %s",
                            key, ol_toml_type_name(v->type));
    for (size_t i = 0; i < v->items.len; i++) {
        const ol_toml_value *item = v->items.items[i];
        if (!plain_string(item))
            return config_error(rd, item->line, "'%s' must be an array of rule codes (strings); item %zu is %s", key,
                                i + 1, ol_toml_type_name(item->type));
        if (item->text[strspn(item->text, " \t")] == '\0')
            return config_error(rd, item->line,
                                "'%s' has an empty rule code (item %zu); an empty code would match every rule",
                                key, i + 1);
        char *sel = ol_xstrdup(item->text);
        for (char *c = sel; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        if (!ol_selector_valid(sel)) {
            config_error(rd, item->line, "unknown rule code or prefix '%s' in '%s'", item->text, key);
            if (!ol_selector_suggest(sel, rd->err))
                ol_buf_puts(rd->err, " (see 'oomlint rules')");
            free(sel);
            return false;
        }
        ol_vec_push(out, sel);
    }
    return true;
}

static bool read_exclude(reader *rd, const char *key, const ol_toml_entry *e, ol_strvec *out)
{
    const ol_toml_value *v = e->value;
    if (v->type != OL_TOML_ARRAY)
        return config_error(rd, v->line, "'%s' must be an array of glob patterns, like [\"legacy\", \"gen/*\"]; got %s",
                            key, ol_toml_type_name(v->type));
    for (size_t i = 0; i < v->items.len; i++) {
        const ol_toml_value *item = v->items.items[i];
        if (!plain_string(item))
            return config_error(rd, item->line, "'%s' must be an array of glob patterns (strings); item %zu is %s",
                                key, i + 1, ol_toml_type_name(item->type));
        if (item->len == 0)
            return config_error(rd, item->line, "'%s' has an empty pattern", key);
        const char *bound = ol_glob_check(item->text);
        if (bound)
            return config_error(rd, item->line, "'%s' item %zu %s; split it into several patterns", key, i + 1,
                                bound);
        ol_vec_push(out, ol_xstrdup(item->text));
    }
    return true;
}

/* key = "name", one of the names valid() accepts. */
static bool read_choice(reader *rd, const ol_toml_entry *e, const char *key, const char *expected,
                        bool (*valid)(const char *name), char **out)
{
    const ol_toml_value *v = e->value;
    if (!plain_string(v) || !valid(v->text))
        return config_error(rd, v->line, "'%s' must be one of %s; got %s%s%s", key, expected,
                            plain_string(v) ? "'" : "", plain_string(v) ? v->text : ol_toml_type_name(v->type),
                            plain_string(v) ? "'" : "");
    free(*out);
    *out = ol_xstrdup(v->text);
    return true;
}

static bool valid_format(const char *name)
{
    ol_format f;
    return ol_format_parse(name, &f);
}

static bool valid_severity(const char *name)
{
    ol_severity s;
    return ol_severity_parse(name, &s);
}

static bool read_per_file_ignores(reader *rd, const char *key, const ol_toml_entry *e, ol_pfi_vec *out)
{
    const ol_toml_value *v = e->value;
    if (v->type != OL_TOML_TABLE)
        return config_error(rd, v->line,
                            "'%s' must be a table of glob = [rule codes], like {\"scripts/*\" = [\"OOM101\"]}; got %s",
                            key, ol_toml_type_name(v->type));
    for (size_t i = 0; i < v->entries.len; i++) {
        const ol_toml_entry *pe = &v->entries.items[i];
        if (pe->key[0] == '\0')
            return config_error(rd, pe->line, "'%s' has an empty pattern", key);
        const char *bound = ol_glob_check(pe->key);
        if (bound)
            return config_error(rd, pe->line, "'%s' has a pattern that %s; split it into several patterns", key,
                                bound);
        ol_per_file_ignore pfi = {ol_xstrdup(pe->key), {0}, pe->line};
        ol_vec_push(out, pfi);
        char *what = ol_xasprintf("%s.\"%s\"", key, pe->key);
        bool ok = read_selectors(rd, what, pe, &ol_vec_last(out).selectors);
        free(what);
        if (!ok)
            return false;
    }
    return true;
}

void ol_config_free(ol_config *c)
{
    free(c->path);
    free(c->dir);
    ol_selection_free(&c->selection);
    for (size_t i = 0; i < c->per_file_ignores.len; i++) {
        free(c->per_file_ignores.items[i].pattern);
        ol_strvec_free(&c->per_file_ignores.items[i].selectors);
    }
    ol_vec_free(&c->per_file_ignores);
    for (size_t i = 0; i < c->extend_per_file_ignores.len; i++) {
        free(c->extend_per_file_ignores.items[i].pattern);
        ol_strvec_free(&c->extend_per_file_ignores.items[i].selectors);
    }
    ol_vec_free(&c->extend_per_file_ignores);
    ol_strvec_free(&c->exclude);
    free(c->output_format);
    free(c->fail_on);
    memset(c, 0, sizeof(*c));
}

bool ol_config_parse(ol_config *c, const char *display, const char *text, size_t len, bool *found, ol_buf *err)
{
    memset(c, 0, sizeof(*c));
    c->respect_gitignore = -1;
    *found = false;
    reader rd = {display, err};
    ol_toml_doc doc;
    uint32_t line;
    ol_buf why = {0};
    if (!ol_toml_parse(&doc, text, len, &line, &why)) {
        config_error(&rd, line, "%s", why.data ? why.data : "invalid TOML");
        ol_buf_free(&why);
        return false;
    }
    ol_buf_free(&why);
    const ol_toml_entry *tool = ol_toml_get(doc.root, "tool");
    const ol_toml_entry *table = tool ? ol_toml_get(tool->value, "oomlint") : NULL;
    bool ok = true;
    if (table && table->value->type != OL_TOML_TABLE) {
        ok = config_error(&rd, table->line, "'tool.oomlint' must be a table; got %s",
                          ol_toml_type_name(table->value->type));
    } else if (table) {
        *found = true;
        const ol_toml_value *t = table->value;
        for (size_t i = 0; ok && i < t->entries.len; i++) {
            const ol_toml_entry *e = &t->entries.items[i];
            if (strcmp(e->key, "select") == 0) {
                c->selection.has_select = true;
                ok = read_selectors(&rd, "select", e, &c->selection.select);
            } else if (strcmp(e->key, "extend-select") == 0) {
                ok = read_selectors(&rd, "extend-select", e, &c->selection.extend_select);
            } else if (strcmp(e->key, "ignore") == 0) {
                ok = read_selectors(&rd, "ignore", e, &c->selection.ignore);
            } else if (strcmp(e->key, "per-file-ignores") == 0) {
                c->has_per_file_ignores = true;
                ok = read_per_file_ignores(&rd, e->key, e, &c->per_file_ignores);
            } else if (strcmp(e->key, "extend-per-file-ignores") == 0) {
                ok = read_per_file_ignores(&rd, e->key, e, &c->extend_per_file_ignores);
            } else if (strcmp(e->key, "exclude") == 0 || strcmp(e->key, "extend-exclude") == 0) {
                ok = read_exclude(&rd, e->key, e, &c->exclude);
            } else if (strcmp(e->key, "respect-gitignore") == 0) {
                if (e->value->type != OL_TOML_BOOLEAN)
                    ok = config_error(&rd, e->value->line, "'respect-gitignore' must be true or false; got %s",
                                      ol_toml_type_name(e->value->type));
                else
                    c->respect_gitignore = e->value->boolean;
            } else if (strcmp(e->key, "fail-on") == 0) {
                ok = read_choice(&rd, e, "fail-on", "\"error\", \"warning\", \"info\"", valid_severity, &c->fail_on);
            } else if (strcmp(e->key, "output-format") == 0) {
                ok = read_choice(&rd, e, "output-format", "\"full\", \"concise\", \"json\", \"sarif\", \"github\", \"gitlab\", \"junit\"",
                                 valid_format, &c->output_format);
            } else {
                const char *near = NULL;
                size_t best = 3;
                for (size_t k = 0; k < OL_ARRAY_LEN(known_keys); k++) {
                    size_t d = ol_edit_distance(e->key, strlen(e->key), known_keys[k], strlen(known_keys[k]));
                    if (d < best) {
                        best = d;
                        near = known_keys[k];
                    }
                }
                if (near)
                    ok = config_error(&rd, e->line, "unknown key '%s' in [tool.oomlint] (did you mean '%s'?)", e->key,
                                      near);
                else
                    ok = config_error(&rd, e->line,
                                      "unknown key '%s' in [tool.oomlint] (known keys: select, extend-select, "
                                      "ignore, per-file-ignores, extend-per-file-ignores, exclude, extend-exclude, "
                                      "respect-gitignore, fail-on, output-format)",
                                      e->key);
            }
        }
    }
    ol_toml_free(&doc);
    if (!ok)
        ol_config_free(c);
    return ok;
}

/* ---- the directory cache --------------------------------------------------------- */

typedef struct cache_slot {
    char *dir;               /* absolute; NULL = empty slot */
    const ol_config *config; /* NULL: no configuration covers dir */
} cache_slot;

struct ol_config_cache {
    cache_slot *slots;
    size_t cap, len;         /* cap is a power of two */
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static cache_slot *cache_find(ol_config_cache *c, const char *dir)
{
    size_t i = (size_t)hash_str(dir) & (c->cap - 1);
    while (c->slots[i].dir && strcmp(c->slots[i].dir, dir) != 0)
        i = (i + 1) & (c->cap - 1);
    return &c->slots[i];
}

static void cache_put(ol_config_cache *c, const char *dir, const ol_config *config)
{
    if ((c->len + 1) * 2 > c->cap) {
        ol_config_cache bigger = {ol_xcalloc(c->cap * 2, sizeof(cache_slot)), c->cap * 2, c->len};
        for (size_t i = 0; i < c->cap; i++)
            if (c->slots[i].dir)
                *cache_find(&bigger, c->slots[i].dir) = c->slots[i];
        free(c->slots);
        *c = bigger;
    }
    cache_slot *s = cache_find(c, dir);
    if (!s->dir) {
        s->dir = ol_xstrdup(dir);
        c->len++;
    }
    s->config = config;
}

static ol_config_cache *cache_new(void)
{
    ol_config_cache *c = ol_xcalloc(1, sizeof(*c));
    c->cap = 64;
    c->slots = ol_xcalloc(c->cap, sizeof(cache_slot));
    return c;
}

static void cache_free(ol_config_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].dir);
    free(c->slots);
    free(c);
}

/* ---- the resolver ------------------------------------------------------------------ */

static bool resolver_fail(ol_resolver *r, const char *fmt, ...) OL_PRINTF(2, 3);

static bool resolver_fail(ol_resolver *r, const char *fmt, ...)
{
    if (r->failed)
        return false; /* keep the first error */
    r->failed = true;
    ol_buf_clear(&r->error);
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&r->error, fmt, ap);
    va_end(ap);
    return false;
}

/* Reads and parses one file. Returns -1 on an error, 0 when it has no
 * [tool.oomlint] table (and required is false), 1 with *out set. */
static int load(ol_resolver *r, const char *file, const char *display, bool required, ol_config **out)
{
    char *bytes = NULL;
    size_t len = 0;
    int err = ol_read_file(file, OL_CONFIG_MAX_BYTES, &bytes, &len);
    if (err) {
        ol_buf why = {0};
        ol_describe_read_error(&why, err, OL_CONFIG_MAX_BYTES, "configuration");
        resolver_fail(r, "cannot read %s: %s", display, why.data);
        ol_buf_free(&why);
        return -1;
    }
    ol_config *c = ol_xcalloc(1, sizeof(*c));
    bool found;
    ol_buf why = {0};
    bool ok = ol_config_parse(c, display, bytes, len, &found, &why);
    free(bytes);
    if (!ok) {
        resolver_fail(r, "%s", why.data);
        ol_buf_free(&why);
        free(c);
        return -1;
    }
    ol_buf_free(&why);
    if (!found) {
        ol_config_free(c);
        free(c);
        if (required) {
            resolver_fail(r, "%s: no [tool.oomlint] table (a file given to --config must have one)", display);
            return -1;
        }
        return 0;
    }
    c->path = ol_xstrdup(display);
    ol_vec_push(&r->configs, c);
    *out = c;
    return 1;
}

bool ol_resolver_init(ol_resolver *r, const ol_config_options *o)
{
    memset(r, 0, sizeof(*r));
    r->opts = *o;
    char *cwd = getcwd(NULL, 0);
    if (o->isolated) {
        /* no configuration, but the default per-file-ignores are relative
         * to the current directory (by name only when it is unreadable) */
        r->cwd = cwd ? absolute("/", cwd) : NULL;
        free(cwd);
        return true;
    }
    if (!cwd)
        return resolver_fail(r, "cannot find configuration: the current directory is unreadable (%s)",
                             strerror(errno));
    /* normalised, so that below() compares like with like */
    r->cwd = absolute("/", cwd);
    free(cwd);
    r->cache = cache_new();
    if (o->config_path) {
        ol_config *c = NULL;
        if (load(r, o->config_path, o->config_path, true, &c) < 0)
            return false;
        char *abs = absolute(r->cwd, o->config_path);
        c->dir = parent_dir(abs);
        free(abs);
        r->explicit_config = c;
    }
    return true;
}

void ol_resolver_free(ol_resolver *r)
{
    for (size_t i = 0; i < r->configs.len; i++) {
        ol_config_free(r->configs.items[i]);
        free(r->configs.items[i]);
    }
    ol_vec_free(&r->configs);
    for (size_t i = 0; i < r->settings.len; i++) {
        free(r->settings.items[i]->enabled);
        free(r->settings.items[i]->hidden);
        free(r->settings.items[i]->exact);
        free(r->settings.items[i]);
    }
    ol_vec_free(&r->settings);
    cache_free(r->cache);
    free(r->top_of_dir);
    free(r->top);
    free(r->cwd);
    ol_buf_free(&r->error);
    memset(r, 0, sizeof(*r));
}

/* A pyproject.toml that is a symbolic link to nothing (or to itself) was
 * meant to be the configuration here: skipping it would apply the parent's
 * instead, silently, so it is an error as an unreadable one is. */
static bool broken_link(ol_resolver *r, const char *file)
{
    struct stat st;
    if (lstat(file, &st) != 0 || !S_ISLNK(st.st_mode) || stat(file, &st) == 0)
        return false;
    int err = errno;
    char target[4096];
    ssize_t n = readlink(file, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    char *display = display_path(r->cwd, file);
    resolver_fail(r, "cannot read %s: it is a symbolic link to '%s', which %s; remove the link or point it at a "
                  "configuration", display, target, err == ELOOP ? "leads back to itself" : "does not exist");
    free(display);
    return true;
}

/* The configuration for an absolute directory: its own pyproject.toml or the
 * nearest one above. Each directory passed on the way is cached. */
static bool config_for_abs_dir(ol_resolver *r, const char *abs_dir, const ol_config **out)
{
    *out = NULL;
    if (r->failed)
        return false;
    if (r->opts.isolated)
        return true;
    if (r->explicit_config) {
        *out = r->explicit_config;
        return true;
    }
    ol_strvec chain = {0}; /* directories without a cached answer yet */
    char *dir = ol_xstrdup(abs_dir);
    const ol_config *found = NULL;
    bool ok = true;
    for (;;) {
        cache_slot *slot = cache_find(r->cache, dir);
        if (slot->dir) {
            found = slot->config;
            free(dir);
            break;
        }
        ol_vec_push(&chain, dir);
        char *file = ol_xasprintf("%s/pyproject.toml", strcmp(dir, "/") == 0 ? "" : dir);
        struct stat st;
        int loaded = 0;
        ol_config *c = NULL;
        /* only a regular file: a FIFO would block the read, a directory is no config */
        if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
            char *display = display_path(r->cwd, file);
            loaded = load(r, file, display, false, &c);
            free(display);
        } else if (broken_link(r, file)) {
            loaded = -1;
        }
        free(file);
        if (loaded < 0) {
            ok = false;
            break;
        }
        if (loaded > 0) {
            c->dir = ol_xstrdup(dir);
            found = c;
            break;
        }
        if (strcmp(dir, "/") == 0)
            break;
        dir = parent_dir(dir);
    }
    if (ok)
        for (size_t i = 0; i < chain.len; i++)
            cache_put(r->cache, chain.items[i], found);
    ol_strvec_free(&chain);
    *out = found;
    return ok;
}

static bool excluded_by(const ol_config *c, const char *abs)
{
    const char *rel = below(abs, c->dir);
    if (rel && !*rel)
        return false; /* the configuration's own directory */
    for (size_t i = 0; i < c->exclude.len; i++)
        if (ol_glob_match(c->exclude.items[i], rel, abs, true))
            return true;
    return false;
}

bool ol_resolver_excluded(void *ctx, const char *path)
{
    ol_resolver *r = ctx;
    if (r->failed)
        return true;
    if (r->opts.isolated)
        return false;
    char *abs = absolute(r->cwd, path);
    char *dir = parent_dir(abs);
    const ol_config *c = NULL;
    bool ok = config_for_abs_dir(r, dir, &c);
    bool hit = !ok || (c && excluded_by(c, abs));
    free(dir);
    free(abs);
    return hit;
}

/* The input's absolute path (NULL for stdin without a name) and the
 * directory to search from. */
static void input_location(const ol_resolver *r, const ol_input *in, char **abs, char **dir)
{
    *abs = NULL;
    if (in->from_stdin && !r->opts.stdin_filename) {
        *dir = ol_xstrdup(r->cwd);
        return;
    }
    *abs = absolute(r->cwd, in->path);
    *dir = parent_dir(*abs);
}

/* The directory a file's per-file-ignores are relative to: its
 * configuration's, else (the defaults) the current directory. */
static const char *pattern_base(const ol_resolver *r, const ol_config *c)
{
    return c ? c->dir : r->cwd;
}

/* The top of the project holding a file: the nearest directory above it
 * with a .git, pyproject.toml, setup.py or setup.cfg, or NULL. */
static char *project_top(const char *abs)
{
    static const char *const markers[] = {".git", "pyproject.toml", "setup.py", "setup.cfg", NULL};
    char *dir = parent_dir(abs);
    while (dir) {
        for (const char *const *mk = markers; *mk; mk++) {
            char *p = ol_xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, *mk);
            struct stat st;
            bool here = lstat(p, &st) == 0;
            free(p);
            if (here)
                return dir;
        }
        if (strcmp(dir, "/") == 0)
            break;
        char *up = parent_dir(dir);
        free(dir);
        dir = up;
    }
    free(dir);
    return NULL;
}

/* project_top for the files of one directory, looked up once while its
 * files come one after another */
static const char *project_top_cached(ol_resolver *r, const char *abs)
{
    char *dir = parent_dir(abs);
    if (r->top_of_dir && strcmp(r->top_of_dir, dir) == 0) {
        free(dir);
        return r->top;
    }
    free(r->top_of_dir);
    free(r->top);
    r->top_of_dir = dir;
    r->top = project_top(abs);
    return r->top;
}

/* Do the default per-file-ignores (test code) cover this file? The
 * patterns are relative to the current directory, or, for a file outside
 * it (`oomlint /elsewhere/repo`), to the top of the file's project, so that
 * where oomlint is run from does not decide what counts as test code. */
static bool default_test_code(ol_resolver *r, const ol_config *c, const char *abs)
{
    if (!abs || (c && c->has_per_file_ignores) || r->opts.test_code_linted)
        return false;
    const char *base = pattern_base(r, c);
    const char *rel = base ? below(abs, base) : NULL;
    const char *top;
    if (!rel && !c && (top = project_top_cached(r, abs)) != NULL)
        rel = below(abs, top);
    /* a pattern spelling `test` outside braces and brackets matches only a
     * path that spells it too: most paths are settled without a match */
    bool says_test = strstr(abs, "test") || (rel && strstr(rel, "test"));
    bool hit = false;
    for (const char *const *p = ol_default_test_patterns; *p && !hit; p++)
        if (says_test || !strstr(*p, "test") || strpbrk(*p, "{[\\"))
            hit = ol_glob_match(*p, rel, abs, false);
    return hit;
}

/* The rules a file is linted with (enabled) and those that run only to be
 * counted (hidden: what the default per-file-ignores switch off; NULL to
 * leave out). An ignore the configuration writes itself is not counted. */
static void resolve_enabled(ol_resolver *r, const ol_config *c, const char *abs, bool *enabled, bool *hidden,
                            bool *exact)
{
    const ol_selection *layers[2] = {NULL, NULL};
    size_t n = 0;
    if (c)
        layers[n++] = &c->selection;
    if (r->opts.cli)
        layers[n++] = r->opts.cli;
    ol_selection_resolve_layers_exact(layers, n, enabled, exact);
    if (hidden)
        memset(hidden, 0, ol_rule_count * sizeof(bool));
    if (!abs)
        return;
    size_t size = (ol_rule_count ? ol_rule_count : 1) * sizeof(bool);
    bool *user = ol_xmalloc(size);
    memcpy(user, enabled, size);
    if (default_test_code(r, c, abs)) {
        ol_strvec ignores = {0};
        ol_default_test_ignores(&ignores);
        bool *before = ol_xmalloc(size);
        memcpy(before, enabled, size);
        ol_selection_apply_ignores(&ignores, enabled);
        for (size_t i = 0; hidden && i < ol_rule_count; i++)
            hidden[i] = before[i] && !enabled[i];
        free(before);
        ol_strvec_free(&ignores);
    }
    if (c) {
        const char *rel = below(abs, c->dir);
        const ol_pfi_vec *lists[2] = {&c->per_file_ignores, &c->extend_per_file_ignores};
        for (size_t l = 0; l < 2; l++)
            for (size_t i = 0; i < lists[l]->len; i++)
                if (ol_glob_match(lists[l]->items[i].pattern, rel, abs, false))
                    ol_selection_apply_ignores(&lists[l]->items[i].selectors, user);
        for (size_t i = 0; i < ol_rule_count; i++)
            if (!user[i]) {
                enabled[i] = false;
                if (hidden)
                    hidden[i] = false;
            }
    }
    free(user);
}

bool ol_resolver_run_config(ol_resolver *r, const ol_config **out)
{
    *out = NULL;
    if (r->failed)
        return false;
    if (r->opts.isolated)
        return true;
    return config_for_abs_dir(r, r->cwd, out);
}

bool ol_resolver_settings_for(ol_resolver *r, const ol_input *in, const ol_settings **out)
{
    *out = NULL;
    if (r->failed)
        return false;
    const ol_config *c = NULL;
    char *abs = NULL, *dir = NULL;
    if (r->cwd)
        input_location(r, in, &abs, &dir);
    if (!r->opts.isolated && !config_for_abs_dir(r, dir, &c)) {
        free(abs);
        free(dir);
        return false;
    }
    bool *enabled = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    bool *hidden = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    bool *exact = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    resolve_enabled(r, c, abs, enabled, hidden, exact);
    free(abs);
    free(dir);
    bool test_defaults = !(c && c->has_per_file_ignores) && !r->opts.test_code_linted;
    for (size_t i = 0; i < r->settings.len; i++) {
        if (memcmp(r->settings.items[i]->enabled, enabled, ol_rule_count * sizeof(bool)) == 0 &&
            memcmp(r->settings.items[i]->hidden, hidden, ol_rule_count * sizeof(bool)) == 0 &&
            memcmp(r->settings.items[i]->exact, exact, ol_rule_count * sizeof(bool)) == 0 &&
            r->settings.items[i]->test_defaults == test_defaults &&
            r->settings.items[i]->ran_on_gpu == r->opts.ran_on_gpu) {
            free(enabled);
            free(hidden);
            free(exact);
            *out = r->settings.items[i];
            return true;
        }
    }
    ol_settings *s = ol_xcalloc(1, sizeof(*s));
    s->enabled = enabled;
    s->hidden = hidden;
    s->exact = exact;
    s->test_defaults = test_defaults;
    s->ran_on_gpu = r->opts.ran_on_gpu;
    ol_vec_push(&r->settings, s);
    *out = s;
    return true;
}

/* ---- --show-settings ------------------------------------------------------------------ */

static void show_list(ol_buf *out, const char *key, const ol_strvec *v)
{
    ol_buf_printf(out, "  %s = [", key);
    for (size_t i = 0; i < v->len; i++)
        ol_buf_printf(out, "%s\"%s\"", i ? ", " : "", v->items[i]);
    ol_buf_puts(out, "]\n");
}

static void show_selection(ol_buf *out, const ol_selection *s, bool cli)
{
    bool any = false;
    if (s->has_select) {
        show_list(out, cli ? "--select" : "select", &s->select);
        any = true;
    }
    if (s->extend_select.len) {
        show_list(out, cli ? "--extend-select" : "extend-select", &s->extend_select);
        any = true;
    }
    if (s->ignore.len) {
        show_list(out, cli ? "--ignore" : "ignore", &s->ignore);
        any = true;
    }
    if (!any)
        ol_buf_puts(out, "  (none)\n");
}

bool ol_resolver_show(ol_resolver *r, const ol_input *in, ol_buf *out)
{
    if (r->failed)
        return false;
    const ol_config *c = NULL;
    char *abs = NULL, *dir = NULL;
    bool is_dir = false;
    if (r->cwd) {
        input_location(r, in, &abs, &dir);
        /* a directory: the settings of the files directly in it */
        struct stat st;
        is_dir = !in->from_stdin && abs && stat(abs, &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir) {
            free(dir);
            dir = abs;
            abs = NULL;
        }
    }
    if (!r->opts.isolated && !config_for_abs_dir(r, dir, &c)) {
        free(abs);
        free(dir);
        return false;
    }
    /* paths escaped: a directory name cannot forge a line of this output */
    ol_buf shown = {0};
    ol_escape_display(&shown, in->from_stdin && !r->opts.stdin_filename ? "- (standard input)" : in->path, true);
    ol_buf_printf(out, "Settings for: %s%s\n", shown.data ? shown.data : "",
                  is_dir ? " (a directory: the settings of the files in it, before per-file ignores)" : "");
    if (r->opts.isolated) {
        ol_buf_puts(out, "Config file: none (--isolated)\n");
    } else if (!c) {
        ol_buf_puts(out, "Config file: none (no pyproject.toml with [tool.oomlint] here or above)\n");
    } else {
        ol_buf_clear(&shown);
        ol_escape_display(&shown, c->path, true);
        ol_buf_printf(out, "Config file: %s%s\n", shown.data ? shown.data : "", c == r->explicit_config ? " (--config)" : "");
    }
    ol_buf_free(&shown);
    if (c) {
        ol_buf_puts(out, "\nRule selection from the config file:\n");
        show_selection(out, &c->selection, false);
    }
    ol_buf_puts(out, "\nRule selection from the command line (applied after the config file):\n");
    if (r->opts.cli)
        show_selection(out, r->opts.cli, true);
    else
        ol_buf_puts(out, "  (none)\n");

    ol_buf_puts(out, "\nPer-file ignores that apply:\n");
    bool any = false;
    const char *rel = c && abs ? below(abs, c->dir) : NULL;
    const ol_pfi_vec *lists[2] = {c ? &c->per_file_ignores : NULL, c ? &c->extend_per_file_ignores : NULL};
    for (size_t l = 0; l < 2 && c && abs; l++) {
        for (size_t i = 0; i < lists[l]->len; i++) {
            const ol_per_file_ignore *p = &lists[l]->items[i];
            if (!ol_glob_match(p->pattern, rel, abs, false))
                continue;
            ol_buf_printf(out, "  \"%s\" = [", p->pattern);
            for (size_t k = 0; k < p->selectors.len; k++)
                ol_buf_printf(out, "%s\"%s\"", k ? ", " : "", p->selectors.items[k]);
            ol_buf_printf(out, "]  (%s:%u, %s)\n", c->path, p->line, l ? "extend-per-file-ignores" : "per-file-ignores");
            any = true;
        }
    }
    if (default_test_code(r, c, abs)) {
        const char *base = pattern_base(r, c);
        const char *drel = base ? below(abs, base) : NULL;
        ol_strvec ignores = {0};
        ol_default_test_ignores(&ignores);
        for (const char *const *p = ol_default_test_patterns; *p; p++) {
            if (!ol_glob_match(*p, drel, abs, false))
                continue;
            ol_buf_printf(out, "  \"%s\" = [", *p);
            for (size_t k = 0; k < ignores.len; k++)
                ol_buf_printf(out, "%s\"%s\"", k ? ", " : "", ignores.items[k]);
            ol_buf_puts(out, "]  (default: test code; findings counted in the summary)\n");
            any = true;
        }
        ol_strvec_free(&ignores);
    }
    if (!any)
        ol_buf_puts(out, "  (none)\n");
    if (abs && c && c->has_per_file_ignores)
        ol_buf_printf(out, "  (%s sets per-file-ignores, which replaces the default for test code)\n", c->path);

    bool *enabled = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    bool *hidden = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    bool *exact = ol_xcalloc(ol_rule_count ? ol_rule_count : 1, sizeof(bool));
    resolve_enabled(r, c, abs, enabled, hidden, exact);
    ol_buf_puts(out, "\nEnabled rules:\n");
    any = false;
    for (size_t i = 0; i < ol_rule_count; i++)
        if (enabled[i]) {
            ol_buf_printf(out, "  %s  %s%s\n", ol_rules[i]->code, ol_rules[i]->name,
                          exact[i] ? "  (selected by code: also in code that runs once)" : "");
            any = true;
        }
    if (!any)
        ol_buf_puts(out, "  (none)\n");
    ol_buf_puts(out, "\nDisabled rules:\n");
    any = false;
    for (size_t i = 0; i < ol_rule_count; i++) {
        if (enabled[i])
            continue;
        ol_buf_printf(out, "  %s  %s%s\n", ol_rules[i]->code, ol_rules[i]->name,
                      hidden[i]              ? " (test code: the default per-file-ignores)"
                      : ol_rules[i]->opt_in ? " (opt-in)"
                                            : "");
        any = true;
    }
    if (!any)
        ol_buf_puts(out, "  (none)\n");
    free(enabled);
    free(hidden);
    free(exact);

    ol_buf_puts(out, "\nExclude:\n");
    any = false;
    if (c) {
        for (size_t i = 0; i < c->exclude.len; i++)
            ol_buf_printf(out, "  \"%s\"  (%s, relative to %s)\n", c->exclude.items[i], c->path, c->dir);
        any = c->exclude.len > 0;
    }
    for (size_t i = 0; r->opts.cli_exclude && i < r->opts.cli_exclude->len; i++) {
        ol_buf_printf(out, "  \"%s\"  (--exclude)\n", r->opts.cli_exclude->items[i]);
        any = true;
    }
    if (!any)
        ol_buf_puts(out, "  (none)\n");
    if (c && abs)
        ol_buf_printf(out, "\nExcluded by the config file: %s\n", excluded_by(c, abs) ? "yes" : "no");
    free(abs);
    free(dir);
    return true;
}
