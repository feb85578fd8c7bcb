/*
 * probe.c - `oomlint probe`: runs each rule's scenario, a `bad` and a
 * `fixed` variant of the same small step, each in a fresh Python process,
 * and reports what the pattern costs: peak and per-step growth of memory,
 * autograd nodes kept alive, time per step, whether both variants computed
 * the same numbers, and a verdict. `--script` (probe_script.c) runs a user's
 * own script instead.
 *
 * This file is the command around both modes: parse options; find a Python
 * that imports torch (--python, else python3, /usr/bin/python3, ...); check
 * the device; write the embedded probe/ files to a private temporary folder
 * (or use OOMLINT_PROBE_DIR); hand over to the scenarios
 * (probe_scenarios.c) or the script (probe_script.c); clean up. SIGINT,
 * SIGTERM and SIGHUP stop the children and remove the temporary folder.
 *
 * How verdicts are reached is described in probe_scenarios.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "emit.h"
#include "lint.h"
#include "portable.h"
#include "probe_internal.h"

extern char **environ;

/* ---- usage and options -------------------------------------------------------------------- */

static void probe_usage(FILE *out)
{
    fputs("Usage:\n"
          "  oomlint probe [OPTIONS]                  measure what each rule's pattern costs\n"
          "  oomlint probe --script FILE [OPTIONS] [-- ARGS]\n"
          "                                           run your script and confirm its findings\n"
          "\n"
          "Each rule's scenario runs a `bad` and a `fixed` variant of the same small training or\n"
          "evaluation step in fresh Python processes, and reports for both the peak memory, the\n"
          "growth per step (memory kept for backward, autograd nodes kept alive, resident memory),\n"
          "the time per step, whether both computed the same numbers, and a verdict: confirmed,\n"
          "no measurable cost, or needs a GPU.\n"
          "\n"
          "A cost is confirmed when bad exceeds fixed, for a cost the rule claims, by more than a\n"
          "threshold derived from the scenario's tensor sizes (its scale S, e.g. one batch's\n"
          "activations): growth per step above max(1 KiB, S/16) kept for backward (CPU) or\n"
          "allocated (CUDA), or half an autograd node, or max(256 KiB, S/4) resident; a peak\n"
          "above max(4 KiB, S/16) (CPU: kept for backward plus gradients), max(64 KiB, S/16)\n"
          "(CUDA: max allocated) or max(2 MiB, S/4) (resident, or as the driver sees it); the\n"
          "fastest step 10% slower, the median too unless the fastest is 1.5x slower. Growth is the\n"
          "least-squares slope after the first fifth of the iterations.\n"
          "\n"
          "Options:\n"
          "  --device auto|cpu|cuda  where to measure (default auto: cuda when PyTorch sees a GPU)\n"
          "  --rules CODES           only these rules' scenarios (codes or prefixes, comma-separated)\n"
          "  --iterations N          iterations per variant (default 20)\n"
          "  --python PATH           the Python to use (default: the first of python3,\n"
          "                          /usr/bin/python3, /usr/local/bin/python3, python that imports torch)\n"
          "  --format text|json      a table (default) or JSON\n"
          "  --plot FILE.svg         draw memory per step, bad against fixed, one panel per scenario\n"
          "  --jobs N                variants run at once on the CPU (default 2; 1 on a GPU)\n"
          "  --timeout SECONDS       stop a process running longer than this (default 600)\n"
          "  --output-format FORMAT  the same as --format (text, also `full`, or json)\n"
          "\n",
          out);
    fputs("--script FILE runs FILE with your arguments (it runs your code), counts optimizer steps\n"
          "(Optimizer.step, GradScaler.step), stops after --steps N (default 20), lints FILE, and\n"
          "says for each finding whether the memory it is about grows step after step\n"
          "(`confirmed (+X per step at line L)`) or not (`not observed`), and where memory grows\n"
          "at lines no rule flagged. It also gives a memory budget at the step with the most memory\n"
          "(parameters, gradients, optimizer state, kept for backward, other live tensors), what\n"
          "grew since the first step and which lines made it, and when the run would run out:\n"
          "  --steps N               optimizer steps to run (default 20)\n"
          "  --memory SIZE           the memory to project against (24GiB, 16GB; default: the GPU's)\n"
          "  --snapshot FILE         on a GPU, write the CUDA allocator's history for PyTorch's\n"
          "                          memory viewer (torch 2.0+)\n"
          "With --device cpu (or auto and no GPU), a script written for CUDA runs on the CPU: .cuda(),\n"
          ".to(\"cuda\"), device=\"cuda\" go to the CPU, torch.cuda.is_available() is True, CUDA autocast\n"
          "is off (float32) and GradScaler disabled; the report says what was mapped. Distributed\n"
          "launches and custom CUDA extensions are out of scope there.\n"
          "\n"
          "Exit status: 0 all ran (and agreed), 1 a scenario failed or disagreed, or the script\n"
          "failed before its first step, 2 usage error or no usable Python/PyTorch/device.\n",
          out);
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Returns 0 to go on, 1 when --help was printed, 2 on a usage error. */
static int parse_opts(ol_probe_opts *o, int argc, char **argv, ol_buf *err)
{
    memset(o, 0, sizeof *o);
    o->iterations = 20;
    o->steps = 20;
    o->jobs = 0;
    o->timeout_s = 600;
    bool iterations_given = false, steps_given = false, rules_given = false, memory_given = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            o->script_args = argv + i + 1;
            o->script_argc = argc - i - 1;
            break;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            probe_usage(stdout);
            return 1;
        }
        static const char *const known[] = {"device", "rules", "iterations", "python", "format", "plot",
                                            "jobs", "timeout", "script", "steps", "output-format", "memory",
                                            "snapshot"};
        if (strncmp(arg, "--", 2) != 0) {
            /* `-script train.py`: a long option with one dash */
            const char *near = arg[0] == '-' && arg[1] ? ol_closest_word(arg + 1, strcspn(arg + 1, "="), known,
                                                                         OL_ARRAY_LEN(known)) : NULL;
            if (near)
                ol_buf_printf(err, "unknown option '%.40s' for 'probe' (did you mean '--%s'?)", arg, near);
            else
                ol_buf_printf(err, "'probe' takes no paths (got '%s'); use --script FILE to run a script", arg);
            return 2;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const char *key = NULL;
        for (size_t k = 0; k < OL_ARRAY_LEN(known); k++)
            if (strlen(known[k]) == len && strncmp(known[k], name, len) == 0)
                key = known[k];
        if (!key) {
            ol_buf_printf(err, "unknown option '--%.*s' for 'probe'", (int)(len < 40 ? len : 40), name);
            const char *near = ol_closest_word(name, len, known, OL_ARRAY_LEN(known));
            if (near)
                ol_buf_printf(err, " (did you mean '--%s'?)", near);
            return 2;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!value) {
            if (i + 1 >= argc) {
                ol_buf_printf(err, "option '--%s' needs a value", key);
                return 2;
            }
            value = argv[++i];
        }
        if (strcmp(key, "device") == 0) {
            if (strcmp(value, "auto") == 0)
                o->device = OL_PROBE_AUTO;
            else if (strcmp(value, "cpu") == 0)
                o->device = OL_PROBE_CPU;
            else if (strcmp(value, "cuda") == 0)
                o->device = OL_PROBE_CUDA;
            else {
                ol_buf_printf(err, "invalid value '%s' for '--device' (expected: auto, cpu, cuda)", value);
                return 2;
            }
        } else if (strcmp(key, "rules") == 0) {
            free(o->rules);
            o->rules = ol_xstrdup(value);
            rules_given = true;
        } else if (strcmp(key, "iterations") == 0) {
            if (!parse_int(value, 4, 100000, &o->iterations)) {
                ol_buf_printf(err, "invalid value '%s' for '--iterations' (expected a number from 4 to 100000)",
                              value);
                return 2;
            }
            iterations_given = true;
        } else if (strcmp(key, "steps") == 0) {
            if (!parse_int(value, 2, 100000, &o->steps)) {
                ol_buf_printf(err, "invalid value '%s' for '--steps' (expected a number from 2 to 100000)", value);
                return 2;
            }
            steps_given = true;
        } else if (strcmp(key, "python") == 0) {
            free(o->python);
            o->python = ol_xstrdup(value);
        } else if (strcmp(key, "format") == 0 || strcmp(key, "output-format") == 0) {
            if (strcmp(value, "json") == 0)
                o->json = true;
            else if (strcmp(value, "text") == 0 || strcmp(value, "full") == 0)
                o->json = false;
            else {
                ol_buf_printf(err, "invalid value '%s' for '--%s' (the probe writes a table: text or full, or json)",
                              value, key);
                return 2;
            }
        } else if (strcmp(key, "memory") == 0) {
            if (!ol_parse_size(value, &o->memory)) {
                ol_buf_printf(err, "invalid value '%s' for '--memory' (expected a size: 24GiB, 16GB, 8000MiB or bytes)",
                              value);
                return 2;
            }
            memory_given = true;
        } else if (strcmp(key, "snapshot") == 0) {
            if (!*value) {
                ol_buf_puts(err, "option '--snapshot' needs a file name");
                return 2;
            }
            free(o->snapshot);
            o->snapshot = ol_xstrdup(value);
        } else if (strcmp(key, "plot") == 0) {
            if (!*value) {
                ol_buf_puts(err, "option '--plot' needs a file name");
                return 2;
            }
            free(o->plot);
            o->plot = ol_xstrdup(value);
        } else if (strcmp(key, "jobs") == 0) {
            if (!parse_int(value, 1, 64, &o->jobs)) {
                ol_buf_printf(err, "invalid value '%s' for '--jobs' (expected a number from 1 to 64)", value);
                return 2;
            }
        } else if (strcmp(key, "timeout") == 0) {
            if (!parse_int(value, 1, 7 * 24 * 3600, &o->timeout_s)) {
                ol_buf_printf(err, "invalid value '%s' for '--timeout' (expected seconds, at least 1)", value);
                return 2;
            }
        } else if (strcmp(key, "script") == 0) {
            if (!*value) {
                ol_buf_puts(err, "option '--script' needs a file name");
                return 2;
            }
            free(o->script);
            o->script = ol_xstrdup(value);
        }
    }
    if (o->script && (rules_given || iterations_given)) {
        ol_buf_printf(err, "'--%s' measures the scenarios; with --script use --steps", rules_given ? "rules" : "iterations");
        return 2;
    }
    if (!o->script && (memory_given || o->snapshot)) {
        ol_buf_printf(err, "'--%s' is about a script's run: use it with --script FILE", memory_given ? "memory" : "snapshot");
        return 2;
    }
    if (!o->script && steps_given) {
        ol_buf_puts(err, "'--steps' counts a script's optimizer steps: use it with --script (scenarios take --iterations)");
        return 2;
    }
    if (!o->script && o->script_argc > 0) {
        ol_buf_puts(err, "arguments after '--' are for a script: use them with --script FILE");
        return 2;
    }
    return 0;
}

/* "24GiB", "24G" (binary), "16GB" (decimal), "8000MiB", "1e9", "512": bytes. */
bool ol_parse_size(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v <= 0)
        return false;
    while (*end == ' ')
        end++;
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1},          {"B", 1},          {"K", 1024.0},       {"KiB", 1024.0},       {"KB", 1e3},
                 {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1e6},         {"G", 1073741824.0},   {"GiB", 1073741824.0},
                 {"GB", 1e9},      {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12}};
    for (size_t i = 0; i < OL_ARRAY_LEN(units); i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            double bytes = v * units[i].scale;
            if (bytes < 1 || bytes > 1e18)
                return false;
            *out = bytes;
            return true;
        }
    }
    return false;
}

static void opts_free(ol_probe_opts *o)
{
    free(o->snapshot);
    free(o->rules);
    free(o->python);
    free(o->plot);
    free(o->script);
}

/* ---- progress ------------------------------------------------------------------------------ */

void ol_progress(ol_probe_env *env, const char *fmt, ...)
{
    if (!env->progress)
        return;
    ol_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    double elapsed = (double)(ol_now_ns() - env->started_ns) / 1e9;
    fprintf(stderr, "\r\033[K%s, %.1f s", b.data ? b.data : "", elapsed);
    fflush(stderr);
    ol_buf_free(&b);
}

void ol_progress_clear(ol_probe_env *env)
{
    if (!env->progress)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* ---- the children's environment -------------------------------------------------------------- */

static bool env_has(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* The environment plus our settings. Scenarios get glibc's mmap threshold
 * pinned at its default (128 KiB): otherwise glibc raises it after freeing a
 * large block and keeps freed tensors in the heap, so resident memory grows
 * with fragmentation, not with what the pattern keeps alive. A user's own
 * script (scenarios = false) runs with the environment it was given. */
static char **build_envp(bool scenarios)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **envp = ol_xcalloc(n + 8, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "PYTHONDONTWRITEBYTECODE=", 24) == 0 || strncmp(environ[i], "PYTHONUNBUFFERED=", 17) == 0)
            continue;
        envp[k++] = ol_xstrdup(environ[i]);
    }
    envp[k++] = ol_xstrdup("PYTHONDONTWRITEBYTECODE=1");
    envp[k++] = ol_xstrdup("PYTHONUNBUFFERED=1");
    if (scenarios) {
        if (!env_has("MALLOC_MMAP_THRESHOLD_"))
            envp[k++] = ol_xstrdup("MALLOC_MMAP_THRESHOLD_=131072");
        if (!env_has("PYTHONHASHSEED"))
            envp[k++] = ol_xstrdup("PYTHONHASHSEED=0");
    }
    envp[k] = NULL;
    return envp;
}

static void envp_free(char **envp)
{
    ol_argv_free(envp);
}

/* ---- the probe's files ----------------------------------------------------------------------- */

static bool write_all(const char *path, const unsigned char *data, size_t len, ol_buf *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        ol_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
        return false;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ol_buf_printf(err, "cannot write '%s': %s", path, w < 0 ? strerror(errno) : "short write");
            close(fd);
            return false;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        ol_buf_printf(err, "cannot write '%s': %s", path, strerror(errno));
        return false;
    }
    return true;
}

/* Removes a tree this process made (files and folders only, no links followed). */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char *child = ol_xasprintf("%s/%s", path, e->d_name);
                remove_tree(child);
                free(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static bool materialize(ol_probe_env *env, ol_buf *err)
{
    const char *override = getenv("OOMLINT_PROBE_DIR");
    if (override && *override) {
        char *harness = ol_xasprintf("%s/harness.py", override);
        bool ok = access(harness, R_OK) == 0;
        free(harness);
        if (!ok) {
            ol_buf_printf(err, "OOMLINT_PROBE_DIR='%s' has no readable harness.py", override);
            return false;
        }
        env->dir = ol_xstrdup(override);
        env->dir_is_temp = false;
        return true;
    }
    char *templ = ol_xasprintf("%s/oomlint-probe-XXXXXX", ol_tmpdir());
    if (!mkdtemp(templ)) {
        ol_buf_printf(err, "cannot make a temporary folder under %s: %s", ol_tmpdir(), strerror(errno));
        free(templ);
        return false;
    }
    env->dir = templ;
    env->dir_is_temp = true;
    for (size_t i = 0; i < ol_probe_file_count; i++) {
        const ol_probe_file *f = &ol_probe_files[i];
        /* make the file's folders (paths are relative, '/'-separated) */
        for (const char *p = strchr(f->path, '/'); p; p = strchr(p + 1, '/')) {
            char *sub = ol_xasprintf("%s/%.*s", env->dir, (int)(p - f->path), f->path);
            if (mkdir(sub, 0700) != 0 && errno != EEXIST) {
                ol_buf_printf(err, "cannot make '%s': %s", sub, strerror(errno));
                free(sub);
                return false;
            }
            free(sub);
        }
        char *full = ol_xasprintf("%s/%s", env->dir, f->path);
        bool ok = write_all(full, f->data, f->len, err);
        free(full);
        if (!ok)
            return false;
    }
    return true;
}

static void env_cleanup(ol_probe_env *env)
{
    if (env->dir && env->dir_is_temp)
        remove_tree(env->dir);
    free(env->dir);
    env->dir = NULL;
    envp_free(env->envp);
    env->envp = NULL;
    free(env->py.path);
    free(env->py.torch);
    free(env->py.gpu);
    ol_sigwatch_close(env->sigfd); /* puts back the signal mask and handlers */
    env->sigfd = -1;
}

/* ---- finding Python ------------------------------------------------------------------------- */

typedef struct py_check {
    bool got;
    char *torch, *executable, *gpu;
    bool cuda;
} py_check;

static bool py_check_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    (void)c;
    py_check *pc = ctx;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rec, "t");
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(rec, "torch");
    if (strcmp(t->valuestring, "python") != 0 || !cJSON_IsString(torch)) {
        *why = "not the interpreter check's record";
        return false;
    }
    pc->got = true;
    free(pc->torch);
    pc->torch = ol_xstrdup(torch->valuestring);
    const cJSON *exe = cJSON_GetObjectItemCaseSensitive(rec, "executable");
    if (cJSON_IsString(exe) && exe->valuestring[0] == '/') {
        free(pc->executable);
        pc->executable = ol_xstrdup(exe->valuestring);
    }
    pc->cuda = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "cuda"));
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(rec, "gpu");
    if (cJSON_IsString(gpu)) {
        free(pc->gpu);
        pc->gpu = ol_xstrdup(gpu->valuestring);
    }
    return true;
}

static const char PY_CHECK[] =
    "import json, os, sys\n"
    "out = os.fdopen(3, 'w')\n"
    "import torch\n"
    "info = {'t': 'python', 'torch': torch.__version__, 'executable': sys.executable,\n"
    "        'cuda': bool(torch.cuda.is_available())}\n"
    "if info['cuda']:\n"
    "    info['gpu'] = torch.cuda.get_device_name(0)\n"
    "out.write(json.dumps(info) + '\\n')\n";

/* The absolute path of a command found on PATH, or NULL. */
static char *which(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? ol_xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    const char *p = path;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        char *full = ol_xasprintf("%.*s/%s", (int)len, len ? p : ".", name);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return full;
        free(full);
        p += len + (colon ? 1 : 0);
    }
    return NULL;
}

/* Runs the check with one interpreter; on failure appends why to tried. */
static bool try_python(ol_probe_env *env, const char *label, const char *path, ol_buf *tried)
{
    char **argv = ol_argv_new(path, "-c", PY_CHECK, (const char *)NULL);
    py_check pc = {0};
    ol_child c;
    ol_child_init(&c, argv, &pc);
    c.on_record = py_check_record;
    ol_child *kids[] = {&c};
    ol_progress(env, "looking for PyTorch: %s", label);
    ol_children_run(env, kids, 1, 1, 180);
    bool ok = pc.got && c.status == OL_CHILD_EXITED && c.exit_code == 0;
    if (ok) {
        env->py.path = ol_xstrdup(pc.executable ? pc.executable : path);
        env->py.torch = pc.torch;
        env->py.cuda = pc.cuda;
        env->py.gpu = pc.gpu;
        pc.torch = pc.gpu = NULL;
    } else {
        ol_buf line = {0};
        const char *why = c.error ? c.error : ol_child_last_line(&c, &line);
        if (!*why)
            why = "it did not report a torch version";
        ol_buf_printf(tried, "%s%s (%s): %s", tried->len ? "; " : "", label, path, why);
        ol_buf_free(&line);
    }
    free(pc.torch);
    free(pc.executable);
    free(pc.gpu);
    ol_child_free(&c);
    return ok;
}

static bool find_python(ol_probe_env *env, ol_buf *err)
{
    ol_buf tried = {0};
    const ol_probe_opts *o = env->opts;
    if (o->python) {
        char *path = which(o->python);
        if (!path) {
            ol_buf_printf(err, "cannot run --python '%s': %s", o->python,
                          strchr(o->python, '/') ? "no such executable file" : "not found on PATH");
            return false;
        }
        bool ok = try_python(env, o->python, path, &tried);
        free(path);
        if (!ok)
            ol_buf_printf(err, "--python %s cannot be used: %s", o->python, tried.data);
        ol_buf_free(&tried);
        return ok;
    }
    static const char *const candidates[] = {"python3", "/usr/bin/python3", "/usr/local/bin/python3", "python"};
    OL_VEC(char *) seen = {0};
    bool ok = false;
    for (size_t i = 0; i < OL_ARRAY_LEN(candidates) && !ok && !env->interrupted; i++) {
        char *path = which(candidates[i]);
        if (!path) {
            ol_buf_printf(&tried, "%s%s: not found", tried.len ? "; " : "", candidates[i]);
            continue;
        }
        char real[PATH_MAX];
        const char *key = realpath(path, real) ? real : path;
        bool dup = false;
        for (size_t k = 0; k < seen.len; k++)
            dup = dup || strcmp(seen.items[k], key) == 0;
        if (!dup) {
            ol_vec_push(&seen, ol_xstrdup(key));
            ok = try_python(env, candidates[i], path, &tried);
        }
        free(path);
    }
    for (size_t k = 0; k < seen.len; k++)
        free(seen.items[k]);
    ol_vec_free(&seen);
    if (!ok)
        ol_buf_printf(err,
                      "no Python with PyTorch found (tried %s). Install PyTorch (pip install torch, or "
                      "apt-get install python3-torch) or pass --python PATH",
                      tried.data ? tried.data : "nothing");
    ol_buf_free(&tried);
    return ok;
}

/* Checks before anything runs that the plot can be written where asked. */
static bool plot_writable(const char *path, ol_buf *err)
{
    char *dir = ol_xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash == dir)
        d = "/";
    else if (slash) {
        *slash = '\0';
        d = dir;
    }
    struct stat st;
    bool ok = true;
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        ol_buf_printf(err, "cannot write the plot '%s': no folder '%s'", path, d);
        ok = false;
    } else if (access(d, W_OK) != 0) {
        ol_buf_printf(err, "cannot write the plot '%s': folder '%s' is not writable", path, d);
        ok = false;
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        ol_buf_printf(err, "cannot write the plot '%s': it is a folder", path);
        ok = false;
    }
    free(dir);
    return ok;
}

/* ---- the command ------------------------------------------------------------------------- */

/* SIGINT, SIGTERM and SIGHUP arrive on a descriptor the child loop polls, so
 * an interrupted probe stops its children and removes its folder (signalfd
 * on Linux, a self-pipe elsewhere: portable.h). */
static void signals_init(ol_probe_env *env)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    env->sigfd = ol_sigwatch_open(sigs, OL_ARRAY_LEN(sigs), OL_SIGWATCH_NATIVE);
}

int ol_probe_main(int argc, char **argv)
{
    ol_probe_opts opts;
    ol_buf err = {0};
    int rc = parse_opts(&opts, argc, argv, &err);
    if (rc != 0) {
        if (rc == 2)
            fprintf(stderr, "oomlint probe: error: %s\nRun 'oomlint probe --help' for usage.\n", err.data);
        ol_buf_free(&err);
        opts_free(&opts);
        return rc == 1 ? 0 : 2;
    }
    if (opts.plot && !plot_writable(opts.plot, &err)) {
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
        ol_buf_free(&err);
        opts_free(&opts);
        return 2;
    }
    if (opts.script && ol_str_has_suffix(opts.script, ".ipynb")) {
        fprintf(stderr,
                "oomlint probe: error: --script runs a Python file, not a notebook: export '%s' first "
                "(jupyter nbconvert --to script)\n",
                opts.script);
        opts_free(&opts);
        return 2;
    }
    if (opts.script) {
        struct stat st;
        int fd = open(opts.script, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "oomlint probe: error: cannot run '%s': %s\n", opts.script,
                    fd < 0 ? strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            opts_free(&opts);
            return 2;
        }
        close(fd);
    }
    ol_probe_env env = {0};
    env.opts = &opts;
    env.started_ns = ol_now_ns();
    const char *term = getenv("TERM");
    env.progress = isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
    signals_init(&env);
    env.envp = build_envp(!opts.script);
    int status = 0;
    if (!find_python(&env, &err)) {
        status = 2;
        goto done;
    }
    if (opts.device == OL_PROBE_CUDA && !env.py.cuda) {
        ol_buf_printf(&err, "--device cuda: PyTorch %s at %s sees no CUDA device (torch.cuda.is_available() is False)",
                      env.py.torch, env.py.path);
        status = 2;
        goto done;
    }
    env.device = opts.device == OL_PROBE_CPU ? "cpu" : opts.device == OL_PROBE_CUDA ? "cuda" : env.py.cuda ? "cuda" : "cpu";
    if (opts.snapshot && strcmp(env.device, "cuda") != 0) {
        ol_buf_printf(&err,
                      "--snapshot writes the CUDA allocator's memory history, which needs a GPU: this run is on the "
                      "CPU (%s); run it where PyTorch sees a GPU (--device cuda), or leave --snapshot out",
                      opts.device == OL_PROBE_CPU ? "--device cpu" : "PyTorch sees no GPU");
        status = 2;
        goto done;
    }
    if (!materialize(&env, &err)) {
        status = 2;
        goto done;
    }
    status = opts.script ? ol_probe_script(&env) : ol_probe_scenarios(&env);

done:
    ol_progress_clear(&env);
    if (env.interrupted) {
        /* whatever was under way: its children are stopped, its folder goes below */
        fputs("oomlint probe: interrupted\n", stderr);
        status = 130;
        ol_buf_clear(&err);
    }
    if (err.len)
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
    ol_buf_free(&err);
    env_cleanup(&env);
    opts_free(&opts);
    return status;
}
