/*
 * explain_fuzzer.c - libFuzzer target over the readers `oomlint explain`
 * trusts with a crashed job's files: the log reader and the pickle and
 * snapshot readers (explain.h).
 *
 * Each input is read three ways: as a log fed in one piece, as the same
 * log fed in two pieces split at a point the input chooses (a line, a CRLF
 * or an escape sequence cut across calls must read the same: the events
 * and their figures are compared), and as a pickle, interpreted as a
 * snapshot when it reads. Besides the sanitizers' findings the target
 * checks the bounds the readers promise: at most OL_OOM_MAX_EVENTS errors
 * of at most OL_OOM_MAX_FRAMES frames, sizes never below OL_BYTES_UNKNOWN,
 * a failed pickle always saying why, nesting within OL_PICKLE_MAX_DEPTH,
 * and a snapshot's alive bytes never negative.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "explain_fuzzer: %s\n", what);
    abort();
}

static void check_figures(const ol_oom_figures *f)
{
    const int64_t sizes[] = {f->requested, f->total, f->free, f->this_process, f->allocated,
                             f->reserved_unallocated, f->reserved, f->allowed, f->private_pools, f->other_allocations};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (sizes[i] < OL_BYTES_UNKNOWN)
            fail("a size below OL_BYTES_UNKNOWN");
    if (f->nprocs > OL_OOM_MAX_PROCESSES)
        fail("more processes than the figures hold");
}

static void check_log(const ol_oom_log *log)
{
    if (log->events.len > OL_OOM_MAX_EVENTS || log->events.len > log->events_total)
        fail("more events kept than the bound or the count");
    for (size_t i = 0; i < log->events.len; i++) {
        const ol_oom_event *e = &log->events.items[i];
        if (e->frames.len > OL_OOM_MAX_FRAMES)
            fail("more frames kept than the bound");
        if (!e->message || !e->rank || !e->exc_type)
            fail("an event without its strings");
        for (size_t k = 0; k < e->frames.len; k++)
            if (!e->frames.items[k].file || !e->frames.items[k].func || !e->frames.items[k].code)
                fail("a frame without its strings");
        check_figures(&e->fig);
    }
    for (size_t i = 0; i < log->series.len; i++)
        if (log->series.items[i].samples.len > OL_OOM_MAX_SAMPLES)
            fail("more memory samples than the bound");
}

static void read_log(ol_oom_log *log, const char *data, size_t size, size_t split)
{
    ol_oom_log_init(log);
    ol_oom_log_feed(log, data, split);
    ol_oom_log_feed(log, data + split, size - split);
    ol_oom_log_finish(log);
    check_log(log);
}

static void same_logs(const ol_oom_log *a, const ol_oom_log *b)
{
    if (a->events.len != b->events.len || a->events_total != b->events_total || a->lines != b->lines)
        fail("a split input reads differently");
    for (size_t i = 0; i < a->events.len; i++) {
        const ol_oom_event *x = &a->events.items[i], *y = &b->events.items[i];
        if (strcmp(x->message, y->message) != 0 || x->kind != y->kind || x->log_line != y->log_line ||
            x->frames.len != y->frames.len || x->fig.requested != y->fig.requested || x->fig.total != y->fig.total)
            fail("a split input gives another event");
    }
}

static void check_depth(const ol_pval *v)
{
    if ((v->kind == OL_PV_LIST || v->kind == OL_PV_TUPLE || v->kind == OL_PV_DICT || v->kind == OL_PV_SET) &&
        v->height > OL_PICKLE_MAX_DEPTH)
        fail("a value nested past the bound");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ol_oom_log whole, parts;
    read_log(&whole, text, size, size);
    read_log(&parts, text, size, size ? data[0] % (size + 1) : 0);
    same_logs(&whole, &parts);
    ol_oom_log_free(&whole);
    ol_oom_log_free(&parts);

    /* a copy, so that strings pointing into it end where the input ends */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    ol_pickle p;
    ol_buf err = {0};
    if (ol_pickle_read(&p, copy, size, &err)) {
        if (!p.root)
            fail("a pickle read without a value");
        check_depth(p.root);
        ol_mem_snapshot s;
        ol_buf serr = {0};
        for (int device = -1; device <= 0; device++) {
            if (ol_mem_snapshot_read(&s, p.root, device, &serr)) {
                if (s.alive < 0 || s.inactive < 0 || s.reserved < 0)
                    fail("a snapshot with negative bytes");
                ol_mem_snapshot_free(&s);
            } else if (!serr.len) {
                fail("a snapshot refused without a reason");
            }
            ol_buf_clear(&serr);
        }
        ol_buf_free(&serr);
        ol_pickle_free(&p);
    } else if (!err.len) {
        fail("a pickle refused without a reason");
    }
    ol_buf_free(&err);
    free(copy);
    return 0;
}
