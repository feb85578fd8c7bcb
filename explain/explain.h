/*
 * explain.h - `oomlint explain`: from the out-of-memory error a job died of
 * to the line of code to change.
 *
 * The command reads what a user holds after a crash: text with one or more
 * PyTorch out-of-memory errors in it (a log, a Slurm output, several ranks
 * interleaved) and, where given, a memory snapshot pickle written by
 * torch.cuda.memory._dump_snapshot(). Three readers turn those bytes into
 * facts, each bounded whatever it is fed, and are declared here so that the
 * unit tests and the fuzzer can drive them directly:
 *
 *   - the log reader (explain_log.c): every form of the error message and
 *     its figures, the traceback in front of it, rank prefixes, steps and
 *     memory lines, read as a stream in bounded memory;
 *   - the pickle reader (explain_pickle.c): the plain values a snapshot
 *     holds (dicts, lists, tuples, numbers, strings), without PyTorch and
 *     without ever running anything a pickle names;
 *   - the snapshot reader (explain_snapshot.c): the blocks alive at the
 *     failure, grouped by the user's source line that allocated them.
 *
 * What is done with the facts (diagnosis, linking to the code, the report)
 * is in explain_internal.h.
 */
#ifndef OL_EXPLAIN_H
#define OL_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* `oomlint explain ...`; argv[0] is "explain". Returns the exit status:
 * 0 the error was explained and no line on its stack has a finding at or
 * above --fail-on; 1 such findings; 2 usage error, an input that cannot be
 * read, a snapshot that is not one, no out-of-memory error found, or a
 * report that could not be written. */
int ol_explain_main(int argc, char **argv);

/* ---- sizes ------------------------------------------------------------------- */

/* A figure not given by the message. */
#define OL_BYTES_UNKNOWN (-1)

/* Reads a size as PyTorch prints it ("20.00 MiB", "0 bytes", "1.52 GB",
 * "17179869184.00 GiB"; binary units whatever their spelling) at s[0..n):
 * true with the bytes (rounded) and the characters used. */
bool ol_oom_parse_size(const char *s, size_t n, int64_t *bytes, size_t *used);
/* Appends a size in the units PyTorch prints (bytes, KiB, MiB, GiB; two decimals). */
void ol_oom_format_size(ol_buf *b, int64_t bytes);

/* ---- the log reader ---------------------------------------------------------- */

typedef enum ol_oom_kind {
    OL_OOM_CUDA,       /* the caching allocator's "CUDA out of memory." (1.x and 2.x) */
    OL_OOM_CUDA_ASYNC, /* cudaMallocAsync: "Allocation on device N would exceed allowed memory." */
    OL_OOM_DEVICE,     /* another device's caching allocator: "XPU out of memory.", ... */
    OL_OOM_MPS,        /* "MPS backend out of memory (MPS allocated: ...)" */
    OL_OOM_CUBLAS,     /* CUBLAS_STATUS_ALLOC_FAILED */
    OL_OOM_CUDNN,      /* CUDNN_STATUS_ALLOC_FAILED / CUDNN_STATUS_NOT_ENOUGH_WORKSPACE */
    OL_OOM_CUDA_ERROR, /* "CUDA error: out of memory": a CUDA call outside the allocator */
    OL_OOM_CPU,        /* DefaultCPUAllocator: the host's memory, from PyTorch */
    OL_OOM_HOST_KILLED /* the kernel's OOM killer (Slurm oom_kill, a DataLoader worker killed) */
} ol_oom_kind;

const char *ol_oom_kind_name(ol_oom_kind k);

typedef struct ol_oom_process {
    int64_t pid;
    int64_t bytes;
} ol_oom_process;

#define OL_OOM_MAX_PROCESSES 16

/* The figures of one message, in bytes, OL_BYTES_UNKNOWN where absent. */
typedef struct ol_oom_figures {
    int device;                    /* GPU index, or -1 */
    int64_t requested;             /* "Tried to allocate" */
    int64_t total;                 /* total capacity (cudaMallocAsync: device limit; MPS: max allowed) */
    int64_t free;                  /* free as CUDA reported it */
    int64_t this_process;          /* "Including non-PyTorch memory, this process has" */
    int64_t allocated;             /* allocated by PyTorch ("already allocated" in 1.x) */
    int64_t reserved_unallocated;  /* reserved but unallocated (1.0-1.3: "cached") */
    int64_t reserved;              /* "reserved in total by PyTorch" (1.x), or allocated + unallocated */
    int64_t allowed;               /* "X allowed;" (a memory fraction was set) */
    int64_t private_pools;         /* "with X allocated in private pools (e.g., CUDA Graphs)" */
    int64_t other_allocations;     /* MPS: other allocations */
    ol_oom_process procs[OL_OOM_MAX_PROCESSES]; /* "Process N has X memory in use" */
    size_t nprocs;
    const char *alloc_conf;        /* the variable the message names (PYTORCH_CUDA_ALLOC_CONF, ...), or NULL */
    bool max_split_advice;         /* the message suggests max_split_size_mb (1.10 - 2.1) */
    bool shared_pool;              /* MPS: the shared pool ("private" otherwise) */
} ol_oom_figures;

typedef struct ol_oom_frame {
    const char *file;  /* as the traceback wrote it (interned in the log) */
    uint32_t line;     /* 0 when unknown */
    const char *func;  /* "" when not given */
    const char *code;  /* the source line printed under the frame, or "" */
} ol_oom_frame;

/* Frames kept per traceback: the innermost ones, where the failure is. */
#define OL_OOM_MAX_FRAMES 128

typedef struct ol_oom_event {
    ol_oom_kind kind;
    uint64_t log_line;      /* 1-based line of the input holding the message */
    const char *rank;       /* the rank prefix's name ("3", "default0"), or "" */
    const char *exc_type;   /* "torch.OutOfMemoryError", "RuntimeError", ... or "" */
    char *message;          /* the message, colour and prefixes removed (owned) */
    ol_oom_figures fig;
    OL_VEC(ol_oom_frame) frames; /* outermost first, as printed */
    bool traceback;         /* a traceback was printed before it */
    bool truncated;         /* its traceback lacks its header, or frames were dropped */
    size_t frames_dropped;
    int64_t step;           /* the last step or iteration the log showed for this rank, or -1 */
    int64_t steps_total;    /* the number of steps a progress bar counted to, or -1 */
    size_t repeats;         /* the same message printed again for this rank (a summary, a re-raise) */
} ol_oom_event;

/* A memory figure the training loop printed, by step. */
typedef struct ol_oom_sample {
    int64_t step;
    int64_t bytes;
    uint64_t log_line;
} ol_oom_sample;

typedef struct ol_oom_series {
    const char *rank;
    OL_VEC(ol_oom_sample) samples; /* thinned to at most OL_OOM_MAX_SAMPLES, evenly */
    uint32_t stride;               /* keep one sample in this many (grows as it thins) */
    uint32_t skipped;
} ol_oom_series;

#define OL_OOM_MAX_EVENTS 256
#define OL_OOM_MAX_SAMPLES 2048
/* A line longer than this is read as pieces; no message is longer. */
#define OL_OOM_MAX_LINE (256u * 1024u)

typedef struct ol_oom_stream ol_oom_stream; /* a rank's reading state (explain_log.c) */

typedef struct ol_oom_log {
    OL_VEC(ol_oom_event) events;    /* the first OL_OOM_MAX_EVENTS, in the order of the input */
    size_t events_total;            /* all there were, counting repeats once */
    OL_VEC(ol_oom_series) series;   /* one per rank that printed memory figures */
    uint64_t lines;
    uint64_t bytes;
    ol_interner strings;            /* file names, functions, code lines, ranks */
    /* reading state */
    OL_VEC(ol_oom_stream *) streams;
    ol_buf line;
    ol_buf scratch;                 /* the line with its escape sequences removed */
    bool last_cr;
} ol_oom_log;

void ol_oom_log_init(ol_oom_log *log);
/* Feeds the next bytes of the input (any split: a line may span calls). */
void ol_oom_log_feed(ol_oom_log *log, const char *data, size_t n);
/* Ends the input: a last line without a newline is read. */
void ol_oom_log_finish(ol_oom_log *log);
void ol_oom_log_free(ol_oom_log *log);

/* Reads the figures of one message's text (no prefixes) into fig; returns
 * false when the text is not an out-of-memory message. */
bool ol_oom_parse_message(const char *text, size_t n, ol_oom_kind *kind, ol_oom_figures *fig);

/* Is a traceback frame's file the user's own code (not the standard
 * library, not site-packages or dist-packages, not PyTorch, not the
 * interpreter's pseudo-files such as <string>)? */
bool ol_oom_user_file(const char *path);
/* Is it a notebook cell (IPython's <ipython-input-N-...>, <Cell In[N]>, or
 * ipykernel's temporary file)? The user's code, but no file to find. */
bool ol_oom_notebook_cell(const char *path);

/* ---- the pickle reader ------------------------------------------------------- */

typedef enum ol_pkind {
    OL_PV_NONE,
    OL_PV_BOOL,
    OL_PV_INT,     /* fits in 64 bits */
    OL_PV_BIGINT,  /* does not; only its sign is kept (i is -1 or 1) */
    OL_PV_FLOAT,
    OL_PV_STR,     /* UTF-8 as the pickle holds it (not checked) */
    OL_PV_BYTES,
    OL_PV_LIST,
    OL_PV_TUPLE,
    OL_PV_DICT,    /* items are key, value, key, value, ... */
    OL_PV_SET,
} ol_pkind;

typedef struct ol_pval {
    uint8_t kind;     /* ol_pkind */
    uint16_t height;  /* containers: levels below, for the depth bound */
    uint32_t len;     /* strings: bytes; containers: items (a dict's keys and values) */
    uint32_t cap;
    union {
        int64_t i;
        double f;
        const char *s;        /* into the pickle's bytes, or the reader's arena */
        struct ol_pval **items;
    } u;
} ol_pval;

/* Bounds: nesting (a snapshot needs six levels), the input, and the values. */
#define OL_PICKLE_MAX_DEPTH 100
#define OL_PICKLE_MAX_BYTES (1024u * 1024u * 1024u)

typedef struct ol_pickle {
    const ol_pval *root;
    int protocol;
    /* owned */
    ol_arena arena;
    OL_VEC(ol_pval *) containers; /* to free their item arrays */
} ol_pickle;

/* Reads a pickle from data[0..n) (which must outlive the result: strings
 * point into it). On failure returns false with a one-line reason in err
 * (what, and the byte offset). Opcodes that build objects (GLOBAL, REDUCE,
 * BUILD, ...) are refused: a memory snapshot holds plain values only. */
bool ol_pickle_read(ol_pickle *p, const char *data, size_t n, ol_buf *err);
void ol_pickle_free(ol_pickle *p);

/* A dict's value for a string key, or NULL. */
const ol_pval *ol_pval_get(const ol_pval *dict, const char *key);
/* Helpers that answer a default when the value is missing or of another kind. */
int64_t ol_pval_int(const ol_pval *v, int64_t dflt);
bool ol_pval_str_is(const ol_pval *v, const char *s);

/* ---- the snapshot reader ----------------------------------------------------- */

/* Bytes alive at the failure that one source line allocated. */
typedef struct ol_snap_line {
    const char *file;    /* as recorded (interned in the snapshot's strings) */
    uint32_t line;
    const char *func;
    int64_t bytes;
    uint64_t blocks;
    bool leaf;           /* the innermost user frame of its allocations (else: a caller of it) */
} ol_snap_line;

typedef struct ol_mem_snapshot {
    const char *format;        /* "segments+device_traces" (2.x), "segments" (2.x, no trace), "1.13 list" */
    int device;                /* the device whose blocks were read, or -1 for all */
    int64_t reserved;          /* total size of the segments read */
    int64_t alive;             /* bytes of blocks alive at the failure */
    uint64_t alive_blocks;
    int64_t pending_free;      /* freed by the program, waiting for a stream */
    int64_t inactive;          /* reserved but not allocated */
    int64_t largest_inactive;  /* the largest free block in the reserve */
    int64_t unattributed;      /* alive bytes whose stack names no user line (no history recorded) */
    bool at_oom;               /* alive as of the trace's OOM entry (else: as of the snapshot) */
    int64_t oom_requested;     /* the OOM entry's size, or OL_BYTES_UNKNOWN */
    int64_t oom_device_free;
    OL_VEC(ol_oom_frame) oom_frames; /* the failing allocation's stack, innermost first */
    bool partial;              /* stopped at the work bound: the figures cover part of it */
    OL_VEC(ol_snap_line) lines; /* sorted by bytes, largest first: innermost user lines, then callers */
    ol_interner strings;
} ol_mem_snapshot;

/* Interprets a read pickle as a memory snapshot (device -1: every device).
 * False with a reason when it is not shaped like one. */
bool ol_mem_snapshot_read(ol_mem_snapshot *s, const ol_pval *root, int device, ol_buf *err);
void ol_mem_snapshot_free(ol_mem_snapshot *s);

#endif
