/*
 * torchfloor.c - the oldest PyTorch a project declares (torchfloor.h).
 *
 * Reads a handful of small files above the linted one, only when a rule asks
 * (a fix that needs a newer API): no cost on a run that offers no such fix.
 * The parse is deliberately plain: a line that names the package `torch` (not
 * `torchvision`) followed by `>=`, `==`, `~=` or `>` and a version; the first
 * such line in the nearest file wins.
 */
#include "torchfloor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

static size_t skip(const char *text, size_t len, size_t k, const char *chars)
{
    while (k < len && strchr(chars, text[k]) != NULL && text[k] != '\0')
        k++;
    return k;
}

unsigned ol_torch_floor_in_text(const char *text, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++) {
        if (memcmp(text + i, "torch", 5) != 0 || (i > 0 && name_char(text[i - 1])))
            continue;
        size_t k = i + 5;
        if (k < len && name_char(text[k]))
            continue; /* torchvision, torch-geometric */
        /* `torch>=2.3`, `"torch >= 2.3"`, Poetry's `torch = ">=2.3"` or `torch = "^2.3"` */
        k = skip(text, len, k, " \t\"'");
        if (k + 1 < len && text[k] == '=' && text[k + 1] != '=')
            k = skip(text, len, k + 1, " \t\"'");
        bool bound = false;
        if (k + 1 < len && (memcmp(text + k, ">=", 2) == 0 || memcmp(text + k, "==", 2) == 0 ||
                            memcmp(text + k, "~=", 2) == 0)) {
            k += 2;
            bound = true;
        } else if (k < len && (text[k] == '>' || text[k] == '^')) {
            k++;
            bound = true;
        }
        if (!bound)
            continue;
        k = skip(text, len, k, " \t");
        unsigned major = 0, minor = 0;
        size_t d = k;
        while (d < len && text[d] >= '0' && text[d] <= '9' && major < 1000)
            major = major * 10 + (unsigned)(text[d++] - '0');
        if (d == k)
            continue;
        if (d < len && text[d] == '.') {
            d++;
            while (d < len && text[d] >= '0' && text[d] <= '9' && minor < 1000)
                minor = minor * 10 + (unsigned)(text[d++] - '0');
        }
        return major * 100 + (minor > 99 ? 99 : minor);
    }
    return 0;
}

static char *parent_of(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    if (slash == dir)
        return dir[1] ? ol_xstrdup("/") : NULL;
    return ol_xstrndup(dir, (size_t)(slash - dir));
}

unsigned ol_torch_floor(const char *path)
{
    static const char *const names[] = {"requirements.txt", "requirements-dev.txt", "requirements/base.txt",
                                        "pyproject.toml", "setup.cfg", "setup.py", "environment.yml",
                                        "environment.yaml", NULL};
    if (!path || !*path)
        return 0;
    char *dir = strchr(path, '/') ? parent_of(path) : ol_xstrdup(".");
    for (int level = 0; dir && level < 8; level++) {
        for (const char *const *n = names; *n; n++) {
            char *file = ol_xasprintf("%s/%s", dir, *n);
            char *text = NULL;
            size_t len = 0;
            int err = ol_read_file(file, 1 << 20, &text, &len);
            free(file);
            if (err != 0 || !text)
                continue;
            unsigned floor = ol_torch_floor_in_text(text, len);
            free(text);
            if (floor) {
                free(dir);
                return floor;
            }
        }
        char *git = ol_xasprintf("%s/.git", dir);
        bool root = access(git, F_OK) == 0;
        free(git);
        if (root || strcmp(dir, ".") == 0)
            break;
        char *up = parent_of(dir);
        free(dir);
        dir = up;
    }
    free(dir);
    return 0;
}
