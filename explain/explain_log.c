/*
 * explain_log.c - reading the text a job left behind: every form of
 * PyTorch's out-of-memory message with its figures, the traceback printed
 * before it, the rank that printed it, and the steps and memory figures the
 * training loop printed on the way.
 *
 * The input is read as a stream, a line at a time, so a log of any size
 * costs the same memory: lines are split at LF, CRLF and a lone CR (a
 * progress bar redraws itself with CRs), a line longer than OL_OOM_MAX_LINE
 * is read in pieces cut where no message can be split, ANSI escape
 * sequences are removed, and what is kept is bounded (OL_OOM_MAX_EVENTS
 * errors with OL_OOM_MAX_FRAMES frames each, OL_OOM_MAX_SAMPLES memory
 * figures per rank, thinned evenly).
 *
 * Several processes write to one log: torchrun prefixes each line with
 * `[default0]:`, PyTorch with `[rank3]:`, Open MPI with `[1,0]<stderr>:`,
 * `srun --label` with `3: `. Each prefix names a stream, and tracebacks are
 * assembled per stream, so interleaved ranks do not mix their frames.
 *
 * The wording is PyTorch's own (c10/cuda/CUDACachingAllocator.cpp and its
 * predecessors, the cudaMallocAsync backend, the MPS allocator): each size
 * in a message is classified by the words around it, so the 1.0 ("cached"),
 * 1.x ("reserved in total by PyTorch"), 2.1 ("total capacty"), 2.x (with
 * "Process N has" clauses, "allowed", private pools) and the newest
 * ("PYTORCH_ALLOC_CONF") forms all read the same way, even when a message
 * was re-wrapped over several lines.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

/* The reading state of one prefix (one process). */
typedef struct pending_frame {
    char *file, *func, *code;
    uint32_t line;
} pending_frame;

struct ol_oom_stream {
    const char *key;
    OL_VEC(pending_frame) frames;
    size_t dropped;
    bool header;          /* a "Traceback (most recent call last):" began the frames */
    bool after_frame;     /* the last line was a frame: an indented line next is its code */
    int64_t step, steps_total;
    size_t open_event;    /* an event still taking continuation lines (index + 1), or 0 */
    int open_lines;
};

#define MAX_STREAMS 4096
#define MAX_MESSAGE 4096
#define MAX_FILE 1024
#define MAX_FUNC 256
#define MAX_CODE 512

const char *ol_oom_kind_name(ol_oom_kind k)
{
    switch (k) {
    case OL_OOM_CUDA: return "cuda";
    case OL_OOM_CUDA_ASYNC: return "cuda-malloc-async";
    case OL_OOM_DEVICE: return "device";
    case OL_OOM_MPS: return "mps";
    case OL_OOM_CUBLAS: return "cublas";
    case OL_OOM_CUDNN: return "cudnn";
    case OL_OOM_CUDA_ERROR: return "cuda-error";
    case OL_OOM_CPU: return "cpu";
    case OL_OOM_HOST_KILLED: return "host-oom-killer";
    }
    return "cuda";
}

/* ---- sizes ------------------------------------------------------------------- */

static const struct unit {
    const char *name;
    int shift;
} units[] = {
    {"bytes", 0}, {"byte", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}, {"KB", 10}, {"kB", 10},
    {"MB", 20},   {"GB", 30},  {"TB", 40},  {"B", 0},    {"K", 10},   {"M", 20},   {"G", 30},   {"T", 40},
};

bool ol_oom_parse_size(const char *s, size_t n, int64_t *bytes, size_t *used)
{
    size_t i = 0;
    double v = 0;
    bool digits = false;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (s[i] - '0');
        digits = true;
        i++;
    }
    if (i < n && s[i] == '.') {
        double scale = 0.1;
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            v += (s[i] - '0') * scale;
            scale /= 10;
            digits = true;
            i++;
        }
    }
    if (!digits)
        return false;
    size_t j = i;
    if (j < n && s[j] == ' ')
        j++;
    for (size_t u = 0; u < OL_ARRAY_LEN(units); u++) {
        size_t len = strlen(units[u].name);
        if (n - j < len || memcmp(s + j, units[u].name, len) != 0)
            continue;
        if (j + len < n && (isalpha((unsigned char)s[j + len]) || s[j + len] == '_'))
            continue;
        double b = v * (double)((uint64_t)1 << units[u].shift);
        if (!(b < 9.2e18))
            b = 9.2e18;
        /* rounded by hand: llround() would make the release binary need libm */
        *bytes = b >= 0 ? (int64_t)(b + 0.5) : -(int64_t)(0.5 - b);
        *used = j + len;
        return true;
    }
    return false;
}

void ol_oom_format_size(ol_buf *b, int64_t bytes)
{
    if (bytes < 0) {
        ol_buf_puts(b, "?");
        return;
    }
    /* PyTorch's units, a unit up at the boundary ("1.00 GiB", not "1024.00 MiB") */
    if (bytes < 1024)
        ol_buf_printf(b, "%lld bytes", (long long)bytes);
    else if (bytes < 1048576)
        ol_buf_printf(b, "%.2f KiB", (double)bytes / 1024.0);
    else if (bytes < 1073741824LL)
        ol_buf_printf(b, "%.2f MiB", (double)bytes / 1048576.0);
    else
        ol_buf_printf(b, "%.2f GiB", (double)bytes / 1073741824.0);
}

/* ---- small text helpers ---------------------------------------------------------- */

static const char *find(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    if (k == 0 || k > n)
        return NULL;
    const char *end = s + n - k;
    for (const char *p = s; p <= end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p) + 1);
        if (!p)
            return NULL;
        if (memcmp(p, needle, k) == 0)
            return p;
    }
    return NULL;
}

static bool ends_with_words(const char *s, size_t n, const char *words)
{
    size_t k = strlen(words);
    return n >= k && memcmp(s + n - k, words, k) == 0;
}

static bool starts_with_words(const char *s, size_t n, const char *words)
{
    size_t k = strlen(words);
    return n >= k && memcmp(s, words, k) == 0;
}

/* The digits that end s[0..n) ("Process 1234 has " -> looks back from "has"). */
static int64_t trailing_number(const char *s, size_t n)
{
    size_t e = n;
    while (e > 0 && s[e - 1] == ' ')
        e--;
    size_t b = e;
    while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9')
        b--;
    if (b == e || e - b > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = b; i < e; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* ---- one message ---------------------------------------------------------------- */

static void figures_init(ol_oom_figures *f)
{
    memset(f, 0, sizeof(*f));
    f->device = -1;
    f->requested = f->total = f->free = f->this_process = f->allocated = OL_BYTES_UNKNOWN;
    f->reserved_unallocated = f->reserved = f->allowed = f->private_pools = f->other_allocations = OL_BYTES_UNKNOWN;
}

static int device_after(const char *s, size_t n, const char *word)
{
    const char *p = find(s, n, word);
    if (!p)
        return -1;
    p += strlen(word);
    const char *end = s + n;
    int v = 0, digits = 0;
    while (p < end && *p >= '0' && *p <= '9' && digits < 6) {
        v = v * 10 + (*p - '0');
        p++;
        digits++;
    }
    return digits ? v : -1;
}

/* Each size of the message, named by the words on either side of it. */
static void classify_sizes(const char *s, size_t n, ol_oom_figures *f)
{
    for (size_t i = 0; i < n; i++) {
        if (!(s[i] >= '0' && s[i] <= '9') || (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.')))
            continue;
        int64_t v;
        size_t used;
        if (!ol_oom_parse_size(s + i, n - i, &v, &used))
            continue;
        const char *before = s;
        size_t blen = i;
        const char *after = s + i + used;
        size_t alen = n - i - used;
        /* the words before, without the spaces a re-wrapped or aligned message has */
        while (blen > 0 && before[blen - 1] == ' ')
            blen--;
        if (ends_with_words(before, blen, "Tried to allocate") || ends_with_words(before, blen, "tried to allocate") ||
            ends_with_words(before, blen, "Requested :") || ends_with_words(before, blen, "Requested:"))
            f->requested = v;
        else if (ends_with_words(before, blen, "total capacity of") || ends_with_words(before, blen, "total capacty of") ||
                 ends_with_words(before, blen, "Device limit :") || ends_with_words(before, blen, "Device limit:"))
            f->total = v;
        else if (ends_with_words(before, blen, "of which"))
            f->free = v;
        else if (ends_with_words(before, blen, "Free (according to CUDA):"))
            f->free = v;
        else if (ends_with_words(before, blen, "this process has"))
            f->this_process = v;
        else if (ends_with_words(before, blen, "has") && blen >= 4 && f->nprocs < OL_OOM_MAX_PROCESSES) {
            /* "Process 1234 has X memory in use" */
            const char *proc = NULL;
            for (size_t k = blen - 3; k-- > 0 && blen - k < 40;) {
                if (starts_with_words(before + k, blen - k, "Process ")) {
                    proc = before + k;
                    break;
                }
            }
            int64_t pid = proc ? trailing_number(before, blen - 3) : -1;
            if (pid >= 0) {
                f->procs[f->nprocs].pid = pid;
                f->procs[f->nprocs].bytes = v;
                f->nprocs++;
            }
        } else if (ends_with_words(before, blen, "Of the allocated memory") ||
                   ends_with_words(before, blen, "MPS allocated:") || ends_with_words(before, blen, "Currently allocated :") ||
                   ends_with_words(before, blen, "Currently allocated:"))
            f->allocated = v;
        else if (ends_with_words(before, blen, "other allocations:"))
            f->other_allocations = v;
        else if (ends_with_words(before, blen, "max allowed:"))
            f->allowed = v;
        else if (ends_with_words(before, blen, "with") && starts_with_words(after, alen, " allocated in private pools"))
            f->private_pools = v;
        else if (starts_with_words(after, alen, " is reserved by PyTorch but unallocated"))
            f->reserved_unallocated = v;
        else if (starts_with_words(after, alen, " total capacity"))
            f->total = v;
        else if (starts_with_words(after, alen, " already allocated"))
            f->allocated = v;
        else if (starts_with_words(after, alen, " free;") || starts_with_words(after, alen, " free)"))
            f->free = v;
        else if (starts_with_words(after, alen, " reserved in total by PyTorch"))
            f->reserved = v;
        else if (starts_with_words(after, alen, " cached"))
            f->reserved_unallocated = v;
        else if (starts_with_words(after, alen, " allowed"))
            f->allowed = v;
        else if (ends_with_words(before, blen, "(set by user-supplied memory fraction) :") ||
                 ends_with_words(before, blen, "(set by user-supplied memory fraction):"))
            /* 2^64 bytes is how the backend says "no limit" */
            f->allowed = v >= ((int64_t)1 << 60) ? OL_BYTES_UNKNOWN : v;
        i += used - 1;
    }
}

static const char *const alloc_conf_names[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF",
                                               "PYTORCH_XPU_ALLOC_CONF", "PYTORCH_MPS_HIGH_WATERMARK_RATIO"};

bool ol_oom_parse_message(const char *s, size_t n, ol_oom_kind *kind, ol_oom_figures *f)
{
    figures_init(f);
    const char *p;
    if (find(s, n, "MPS backend out of memory"))
        *kind = OL_OOM_MPS;
    else if (find(s, n, "would exceed allowed memory") && find(s, n, "out of memory"))
        *kind = OL_OOM_CUDA_ASYNC;
    else if ((p = find(s, n, "CUDA out of memory")) != NULL)
        *kind = OL_OOM_CUDA;
    else if (find(s, n, "out of memory. Tried to allocate") || find(s, n, "Out of memory. Tried to allocate"))
        *kind = OL_OOM_DEVICE;
    else if (find(s, n, "CUBLAS_STATUS_ALLOC_FAILED"))
        *kind = OL_OOM_CUBLAS;
    else if (find(s, n, "CUDNN_STATUS_ALLOC_FAILED") || find(s, n, "CUDNN_STATUS_NOT_ENOUGH_WORKSPACE"))
        *kind = OL_OOM_CUDNN;
    else if (find(s, n, "CUDA error: out of memory") || find(s, n, "CUDA driver error: out of memory") ||
             find(s, n, "cudaErrorMemoryAllocation") || find(s, n, "CUDA_ERROR_OUT_OF_MEMORY") ||
             find(s, n, "cuda runtime error (2) : out of memory"))
        *kind = OL_OOM_CUDA_ERROR;
    else if (find(s, n, "DefaultCPUAllocator: not enough memory") || find(s, n, "DefaultCPUAllocator: can't allocate memory"))
        *kind = OL_OOM_CPU;
    else if (find(s, n, "oom_kill event") || find(s, n, "oom-kill event") ||
             (find(s, n, "DataLoader worker (pid") && find(s, n, "killed by signal: Killed")))
        *kind = OL_OOM_HOST_KILLED;
    else if (find(s, n, "OutOfMemoryError: "))
        *kind = OL_OOM_CUDA;
    else
        return false;
    classify_sizes(s, n, f);
    int dev = device_after(s, n, "(GPU ");
    if (dev < 0)
        dev = device_after(s, n, ". GPU ");
    if (dev < 0)
        dev = device_after(s, n, "Allocation on device ");
    if (dev < 0)
        dev = device_after(s, n, ". Device ");
    f->device = dev;
    /* 2.x: what PyTorch reserved is what it allocated plus what it keeps unallocated */
    if (f->reserved == OL_BYTES_UNKNOWN && f->allocated >= 0 && f->reserved_unallocated >= 0)
        f->reserved = f->allocated + f->reserved_unallocated;
    else if (f->reserved >= 0 && f->allocated >= 0 && f->reserved_unallocated == OL_BYTES_UNKNOWN)
        f->reserved_unallocated = f->reserved > f->allocated ? f->reserved - f->allocated : 0;
    for (size_t i = 0; i < OL_ARRAY_LEN(alloc_conf_names); i++) {
        if (find(s, n, alloc_conf_names[i])) {
            f->alloc_conf = alloc_conf_names[i];
            break;
        }
    }
    f->max_split_advice = find(s, n, "max_split_size_mb") != NULL;
    f->shared_pool = find(s, n, "on shared pool") != NULL;
    return true;
}

/* ---- user files ------------------------------------------------------------------ */

/* Path components that mark a library: the standard library and installed
 * packages, and PyTorch's own source tree. */
static bool path_has(const char *path, const char *part)
{
    return strstr(path, part) != NULL;
}

bool ol_oom_notebook_cell(const char *path)
{
    return path && (strncmp(path, "<ipython-input-", 15) == 0 || strncmp(path, "<Cell In[", 9) == 0 ||
                    strstr(path, "/ipykernel_") != NULL || strncmp(path, "/tmp/xpython_", 13) == 0);
}

bool ol_oom_user_file(const char *path)
{
    if (ol_oom_notebook_cell(path))
        return true; /* the user's code, though not a file on disk */
    if (!path || !*path || path[0] == '<')
        return false; /* <frozen runpy>, <string>, <stdin> */
    if (path_has(path, "site-packages/") || path_has(path, "dist-packages/") || path_has(path, "site-packages\\") ||
        path_has(path, "dist-packages\\"))
        return false;
    /* the standard library: .../lib/python3.11/x.py, .../Lib/x.py on Windows */
    const char *lib = strstr(path, "/lib/python");
    if (lib && strchr(lib + 11, '/'))
        return false;
    if (path_has(path, "\\Lib\\") || path_has(path, "/lib64/python"))
        return false;
    /* PyTorch from a source tree or an editable install */
    static const char *const torch_dirs[] = {"torch/nn/", "torch/autograd/", "torch/optim/", "torch/utils/",
                                             "torch/cuda/", "torch/distributed/", "torch/_dynamo/", "torch/_inductor/",
                                             "torch/fx/", "torch/amp/", "torch/_tensor.py", "torch/functional.py",
                                             "torch/_ops.py", "torch/serialization.py", "torch/_compile.py"};
    for (size_t i = 0; i < OL_ARRAY_LEN(torch_dirs); i++) {
        const char *at = strstr(path, torch_dirs[i]);
        if (at && (at == path || at[-1] == '/'))
            return false;
    }
    return true;
}

/* ---- the reading state ----------------------------------------------------------- */

void ol_oom_log_init(ol_oom_log *log)
{
    memset(log, 0, sizeof(*log));
    ol_interner_init(&log->strings);
}

static const char *intern(ol_oom_log *log, const char *s, size_t n)
{
    return ol_interned(&log->strings, ol_intern(&log->strings, s, n));
}

static void clear_frames(ol_oom_stream *st)
{
    for (size_t i = 0; i < st->frames.len; i++) {
        free(st->frames.items[i].file);
        free(st->frames.items[i].func);
        free(st->frames.items[i].code);
    }
    st->frames.len = 0;
    st->dropped = 0;
    st->header = false;
    st->after_frame = false;
}

static ol_oom_stream *stream_for(ol_oom_log *log, const char *key, size_t klen)
{
    for (size_t i = 0; i < log->streams.len; i++) {
        ol_oom_stream *st = log->streams.items[i];
        if (strlen(st->key) == klen && memcmp(st->key, key, klen) == 0)
            return st;
    }
    if (log->streams.len >= MAX_STREAMS)
        return log->streams.items[0];
    ol_oom_stream *st = ol_xcalloc(1, sizeof(*st));
    st->key = intern(log, key, klen);
    st->step = st->steps_total = -1;
    ol_vec_push(&log->streams, st);
    return st;
}

/* Removes ANSI escape sequences (CSI, OSC, two-byte ESC forms) and other
 * control characters but the tab. */
static size_t strip_ansi(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1B) {
            if (i + 1 < n && s[i + 1] == '[') {
                i += 2;
                while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7E))
                    i++;
            } else if (i + 1 < n && s[i + 1] == ']') {
                i += 2;
                while (i < n && s[i] != '\a' && !(s[i] == 0x1B && i + 1 < n && s[i + 1] == '\\'))
                    i++;
                if (i < n && s[i] == 0x1B)
                    i++;
            } else if (i + 1 < n) {
                i++;
            }
            continue;
        }
        if (c < 0x20 && c != '\t')
            continue;
        out[o++] = (char)c;
    }
    return o;
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* Strips the process prefixes at the start of a line; the last one names
 * the stream. Returns the characters removed. */
static size_t strip_prefixes(const char *s, size_t n, const char **key, size_t *klen)
{
    size_t at = 0;
    *key = "";
    *klen = 0;
    for (int rounds = 0; rounds < 4; rounds++) {
        const char *t = s + at;
        size_t m = n - at;
        if (m > 2 && t[0] == '[') {
            const char *close = memchr(t, ']', m < 48 ? m : 48);
            if (!close)
                break;
            size_t inner = (size_t)(close - t) - 1;
            const char *name = t + 1;
            size_t after = (size_t)(close - t) + 1;
            bool ok = false;
            if ((inner > 4 && memcmp(name, "rank", 4) == 0 && all_digits(name + 4, inner - 4)) ||
                (inner > 7 && memcmp(name, "default", 7) == 0 && all_digits(name + 7, inner - 7))) {
                ok = after < m && t[after] == ':';
                after += 1;
            } else if (inner >= 3 && memchr(name, ',', inner)) {
                /* Open MPI: [1,0]<stderr>: */
                const char *comma = memchr(name, ',', inner);
                size_t a = (size_t)(comma - name), b = inner - a - 1;
                if (all_digits(name, a) && all_digits(comma + 1, b)) {
                    if (starts_with_words(t + after, m - after, "<stderr>:") ||
                        starts_with_words(t + after, m - after, "<stdout>:")) {
                        after += 9;
                        ok = true;
                    } else if (after < m && t[after] == ':') {
                        after += 1;
                        ok = true;
                    }
                }
            }
            if (!ok)
                break;
            if (after < m && t[after] == ' ')
                after++;
            *key = name;
            *klen = inner;
            at += after;
            continue;
        }
        /* srun --label: "3: " */
        size_t d = 0;
        while (d < m && d < 6 && t[d] >= '0' && t[d] <= '9')
            d++;
        if (d > 0 && d < m - 1 && t[d] == ':' && t[d + 1] == ' ' && rounds == 0) {
            *key = t;
            *klen = d;
            at += d + 2;
            continue;
        }
        break;
    }
    return at;
}

/* ---- frames ---------------------------------------------------------------------- */

static char *dup_capped(const char *s, size_t n, size_t cap)
{
    return ol_xstrndup(s, n < cap ? n : cap);
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static void add_frame(ol_oom_stream *st, const char *file, size_t flen, uint32_t line, const char *func, size_t fnlen)
{
    if (st->frames.len == OL_OOM_MAX_FRAMES) {
        pending_frame *f0 = &st->frames.items[0];
        free(f0->file);
        free(f0->func);
        free(f0->code);
        memmove(st->frames.items, st->frames.items + 1, (st->frames.len - 1) * sizeof(pending_frame));
        st->frames.len--;
        st->dropped++;
    }
    pending_frame f = {dup_capped(file, flen, MAX_FILE), dup_capped(func, fnlen, MAX_FUNC), ol_xstrdup(""), line};
    ol_vec_push(&st->frames, f);
    st->after_frame = true;
}

static uint32_t parse_u32(const char *s, size_t n, size_t *used)
{
    uint64_t v = 0;
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && i < 10) {
        v = v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    *used = i;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* `File "path", line N, in func`, IPython 8's `File path:N, in func(...)`
 * and IPython 7's `path in func(...)`; true when t is a frame line. */
static bool frame_line(ol_oom_stream *st, const char *t, size_t n)
{
    const char *s = t;
    size_t m = n;
    trim(&s, &m);
    if (starts_with_words(s, m, "File \"")) {
        const char *q = find(s + 6, m - 6, "\", line ");
        if (!q)
            return false;
        const char *file = s + 6;
        size_t flen = (size_t)(q - file);
        const char *rest = q + 8;
        size_t rlen = m - (size_t)(rest - s), used;
        uint32_t line = parse_u32(rest, rlen, &used);
        if (!used)
            return false;
        const char *func = "";
        size_t fnlen = 0;
        if (starts_with_words(rest + used, rlen - used, ", in ")) {
            func = rest + used + 5;
            fnlen = rlen - used - 5;
        }
        add_frame(st, file, flen, line, func, fnlen);
        return true;
    }
    if (starts_with_words(s, m, "File ")) {
        /* IPython 8: File ~/proj/train.py:57, in train(model) */
        const char *in = find(s, m, ", in ");
        if (!in)
            return false;
        const char *colon = in;
        while (colon > s + 5 && colon[-1] >= '0' && colon[-1] <= '9')
            colon--;
        if (colon == in || colon <= s + 5 || colon[-1] != ':')
            return false;
        size_t used;
        uint32_t line = parse_u32(colon, (size_t)(in - colon), &used);
        const char *func = in + 5;
        size_t fnlen = m - (size_t)(func - s);
        const char *paren = memchr(func, '(', fnlen);
        if (paren)
            fnlen = (size_t)(paren - func);
        add_frame(st, s + 5, (size_t)(colon - 1 - (s + 5)), line, func, fnlen);
        return true;
    }
    /* IPython 8's notebook cell: Cell In[12], line 3 */
    if (starts_with_words(s, m, "Cell In[")) {
        const char *close = memchr(s, ']', m);
        const char *at = find(s, m, ", line ");
        if (close && at && at > close) {
            size_t used;
            uint32_t line = parse_u32(at + 7, m - (size_t)(at + 7 - s), &used);
            char name[64];
            int len = snprintf(name, sizeof(name), "<%.*s>", (int)((size_t)(close - s) + 1 < 48 ? (size_t)(close - s) + 1 : 48), s);
            add_frame(st, name, (size_t)len, line, "<cell>", 6);
            return true;
        }
    }
    /* IPython 7: /path/train.py in train(model, loader) */
    const char *in = find(s, m, ".py in ");
    if (in && !memchr(s, ' ', (size_t)(in - s)) && (s[0] == '/' || s[0] == '~' || s[0] == '.')) {
        const char *func = in + 7;
        size_t fnlen = m - (size_t)(func - s);
        const char *paren = memchr(func, '(', fnlen);
        if (paren)
            fnlen = (size_t)(paren - func);
        add_frame(st, s, (size_t)(in + 3 - s), 0, func, fnlen);
        return true;
    }
    return false;
}

/* The code under a frame: the next indented line, or IPython's `---> 57 code`. */
static bool code_line(ol_oom_stream *st, const char *t, size_t n)
{
    if (!st->frames.len)
        return false;
    pending_frame *f = &ol_vec_last(&st->frames);
    const char *s = t;
    size_t m = n;
    trim(&s, &m);
    if (starts_with_words(s, m, "--") && memchr(s, '>', m < 12 ? m : 12)) {
        const char *gt = memchr(s, '>', m);
        const char *p = gt + 1;
        size_t rest = m - (size_t)(p - s);
        while (rest && *p == ' ') {
            p++;
            rest--;
        }
        size_t used;
        uint32_t line = parse_u32(p, rest, &used);
        if (used) {
            f->line = line;
            const char *c = p + used;
            size_t clen = rest - used;
            trim(&c, &clen);
            free(f->code);
            f->code = dup_capped(c, clen, MAX_CODE);
            return true;
        }
    }
    if (!st->after_frame || n == 0 || (t[0] != ' ' && t[0] != '\t'))
        return false;
    bool carets = m > 0;
    for (size_t i = 0; i < m; i++)
        carets &= s[i] == '^' || s[i] == '~' || s[i] == ' ';
    if (carets)
        return true;
    if (!f->code[0]) {
        free(f->code);
        f->code = dup_capped(s, m, MAX_CODE);
    }
    st->after_frame = false;
    return true;
}

/* ---- steps and memory figures ----------------------------------------------------- */

/* Is the word ending at s[at] (letters and underscores) one that counts steps? */
static bool step_word(const char *s, size_t at)
{
    static const struct {
        const char *w;
        size_t n;
    } words[] = {{"step", 4}, {"iter", 4}, {"iteration", 9}, {"global_step", 11}, {"batch", 5}};
    size_t b = at;
    while (b > 0 && at - b < 12 && (isalpha((unsigned char)s[b - 1]) || s[b - 1] == '_'))
        b--;
    for (size_t i = 0; i < OL_ARRAY_LEN(words); i++)
        if (at - b == words[i].n && ol_mem_ieq(s + b, words[i].w, words[i].n))
            return true;
    return false;
}

/* tqdm's "450/1000 [", or "step 450", "iter: 450", "Step [100/600]". */
static void read_step(ol_oom_stream *st, const char *s, size_t n)
{
    bool tqdm = find(s, n, "it/s") || find(s, n, "s/it") || find(s, n, "%|");
    for (size_t i = 0; i < n; i++) {
        if (!(s[i] >= '0' && s[i] <= '9') || (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9'))
            continue;
        size_t j = i;
        int64_t v = 0;
        while (j < n && s[j] >= '0' && s[j] <= '9' && j - i < 15)
            v = v * 10 + (s[j++] - '0');
        if (tqdm && j < n && s[j] == '/') {
            size_t k = j + 1;
            int64_t total = 0;
            while (k < n && s[k] >= '0' && s[k] <= '9' && k - j < 15)
                total = total * 10 + (s[k++] - '0');
            if (k > j + 1 && k + 1 < n && s[k] == ' ' && s[k + 1] == '[') {
                st->step = v;
                st->steps_total = total;
            }
        }
        /* the word right before the number, past separators */
        size_t b = i;
        while (b > 0 && (s[b - 1] == ' ' || s[b - 1] == ':' || s[b - 1] == '=' || s[b - 1] == '[' ||
                         s[b - 1] == '#' || s[b - 1] == '_') &&
               i - b < 4)
            b--;
        if (b > 0 && isalpha((unsigned char)s[b - 1]) && step_word(s, b))
            st->step = v;
        i = j;
    }
}

static void add_sample(ol_oom_log *log, ol_oom_stream *st, int64_t bytes)
{
    ol_oom_series *se = NULL;
    for (size_t i = 0; i < log->series.len; i++)
        if (log->series.items[i].rank == st->key)
            se = &log->series.items[i];
    if (!se) {
        if (log->series.len >= 64)
            return;
        ol_oom_series fresh = {0};
        fresh.rank = st->key;
        fresh.stride = 1;
        ol_vec_push(&log->series, fresh);
        se = &ol_vec_last(&log->series);
    }
    if (++se->skipped < se->stride)
        return;
    se->skipped = 0;
    if (se->samples.len == OL_OOM_MAX_SAMPLES) {
        /* keep every other sample, and from now on one in twice as many */
        for (size_t i = 0; i < se->samples.len / 2; i++)
            se->samples.items[i] = se->samples.items[2 * i + 1];
        se->samples.len /= 2;
        se->stride *= 2;
    }
    ol_oom_sample smp = {st->step, bytes, log->lines + 1};
    ol_vec_push(&se->samples, smp);
}

/* A line where the training loop reports memory: "mem 10.2GB",
 * "max_memory_allocated: 11.30 GiB", "gpu_mem=9876MB". */
static void read_memory(ol_oom_log *log, ol_oom_stream *st, const char *s, size_t n)
{
    static const char *const words[] = {"mem", "allocated", "reserved", "vram"};
    /* most lines name none of them: a quick look first */
    if (!find(s, n, "em") && !find(s, n, "EM") && !find(s, n, "lloc") && !find(s, n, "LLOC") &&
        !find(s, n, "eserv") && !find(s, n, "ESERV") && !find(s, n, "RAM") && !find(s, n, "ram"))
        return;
    for (size_t i = 0; i + 3 < n; i++) {
        for (size_t w = 0; w < OL_ARRAY_LEN(words); w++) {
            size_t k = strlen(words[w]);
            if (n - i < k || !ol_mem_ieq(s + i, words[w], k))
                continue;
            /* the first size within a few characters after the word */
            for (size_t j = i + k; j < n && j < i + k + 40; j++) {
                if (!(s[j] >= '0' && s[j] <= '9') || (s[j - 1] >= '0' && s[j - 1] <= '9') || s[j - 1] == '.')
                    continue;
                int64_t v;
                size_t used;
                if (ol_oom_parse_size(s + j, n - j, &v, &used) && v >= (1 << 20)) {
                    add_sample(log, st, v);
                    return;
                }
            }
        }
    }
}

/* ---- events ---------------------------------------------------------------------- */

static bool exception_type(const char *s, size_t n, size_t *len)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
        i++;
    if (i == 0 || i + 1 >= n || s[i] != ':' || s[i + 1] != ' ')
        return false;
    *len = i;
    return find(s, i, "Error") || find(s, i, "Exception") || find(s, i, "Exit");
}

static void collapse_spaces(ol_buf *b, const char *s, size_t n)
{
    bool space = b->len > 0 && b->data[b->len - 1] == ' ';
    for (size_t i = 0; i < n && b->len < MAX_MESSAGE; i++) {
        char c = s[i] == '\t' ? ' ' : s[i];
        if (c == ' ' && space)
            continue;
        space = c == ' ';
        ol_buf_putc(b, c);
    }
}

static void reparse(ol_oom_event *ev)
{
    ol_oom_kind kind;
    ol_oom_figures fig;
    if (ol_oom_parse_message(ev->message, strlen(ev->message), &kind, &fig)) {
        ev->kind = kind;
        ev->fig = fig;
    }
}

/* A message is still missing its last clause: the next lines may carry it. */
static bool incomplete(const ol_oom_event *ev)
{
    const char *m = ev->message;
    size_t n = strlen(m);
    switch (ev->kind) {
    case OL_OOM_CUDA:
    case OL_OOM_DEVICE:
        if (find(m, n, "(GPU ")) {
            const char *open = find(m, n, "(GPU ");
            return !memchr(open, ')', n - (size_t)(open - m));
        }
        return find(m, n, "Tried to allocate") && !find(m, n, "reserved by PyTorch but unallocated");
    case OL_OOM_CUDA_ASYNC:
        return !find(m, n, "Free (according to CUDA)") || !find(m, n, "memory fraction)") ||
               ends_with_words(m, n, "memory fraction)");
    default:
        return false;
    }
}

static bool continuation(const char *s, size_t n)
{
    static const char *const starts[] = {"GPU ", "Including non-PyTorch", "Process ", "Of the allocated",
                                         "and ", "is reserved", "If reserved", "PYTORCH_", "fragmentation",
                                         "See documentation", "(GPU", "Tried to allocate", "Currently allocated",
                                         "Requested", "Device limit", "Free (according", "PyTorch limit", ": ",
                                         "allocated by PyTorch", "reserved in total", "total capacity",
                                         "of which", "with "};
    for (size_t i = 0; i < OL_ARRAY_LEN(starts); i++)
        if (starts_with_words(s, n, starts[i]))
            return true;
    /* a wrapped 1.x clause: "14.56 GiB already allocated; ..." */
    int64_t v;
    size_t used;
    return ol_oom_parse_size(s, n, &v, &used);
}

static void take_frames(ol_oom_log *log, ol_oom_stream *st, ol_oom_event *ev)
{
    ev->traceback = st->frames.len > 0;
    ev->truncated = st->frames.len > 0 && (!st->header || st->dropped > 0);
    ev->frames_dropped = st->dropped;
    for (size_t i = 0; i < st->frames.len; i++) {
        pending_frame *p = &st->frames.items[i];
        ol_oom_frame f = {intern(log, p->file, strlen(p->file)), p->line, intern(log, p->func, strlen(p->func)),
                          intern(log, p->code, strlen(p->code))};
        ol_vec_push(&ev->frames, f);
    }
    clear_frames(st);
}

static void new_event(ol_oom_log *log, ol_oom_stream *st, const char *s, size_t n, ol_oom_kind kind,
                      const ol_oom_figures *fig)
{
    size_t tlen = 0;
    const char *exc = "";
    size_t elen = 0;
    const char *body = s;
    size_t blen = n;
    if (exception_type(s, n, &tlen)) {
        exc = s;
        elen = tlen;
        body = s + tlen + 2;
        blen = n - tlen - 2;
    }
    ol_buf msg = {0};
    collapse_spaces(&msg, body, blen);
    char *text = ol_buf_take(&msg);
    /* the same message again (a launcher's summary, a re-raise): one event */
    for (size_t i = 0; i < log->events.len; i++) {
        ol_oom_event *old = &log->events.items[i];
        if (strcmp(old->message, text) == 0) {
            old->repeats++;
            if (!old->frames.len && st->frames.len) {
                ol_vec_free(&old->frames);
                take_frames(log, st, old);
            } else {
                clear_frames(st);
            }
            free(text);
            return;
        }
    }
    log->events_total++;
    if (log->events.len >= OL_OOM_MAX_EVENTS) {
        clear_frames(st);
        free(text);
        return;
    }
    ol_oom_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.fig = *fig;
    ev.log_line = log->lines + 1;
    ev.rank = st->key;
    ev.exc_type = intern(log, exc, elen);
    ev.message = text;
    /* a progress bar is often printed without the rank's prefix */
    const ol_oom_stream *steps = st;
    for (size_t i = 0; st->step < 0 && i < log->streams.len; i++)
        if (log->streams.items[i]->key[0] == '\0')
            steps = log->streams.items[i];
    ev.step = steps->step;
    ev.steps_total = steps->steps_total;
    take_frames(log, st, &ev);
    ol_vec_push(&log->events, ev);
    st->open_event = incomplete(&ev) ? log->events.len : 0;
    st->open_lines = 0;
}

static bool looks_like_message(const char *s, size_t n, ol_oom_kind kind)
{
    if (kind != OL_OOM_CUDA)
        return true;
    /* "CUDA out of memory" also turns up in a script's own log lines; PyTorch's
     * message asks for a size, or is the text of the exception */
    size_t tlen;
    return find(s, n, "Tried to allocate") || exception_type(s, n, &tlen);
}

static void process_line(ol_oom_log *log, const char *raw, size_t rn, char *scratch)
{
    size_t n = strip_ansi(raw, rn, scratch);
    const char *key;
    size_t klen;
    size_t skip = strip_prefixes(scratch, n, &key, &klen);
    ol_oom_stream *st = stream_for(log, key, klen);
    const char *t = scratch + skip;
    size_t m = n - skip;

    /* a message re-wrapped over several lines */
    if (st->open_event) {
        const char *c = t;
        size_t cn = m;
        trim(&c, &cn);
        ol_oom_event *ev = &log->events.items[st->open_event - 1];
        if (cn && st->open_lines < 12 && continuation(c, cn)) {
            ol_buf msg = {0};
            ol_buf_puts(&msg, ev->message);
            ol_buf_putc(&msg, ' ');
            collapse_spaces(&msg, c, cn);
            free(ev->message);
            ev->message = ol_buf_take(&msg);
            reparse(ev);
            st->open_lines++;
            if (!incomplete(ev))
                st->open_event = 0;
            return;
        }
        st->open_event = 0;
    }
    if (find(t, m, "Traceback (most recent call last)")) {
        clear_frames(st);
        st->header = true;
        return;
    }
    if (frame_line(st, t, m))
        return;
    if (code_line(st, t, m))
        return;
    st->after_frame = false;

    const char *s = t;
    size_t sn = m;
    trim(&s, &sn);
    ol_oom_kind kind;
    ol_oom_figures fig;
    /* every form of the message has one of these in it: most lines are passed over at once */
    bool candidate = find(s, sn, "emory") || find(s, sn, "MEMORY") || find(s, sn, "_STATUS_") ||
                     find(s, sn, "oom_kill") || find(s, sn, "oom-kill") || find(s, sn, "DataLoader worker");
    if (candidate && ol_oom_parse_message(s, sn, &kind, &fig) && looks_like_message(s, sn, kind)) {
        new_event(log, st, s, sn, kind, &fig);
        return;
    }
    size_t tlen;
    if (exception_type(s, sn, &tlen)) {
        /* another exception: the frames were its traceback */
        clear_frames(st);
        return;
    }
    bool digits = false;
    for (size_t i = 0; i < sn && !digits; i++)
        digits = s[i] >= '0' && s[i] <= '9';
    if (digits) {
        read_step(st, s, sn);
        read_memory(log, st, s, sn);
    }
}

static void flush_line(ol_oom_log *log)
{
    ol_buf_clear(&log->scratch);
    ol_buf_reserve(&log->scratch, log->line.len + 1);
    process_line(log, log->line.data ? log->line.data : "", log->line.len, log->scratch.data);
    ol_buf_clear(&log->line);
}

/* A line past OL_OOM_MAX_LINE: the first half is read as a piece of its
 * own, cut before any message that starts near the cut. */
static void overflow(ol_oom_log *log)
{
    size_t cut = log->line.len / 2;
    static const char *const triggers[] = {"OutOfMemoryError", "out of memory", "CUBLAS_STATUS", "CUDNN_STATUS",
                                           "DefaultCPUAllocator", "oom_kill", "Traceback", "File \""};
    size_t window = 8192;
    size_t from = cut > window ? cut - window : 0;
    size_t earliest = cut;
    for (size_t i = 0; i < OL_ARRAY_LEN(triggers); i++) {
        const char *p = find(log->line.data + from, log->line.len - from, triggers[i]);
        if (p && (size_t)(p - log->line.data) < earliest)
            earliest = (size_t)(p - log->line.data);
    }
    if (earliest < cut)
        cut = earliest > 512 ? earliest - 512 : 0;
    if (cut == 0)
        cut = log->line.len / 2; /* a message cannot be this long: read the half */
    ol_buf_clear(&log->scratch);
    ol_buf_reserve(&log->scratch, cut + 1);
    process_line(log, log->line.data, cut, log->scratch.data);
    memmove(log->line.data, log->line.data + cut, log->line.len - cut);
    log->line.len -= cut;
    log->line.data[log->line.len] = '\0';
}

/* Adds to the current line, reading a piece off whenever it reaches the
 * bound: the pieces are the same however the input is split into calls. */
static void append(ol_oom_log *log, const char *s, size_t n)
{
    while (n) {
        size_t room = OL_OOM_MAX_LINE - log->line.len;
        size_t take = n < room ? n : room;
        ol_buf_add(&log->line, s, take);
        s += take;
        n -= take;
        if (log->line.len >= OL_OOM_MAX_LINE)
            overflow(log);
    }
}

void ol_oom_log_feed(ol_oom_log *log, const char *data, size_t n)
{
    log->bytes += n;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c != '\n' && c != '\r')
            continue;
        if (c == '\n' && log->last_cr && i == start && log->line.len == 0) {
            /* the LF of a CRLF */
            log->last_cr = false;
            log->lines++;
            start = i + 1;
            continue;
        }
        append(log, data + start, i - start);
        flush_line(log);
        if (c == '\n')
            log->lines++;
        log->last_cr = c == '\r';
        start = i + 1;
    }
    if (start < n) {
        log->last_cr = false;
        append(log, data + start, n - start);
    }
}

void ol_oom_log_finish(ol_oom_log *log)
{
    if (log->line.len)
        flush_line(log);
}

void ol_oom_log_free(ol_oom_log *log)
{
    for (size_t i = 0; i < log->events.len; i++) {
        free(log->events.items[i].message);
        ol_vec_free(&log->events.items[i].frames);
    }
    ol_vec_free(&log->events);
    for (size_t i = 0; i < log->series.len; i++)
        ol_vec_free(&log->series.items[i].samples);
    ol_vec_free(&log->series);
    for (size_t i = 0; i < log->streams.len; i++) {
        clear_frames(log->streams.items[i]);
        ol_vec_free(&log->streams.items[i]->frames);
        free(log->streams.items[i]);
    }
    ol_vec_free(&log->streams);
    ol_buf_free(&log->line);
    ol_buf_free(&log->scratch);
    ol_interner_free(&log->strings);
}
