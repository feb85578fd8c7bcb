/*
 * gitignore.c - reading and matching gitignore patterns (see gitignore.h).
 */
#include "gitignore.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "select.h"
#include "util.h"

/* a .gitignore larger than this is not read (git has a similar limit) */
#define OL_GITIGNORE_MAX_BYTES (100u * 1024u * 1024u)

typedef struct pattern {
    ol_strvec parts;     /* anchored: the components; else one name pattern */
    bool anchored, negate, dir_only;
} pattern;

typedef struct owner owner;

struct ol_gitignore {
    ol_gitignore *parent; /* the rules of lower precedence */
    char *base;           /* absolute directory the patterns are relative to */
    char *dir;            /* absolute directory whose entries are asked about */
    OL_VEC(pattern) patterns;
    owner *own;
};

struct owner {
    OL_VEC(ol_gitignore *) sets;
};

static void parse(ol_gitignore *g, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = ol_xstrndup(p, n);
        p += n + (nl ? 1 : 0);
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        /* trailing spaces go unless escaped */
        while (l && line[l - 1] == ' ' && !(l >= 2 && line[l - 2] == '\\'))
            line[--l] = '\0';
        char *s = line;
        if (!*s || *s == '#') {
            free(line);
            continue;
        }
        pattern pat = {0};
        if (*s == '!') {
            pat.negate = true;
            s++;
        }
        l = strlen(s);
        if (l && s[l - 1] == '/') {
            pat.dir_only = true;
            s[--l] = '\0';
        }
        pat.anchored = strchr(s, '/') != NULL;
        if (pat.anchored) {
            const char *c = s;
            while (*c) {
                const char *slash = strchr(c, '/');
                size_t cl = slash ? (size_t)(slash - c) : strlen(c);
                if (cl)
                    ol_vec_push(&pat.parts, ol_xstrndup(c, cl));
                c += cl + (slash ? 1 : 0);
            }
        } else if (*s) {
            ol_vec_push(&pat.parts, ol_xstrdup(s));
        }
        if (pat.parts.len)
            ol_vec_push(&g->patterns, pat);
        else
            ol_strvec_free(&pat.parts);
        free(line);
    }
}

static void read_into(ol_gitignore *g, const char *file)
{
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    char *bytes = NULL;
    size_t len = 0;
    if (ol_read_file(file, OL_GITIGNORE_MAX_BYTES, &bytes, &len) == 0)
        parse(g, bytes, len);
    free(bytes);
}

static ol_gitignore *new_set(owner *own, ol_gitignore *parent, const char *base, const char *dir)
{
    ol_gitignore *g = ol_xcalloc(1, sizeof(*g));
    g->parent = parent;
    g->base = ol_xstrdup(base);
    g->dir = ol_xstrdup(dir);
    g->own = own;
    ol_vec_push(&own->sets, g);
    return g;
}

/* "a/b" made absolute and its . and .. folded, lexically */
static char *absolute(const char *path)
{
    OL_VEC(char *) parts = {0};
    char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
    if (path[0] != '/' && !cwd)
        return NULL;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = pass == 0 ? (cwd ? cwd : "") : path;
        while (*p) {
            const char *slash = strchr(p, '/');
            size_t n = slash ? (size_t)(slash - p) : strlen(p);
            if (n == 2 && p[0] == '.' && p[1] == '.') {
                if (parts.len)
                    free(parts.items[--parts.len]);
            } else if (n && !(n == 1 && p[0] == '.')) {
                ol_vec_push(&parts, ol_xstrndup(p, n));
            }
            p += n + (slash ? 1 : 0);
        }
    }
    free(cwd);
    ol_buf b = {0};
    for (size_t i = 0; i < parts.len; i++) {
        ol_buf_putc(&b, '/');
        ol_buf_puts(&b, parts.items[i]);
        free(parts.items[i]);
    }
    ol_vec_free(&parts);
    if (!b.len)
        ol_buf_putc(&b, '/');
    return ol_buf_take(&b);
}

static char *join(const char *dir, const char *name)
{
    return strcmp(dir, "/") == 0 ? ol_xasprintf("/%s", name) : ol_xasprintf("%s/%s", dir, name);
}

/* git's global excludes file: core.excludesFile from ~/.gitconfig when it
 * is written plainly, else the XDG default. NULL if there is none. */
static char *global_excludes(void)
{
    const char *home = getenv("HOME");
    char *found = NULL;
    if (home && *home) {
        char *cfg = ol_xasprintf("%s/.gitconfig", home);
        char *bytes = NULL;
        size_t len = 0;
        if (ol_read_file(cfg, 1024 * 1024, &bytes, &len) == 0) {
            bool core = false;
            const char *p = bytes, *end = bytes + len;
            while (p < end && !found) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                char *line = ol_xstrndup(p, n);
                p += n + (nl ? 1 : 0);
                char *s = line;
                while (isspace((unsigned char)*s))
                    s++;
                if (*s == '[') {
                    core = strncasecmp(s, "[core]", 6) == 0;
                } else if (core && strncasecmp(s, "excludesfile", 12) == 0) {
                    char *v = s + 12;
                    while (*v == ' ' || *v == '\t')
                        v++;
                    if (*v == '=') {
                        v++;
                        while (*v == ' ' || *v == '\t')
                            v++;
                        size_t vl = strlen(v);
                        while (vl && isspace((unsigned char)v[vl - 1]))
                            v[--vl] = '\0';
                        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                            v[vl - 1] = '\0';
                            v++;
                        }
                        if (v[0] == '~' && v[1] == '/')
                            found = ol_xasprintf("%s%s", home, v + 1);
                        else if (*v)
                            found = ol_xstrdup(v);
                    }
                }
                free(line);
            }
        }
        free(bytes);
        free(cfg);
    }
    if (found)
        return found;
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg)
        return ol_xasprintf("%s/git/ignore", xdg);
    if (home && *home)
        return ol_xasprintf("%s/.config/git/ignore", home);
    return NULL;
}

ol_gitignore *ol_gitignore_open(const char *dir)
{
    char *abs = absolute(dir);
    if (!abs)
        return NULL;
    /* the work tree's top: the nearest directory with a .git */
    char *top = ol_xstrdup(abs);
    for (;;) {
        char *git = join(top, ".git");
        struct stat st;
        bool here = lstat(git, &st) == 0;
        free(git);
        if (here)
            break;
        if (strcmp(top, "/") == 0) {
            free(top);
            free(abs);
            return NULL;
        }
        char *slash = strrchr(top, '/');
        if (slash == top)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    owner *own = ol_xcalloc(1, sizeof(*own));
    ol_gitignore *g = new_set(own, NULL, top, top);
    char *global = global_excludes();
    if (global)
        read_into(g, global);
    free(global);
    char *info = ol_xasprintf("%s/.git/info/exclude", strcmp(top, "/") == 0 ? "" : top);
    read_into(g, info);
    free(info);
    /* each directory's .gitignore from the top down to dir */
    const char *rest = abs + strlen(top);
    char *cur = ol_xstrdup(top);
    for (;;) {
        ol_gitignore *level = new_set(own, g, cur, cur);
        char *file = join(cur, ".gitignore");
        read_into(level, file);
        free(file);
        g = level;
        while (*rest == '/')
            rest++;
        if (!*rest)
            break;
        const char *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        char *name = ol_xstrndup(rest, n);
        char *next = join(cur, name);
        free(name);
        free(cur);
        cur = next;
        rest += n;
    }
    free(cur);
    free(top);
    free(abs);
    return g;
}

ol_gitignore *ol_gitignore_enter(ol_gitignore *parent, const char *subdir)
{
    if (!parent)
        return NULL;
    char *dir = join(parent->dir, subdir);
    ol_gitignore *g = new_set(parent->own, parent, dir, dir);
    char *file = join(dir, ".gitignore");
    read_into(g, file);
    free(file);
    free(dir);
    return g;
}

/* Do the pattern's components match all of path's? A `**` component
 * matches any number of components (one or more when it ends the
 * pattern). Dynamic programming: |pattern| x |path| steps at most. */
static bool match_anchored(const ol_strvec *pat, char *const *path, size_t ns)
{
    size_t np = pat->len, w = ns + 1;
    bool *dp = ol_xcalloc((np + 1) * w, sizeof(bool));
    dp[np * w + ns] = true;
    for (size_t i = np; i-- > 0;) {
        bool star = strcmp(pat->items[i], "**") == 0;
        for (size_t j = ns + 1; j-- > 0;) {
            bool v;
            if (star && i == np - 1)
                v = j < ns;
            else if (star)
                v = dp[(i + 1) * w + j] || (j < ns && dp[i * w + j + 1]);
            else
                v = j < ns && dp[(i + 1) * w + j + 1] && fnmatch(pat->items[i], path[j], 0) == 0;
            dp[i * w + j] = v;
        }
    }
    bool hit = dp[0];
    free(dp);
    return hit;
}

bool ol_gitignore_ignored(const ol_gitignore *g, const char *name, bool is_dir)
{
    if (!g)
        return false;
    char *full = join(g->dir, name);
    /* lowest precedence first: the last match decides */
    OL_VEC(const ol_gitignore *) chain = {0};
    for (const ol_gitignore *s = g; s; s = s->parent)
        ol_vec_push(&chain, s);
    bool ignored = false;
    for (size_t c = chain.len; c-- > 0;) {
        const ol_gitignore *s = chain.items[c];
        if (!s->patterns.len)
            continue;
        size_t bl = strlen(s->base);
        const char *rel = strcmp(s->base, "/") == 0 ? full + 1 : full + bl + 1;
        if (strcmp(s->base, "/") != 0 && (strncmp(full, s->base, bl) != 0 || full[bl] != '/'))
            continue;
        ol_strvec comps = {0};
        for (size_t i = 0; i < s->patterns.len; i++) {
            const pattern *p = &s->patterns.items[i];
            if (p->dir_only && !is_dir)
                continue;
            bool hit;
            if (p->anchored) {
                if (!comps.len) {
                    const char *q = rel;
                    while (*q) {
                        const char *slash = strchr(q, '/');
                        size_t n = slash ? (size_t)(slash - q) : strlen(q);
                        ol_vec_push(&comps, ol_xstrndup(q, n));
                        q += n + (slash ? 1 : 0);
                    }
                }
                hit = match_anchored(&p->parts, comps.items, comps.len);
            } else {
                hit = fnmatch(p->parts.items[0], name, 0) == 0;
            }
            if (hit)
                ignored = !p->negate;
        }
        ol_strvec_free(&comps);
    }
    ol_vec_free(&chain);
    free(full);
    return ignored;
}

void ol_gitignore_free(ol_gitignore *root)
{
    if (!root)
        return;
    owner *own = root->own;
    for (size_t i = 0; i < own->sets.len; i++) {
        ol_gitignore *g = own->sets.items[i];
        for (size_t k = 0; k < g->patterns.len; k++)
            ol_strvec_free(&g->patterns.items[k].parts);
        ol_vec_free(&g->patterns);
        free(g->base);
        free(g->dir);
        free(g);
    }
    ol_vec_free(&own->sets);
    free(own);
}
