/*
 * probe_scenarios.c - the scenario mode of `oomlint probe`: ask the harness
 * for its scenarios, run each one's `bad` and `fixed` variant in a fresh
 * process (several at once on the CPU, one at a time on a GPU, whose memory
 * and timings they would otherwise share), read their per-iteration records,
 * compare their checksums, judge the rule's claimed costs against noise
 * thresholds derived from the scenario's sizes, and print the table or JSON
 * and draw the plot.
 *
 * How a verdict is reached (also in `oomlint probe --help`): the scenario
 * names the costs its rule claims (growth, peak, time, underflow) and a
 * scale in bytes computed from its tensor sizes (one batch's activations, the
 * parameters, ...). A claim is confirmed when bad minus fixed exceeds a noise
 * threshold derived from that scale: growth per step (least-squares slope
 * after the first fifth of the iterations) above max(1 KiB, scale/16) in
 * bytes kept for backward (CPU) or allocated (CUDA), or at least half an
 * autograd node per step, or above max(256 KiB, scale/4) of resident memory;
 * peak above max(4 KiB, scale/16) (CPU, bytes kept for backward plus
 * gradients) or max(64 KiB, scale/16) (CUDA, max_memory_allocated), or
 * max(2 MiB, scale/4) resident or as the driver sees it; time: the fastest
 * step after warm-up more than 10% slower (other work on the machine only
 * adds time, so the fastest step is the least disturbed), with the median
 * step slower too; underflow: a share of gradient entries lost to zero 0.1
 * points higher. Otherwise: no measurable cost. A rule whose cost exists only
 * on a GPU says "needs a GPU" on the CPU (its variants still run, to check
 * they agree), and no figure is given.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "emit.h"
#include "lint.h"
#include "probe_internal.h"

/* ---- scenarios -------------------------------------------------------------------------------- */

enum {
    M_TIME,
    M_SAVED,
    M_HELD_PEAK,
    M_NODES,
    M_RSS,
    M_RSS_PEAK,
    M_CUDA_ALLOC,
    M_CUDA_PEAK,
    M_CUDA_RESERVED,
    M_NVML,
    M_ZERO_GRAD,
    M_CHECKSUM,
    M_COUNT
};

/* Record keys of the metrics read from "iter" records (M_NVML comes from NVML). */
static const char *const metric_key[M_COUNT] = {
    "time_s", "saved_bytes", "held_peak_bytes", "graph_nodes", "rss_bytes", "rss_peak_bytes",
    "cuda_allocated", "cuda_peak", "cuda_reserved", NULL, NULL, "checksum",
};

enum { CLAIM_GROWTH = 1, CLAIM_PEAK = 2, CLAIM_TIME = 4, CLAIM_UNDERFLOW = 8, CLAIM_HOST_PEAK = 16 };

typedef struct scenario scenario;

typedef struct variant {
    scenario *sc;
    bool bad;
    ol_child child;
    ol_dvec m[M_COUNT];
    bool started, ended;
    bool nvml_process, nvml_device; /* which scope NVML's figures had */
    char *holder;                   /* the name that kept the most graph at the end */
    double holder_nodes;
    char *error;                    /* why the variant failed, or NULL */
} variant;

struct scenario {
    char *rule, *name, *summary, *note;
    unsigned claims;
    bool gpu_only;
    double scale, rtol;
    cJSON *params;
    variant v[2]; /* [0] bad, [1] fixed */
    /* results */
    const char *verdict;
    ol_buf evidence;   /* "graph growth (+11 nodes/step vs 0)" ... */
    ol_buf by;         /* "graph growth, memory growth" */
    int agree;         /* 1, 0, -1 not compared */
    char *agree_detail;
    bool measured;     /* figures are reported */
    bool failed;
};

typedef OL_VEC(scenario *) scenario_vec;

typedef struct probe_run {
    ol_probe_env *env;
    scenario_vec scenarios;
    ol_nvml *nvml;
    size_t started, total;
} probe_run;

static unsigned parse_claims(const cJSON *arr)
{
    unsigned c = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            continue;
        if (strcmp(it->valuestring, "growth") == 0)
            c |= CLAIM_GROWTH;
        else if (strcmp(it->valuestring, "peak") == 0)
            c |= CLAIM_PEAK;
        else if (strcmp(it->valuestring, "time") == 0)
            c |= CLAIM_TIME;
        else if (strcmp(it->valuestring, "underflow") == 0)
            c |= CLAIM_UNDERFLOW;
        else if (strcmp(it->valuestring, "host_peak") == 0)
            c |= CLAIM_HOST_PEAK;
    }
    return c;
}

static void scenario_free(scenario *s)
{
    free(s->rule);
    free(s->name);
    free(s->summary);
    free(s->note);
    cJSON_Delete(s->params);
    for (int k = 0; k < 2; k++) {
        variant *v = &s->v[k];
        ol_child_free(&v->child);
        for (int m = 0; m < M_COUNT; m++)
            ol_vec_free(&v->m[m]);
        free(v->holder);
        free(v->error);
    }
    ol_buf_free(&s->evidence);
    ol_buf_free(&s->by);
    free(s->agree_detail);
    free(s);
}

static const char *json_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double json_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The next item of a comma-separated --rules list, blanks trimmed: its
 * start and length; *p moves past it. */
static const char *next_selector(const char **p, size_t *len)
{
    while (**p == ',' || **p == ' ')
        (*p)++;
    const char *start = *p;
    while (**p && **p != ',')
        (*p)++;
    *len = (size_t)(*p - start);
    while (*len && start[*len - 1] == ' ')
        (*len)--;
    return start;
}

/* Does a scenario's rule match --rules (codes or prefixes, comma-separated)? */
static bool rule_selected(const char *rules, const char *rule)
{
    if (!rules)
        return true;
    const char *p = rules;
    while (*p) {
        size_t len;
        const char *start = next_selector(&p, &len);
        if (len == 3 && ol_mem_ieq(start, "ALL", 3))
            return true;
        if (len && len <= strlen(rule) && ol_mem_ieq(start, rule, len))
            return true;
    }
    return false;
}

/* A --rules selector that matches no scenario, or NULL. */
static char *unmatched_selector(const char *rules, const scenario_vec *all)
{
    const char *p = rules;
    while (*p) {
        size_t len;
        const char *start = next_selector(&p, &len);
        if (!len)
            continue;
        char *sel = ol_xstrndup(start, len);
        bool hit = false;
        for (size_t i = 0; i < all->len && !hit; i++)
            hit = rule_selected(sel, all->items[i]->rule);
        if (!hit)
            return sel;
        free(sel);
    }
    return NULL;
}

typedef struct list_ctx {
    scenario_vec *out;
} list_ctx;

static bool list_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    (void)c;
    list_ctx *lc = ctx;
    const char *t = json_str(rec, "t");
    if (strcmp(t, "scenario") != 0) {
        *why = "not a scenario record";
        return false;
    }
    const char *rule = json_str(rec, "rule"), *name = json_str(rec, "scenario");
    if (!rule || !name) {
        *why = "a scenario without rule or name";
        return false;
    }
    scenario *s = ol_xcalloc(1, sizeof *s);
    s->rule = ol_xstrdup(rule);
    s->name = ol_xstrdup(name);
    const char *summary = json_str(rec, "summary"), *note = json_str(rec, "note");
    s->summary = ol_xstrdup(summary ? summary : "");
    s->note = note ? ol_xstrdup(note) : NULL;
    s->claims = parse_claims(cJSON_GetObjectItemCaseSensitive(rec, "claims"));
    s->gpu_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "gpu_only"));
    s->agree = -1;
    s->scale = NAN;
    s->rtol = 1e-5;
    for (int k = 0; k < 2; k++)
        ol_child_init(&s->v[k].child, NULL, NULL); /* no descriptors yet: scenario_free closes none */
    ol_vec_push(lc->out, s);
    return true;
}

static bool list_scenarios(ol_probe_env *env, scenario_vec *out, ol_buf *err)
{
    char *harness = ol_xasprintf("%s/harness.py", env->dir);
    char **argv = ol_argv_new(env->py.path, harness, "list", "--fd", "3", (const char *)NULL);
    free(harness);
    list_ctx lc = {out};
    ol_child c;
    ol_child_init(&c, argv, &lc);
    c.on_record = list_record;
    ol_child *kids[] = {&c};
    ol_progress(env, "listing the scenarios");
    ol_children_run(env, kids, 1, 1, env->opts->timeout_s);
    bool ok = c.status == OL_CHILD_EXITED && c.exit_code == 0 && out->len > 0;
    if (!ok && !env->interrupted) {
        ol_buf line = {0};
        ol_buf_printf(err, "the probe's harness could not list its scenarios: %s",
                      c.error ? c.error : *ol_child_last_line(&c, &line) ? line.data : "it listed none");
        ol_buf_free(&line);
    }
    ol_child_free(&c);
    return ok;
}

/* -- one variant's records */

static bool variant_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    variant *v = ctx;
    scenario *s = v->sc;
    (void)c;
    const char *t = json_str(rec, "t");
    if (strcmp(t, "start") == 0) {
        const char *rule = json_str(rec, "rule"), *name = json_str(rec, "scenario");
        if (!rule || !name || strcmp(rule, s->rule) != 0 || strcmp(name, s->name) != 0) {
            *why = "a start record for another scenario";
            return false;
        }
        v->started = true;
        double scale = json_num(rec, "scale_bytes"), rtol = json_num(rec, "rtol");
        if (isfinite(scale) && scale > 0)
            s->scale = scale;
        if (isfinite(rtol) && rtol >= 0)
            s->rtol = rtol;
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(rec, "params");
        if (cJSON_IsObject(params) && !s->params)
            s->params = cJSON_Duplicate(params, true);
        return true;
    }
    if (strcmp(t, "iter") == 0) {
        if (!v->started) {
            *why = "an iteration before the start record";
            return false;
        }
        double i = json_num(rec, "i");
        if (!isfinite(i) || i != (double)v->m[M_TIME].len || !isfinite(json_num(rec, "time_s"))) {
            *why = "an iteration record out of order or without its time";
            return false;
        }
        for (int m = 0; m < M_COUNT; m++) {
            double x = metric_key[m] ? json_num(rec, metric_key[m]) : NAN;
            ol_vec_push(&v->m[m], x);
        }
        const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(rec, "metrics");
        if (cJSON_IsObject(metrics))
            ol_vec_last(&v->m[M_ZERO_GRAD]) = json_num(metrics, "zero_grad_fraction");
        const cJSON *holders = cJSON_GetObjectItemCaseSensitive(rec, "holders");
        if (cJSON_IsArray(holders) && cJSON_GetArraySize(holders) > 0) {
            const cJSON *h0 = cJSON_GetArrayItem(holders, 0);
            const char *name = json_str(h0, "name");
            if (name) {
                free(v->holder);
                v->holder = ol_xstrdup(name);
                v->holder_nodes = json_num(h0, "nodes");
            }
        }
        return true;
    }
    if (strcmp(t, "end") == 0) {
        v->ended = true;
        return true;
    }
    *why = "an unknown record type";
    return false;
}

static void describe_failure(variant *v, size_t iterations)
{
    ol_child *c = &v->child;
    ol_buf line = {0};
    const char *last = ol_child_last_line(c, &line);
    if (c->error) {
        v->error = ol_xasprintf("%s%s%s", c->error, *last && c->status != OL_CHILD_GARBAGE ? ": " : "",
                                c->status != OL_CHILD_GARBAGE ? last : "");
    } else if (c->status == OL_CHILD_EXITED && c->exit_code != 0) {
        v->error = ol_xasprintf("exited with status %d%s%s", c->exit_code, *last ? ": " : "", last);
    } else if (!v->ended || v->m[M_TIME].len != iterations) {
        v->error = ol_xasprintf("ended after %zu of %zu iterations without its end record%s%s", v->m[M_TIME].len,
                                iterations, *last ? ": " : "", last);
    }
    ol_buf_free(&line);
}

/* -- judging */

typedef struct side_stats {
    double growth, nodes, rss_growth, peak, rss_peak, nvml_peak, time, time_min, zero_grad;
    double reserved_peak;
} side_stats;

static double min_after(const ol_dvec *v, size_t from)
{
    double m = NAN;
    for (size_t i = from; i < v->len; i++)
        if (isfinite(v->items[i]) && (isnan(m) || v->items[i] < m))
            m = v->items[i];
    return m;
}

static side_stats stats_of(const variant *v, bool cuda)
{
    side_stats st;
    size_t w = ol_stat_warmup(v->m[M_TIME].len);
    st.growth = ol_stat_slope(&v->m[cuda ? M_CUDA_ALLOC : M_SAVED], w);
    st.nodes = ol_stat_slope(&v->m[M_NODES], w);
    st.rss_growth = ol_stat_slope(&v->m[M_RSS], w);
    st.peak = ol_stat_max(&v->m[cuda ? M_CUDA_PEAK : M_HELD_PEAK], 0);
    st.rss_peak = ol_stat_max(&v->m[M_RSS_PEAK], 0);
    st.nvml_peak = ol_stat_max(&v->m[M_NVML], 0);
    st.reserved_peak = ol_stat_max(&v->m[M_CUDA_RESERVED], 0);
    st.time = ol_stat_median(&v->m[M_TIME], w);
    st.time_min = min_after(&v->m[M_TIME], w);
    st.zero_grad = ol_stat_median(&v->m[M_ZERO_GRAD], 0);
    return st;
}

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

static void add_evidence(scenario *s, const char *label, const char *fmt, ...) OL_PRINTF(3, 4);

static void add_evidence(scenario *s, const char *label, const char *fmt, ...)
{
    if (s->by.len)
        ol_buf_puts(&s->by, ", ");
    ol_buf_puts(&s->by, label);
    if (s->evidence.len)
        ol_buf_puts(&s->evidence, "; ");
    ol_buf_printf(&s->evidence, "%s ", label);
    va_list ap;
    va_start(ap, fmt);
    ol_buf_vprintf(&s->evidence, fmt, ap);
    va_end(ap);
}

static void bytes_pair(ol_buf *b, double bad, double fixed)
{
    ol_fmt_bytes(b, bad);
    ol_buf_puts(b, " vs ");
    ol_fmt_bytes(b, fixed);
}

static void judge(scenario *s, bool cuda)
{
    side_stats b = stats_of(&s->v[0], cuda), f = stats_of(&s->v[1], cuda);
    double scale = isfinite(s->scale) ? s->scale : 0;
    ol_buf t = {0};
    if (s->claims & CLAIM_GROWTH) {
        double d = b.growth - f.growth;
        if (isfinite(d) && d > maxd(1024, scale / 16)) {
            ol_buf_clear(&t);
            bytes_pair(&t, b.growth, f.growth);
            add_evidence(s, "memory growth", "(%s per step %s)", t.data, cuda ? "allocated" : "kept for backward");
        }
        d = b.nodes - f.nodes;
        if (isfinite(d) && d >= 0.5)
            add_evidence(s, "graph growth", "(+%.1f vs %+.1f autograd nodes kept per step)", b.nodes, f.nodes);
        d = b.rss_growth - f.rss_growth;
        if (!cuda && isfinite(d) && d > maxd(256.0 * 1024, scale / 4)) {
            ol_buf_clear(&t);
            bytes_pair(&t, b.rss_growth, f.rss_growth);
            add_evidence(s, "resident memory growth", "(%s per step)", t.data);
        }
    }
    if (s->claims & CLAIM_PEAK) {
        double d = b.peak - f.peak;
        if (isfinite(d) && d > maxd(cuda ? 64.0 * 1024 : 4096, scale / 16)) {
            ol_buf_clear(&t);
            bytes_pair(&t, b.peak, f.peak);
            add_evidence(s, "peak", "(%s %s)", t.data, cuda ? "max allocated" : "kept for backward plus gradients");
        }
        d = b.nvml_peak - f.nvml_peak;
        if (cuda && isfinite(d) && d > maxd(2.0 * 1024 * 1024, scale / 4)) {
            ol_buf_clear(&t);
            bytes_pair(&t, b.nvml_peak, f.nvml_peak);
            add_evidence(s, "driver peak", "(%s as NVML sees it)", t.data);
        }
    }
    if ((s->claims & CLAIM_HOST_PEAK) || (!cuda && (s->claims & CLAIM_PEAK))) {
        double d = b.rss_peak - f.rss_peak;
        if (isfinite(d) && d > maxd(2.0 * 1024 * 1024, scale / 4)) {
            ol_buf_clear(&t);
            bytes_pair(&t, b.rss_peak, f.rss_peak);
            add_evidence(s, "resident peak", "(%s)", t.data);
        }
    }
    if (s->claims & CLAIM_TIME) {
        /* Other work on the machine only ever adds time, so each variant's
         * fastest step is its least disturbed one: those must differ by 10%,
         * and the medians must agree in direction unless the fastest steps
         * are 1.5x apart (a busy machine can swap two medians, not that). */
        double d = b.time_min - f.time_min;
        if (isfinite(d) && d > 0.10 * f.time_min && (b.time > f.time || d > 0.5 * f.time_min)) {
            ol_buf_clear(&t);
            ol_fmt_seconds(&t, b.time);
            ol_buf_puts(&t, " vs ");
            ol_fmt_seconds(&t, f.time);
            add_evidence(s, "time", "(%s per step, %.2fx)", t.data, b.time / f.time);
        }
    }
    if (s->claims & CLAIM_UNDERFLOW) {
        double d = b.zero_grad - f.zero_grad;
        if (isfinite(d) && d > 0.001)
            add_evidence(s, "underflow", "(%.2f%% vs %.2f%% of gradient entries are zero)", 100 * b.zero_grad,
                         100 * f.zero_grad);
    }
    ol_buf_free(&t);
    s->verdict = s->by.len ? "confirmed" : "no measurable cost";
}

static void compare_checksums(scenario *s)
{
    const ol_dvec *a = &s->v[0].m[M_CHECKSUM], *b = &s->v[1].m[M_CHECKSUM];
    size_t n = a->len < b->len ? a->len : b->len;
    s->agree = 1;
    for (size_t i = 0; i < n; i++) {
        double x = a->items[i], y = b->items[i];
        if (isnan(x) && isnan(y))
            continue;
        if (!ol_stat_close(x, y, s->rtol)) {
            s->agree = 0;
            s->agree_detail = ol_xasprintf("iteration %zu: bad %.10g, fixed %.10g (relative tolerance %g)", i, x, y,
                                           s->rtol);
            return;
        }
    }
}

static void settle(scenario *s, size_t iterations, bool cuda)
{
    for (int k = 0; k < 2; k++)
        describe_failure(&s->v[k], iterations);
    variant *bad = &s->v[0], *fixed = &s->v[1];
    if (bad->error || fixed->error) {
        s->failed = true;
        const variant *first = bad->error ? bad : fixed;
        switch (first->child.status) {
        case OL_CHILD_TIMEOUT:
            s->verdict = "timed out";
            break;
        case OL_CHILD_GARBAGE:
            s->verdict = "bad output";
            break;
        case OL_CHILD_STOPPED:
            s->verdict = "interrupted";
            break;
        default:
            s->verdict = "crashed";
        }
        return;
    }
    compare_checksums(s);
    if (s->gpu_only && !cuda) {
        s->verdict = "needs a GPU";
        return;
    }
    s->measured = true;
    judge(s, cuda);
}

/* -- running */

typedef struct variant_ctx {
    probe_run *run;
    variant *v;
} variant_ctx;

static bool on_variant_record(void *ctx, ol_child *c, const cJSON *rec, const char **why)
{
    variant_ctx *vc = ctx;
    variant *v = vc->v;
    if (!variant_record(v, c, rec, why))
        return false;
    const char *t = json_str(rec, "t");
    probe_run *run = vc->run;
    if (strcmp(t, "start") == 0 && run->nvml)
        ol_nvml_set_device(run->nvml, json_str(rec, "gpu_uuid"), json_str(rec, "gpu_pci_bus_id"));
    if (strcmp(t, "iter") == 0) {
        if (run->nvml) {
            double peak;
            bool process;
            if (ol_nvml_take_peak(run->nvml, &peak, &process)) {
                ol_vec_last(&v->m[M_NVML]) = peak;
                if (process)
                    v->nvml_process = true;
                else
                    v->nvml_device = true;
            }
        }
        ol_progress(run->env, "[%zu/%zu] %s/%s %s: step %zu/%d", run->started, run->total, v->sc->rule, v->sc->name,
                    v->bad ? "bad" : "fixed", v->m[M_TIME].len, run->env->opts->iterations);
    }
    return true;
}

static void on_variant_start(void *ctx, ol_child *c)
{
    variant_ctx *vc = ctx;
    vc->run->started++;
    if (vc->run->nvml)
        ol_nvml_start(vc->run->nvml, c->pid);
    ol_progress(vc->run->env, "[%zu/%zu] %s/%s %s: starting", vc->run->started, vc->run->total, vc->v->sc->rule,
                vc->v->sc->name, vc->v->bad ? "bad" : "fixed");
}

static void on_variant_end(void *ctx, ol_child *c)
{
    variant_ctx *vc = ctx;
    (void)c;
    if (vc->run->nvml)
        ol_nvml_stop(vc->run->nvml);
}

static void run_scenarios(probe_run *run)
{
    ol_probe_env *env = run->env;
    const ol_probe_opts *o = env->opts;
    bool cuda = strcmp(env->device, "cuda") == 0;
    size_t n = run->scenarios.len * 2;
    ol_child **kids = ol_xcalloc(n ? n : 1, sizeof *kids);
    variant_ctx *ctxs = ol_xcalloc(n ? n : 1, sizeof *ctxs);
    char *harness = ol_xasprintf("%s/harness.py", env->dir);
    char iters[32];
    snprintf(iters, sizeof iters, "%d", o->iterations);
    for (size_t i = 0; i < run->scenarios.len; i++) {
        scenario *s = run->scenarios.items[i];
        for (int k = 0; k < 2; k++) {
            variant *v = &s->v[k];
            v->sc = s;
            v->bad = k == 0;
            char *ident = ol_xasprintf("%s/%s", s->rule, s->name);
            char **argv = ol_argv_new(env->py.path, harness, "run", ident, k == 0 ? "bad" : "fixed", "--device",
                                      env->device, "--iterations", iters, "--fd", "3", (const char *)NULL);
            free(ident);
            size_t j = 2 * i + (size_t)k;
            ctxs[j] = (variant_ctx){run, v};
            ol_child_init(&v->child, argv, &ctxs[j]);
            v->child.on_record = on_variant_record;
            v->child.on_start = on_variant_start;
            v->child.on_end = on_variant_end;
            kids[j] = &v->child;
        }
    }
    free(harness);
    run->total = n;
    /* On a GPU one process at a time: variants would share its memory and time. */
    int parallel = cuda ? 1 : (o->jobs > 0 ? o->jobs : 2);
    ol_children_run(env, kids, n, parallel, o->timeout_s);
    for (size_t i = 0; i < run->scenarios.len; i++)
        settle(run->scenarios.items[i], (size_t)o->iterations, cuda);
    free(kids);
    free(ctxs);
}

/* ---- output ---------------------------------------------------------------------------------- */

static void json_num_or_null(cJSON *obj, const char *key, double v, bool integer)
{
    if (!isfinite(v))
        cJSON_AddNullToObject(obj, key);
    else
        cJSON_AddNumberToObject(obj, key, integer ? ol_stat_round(v) : ol_stat_round(v * 1e6) / 1e6);
}

static cJSON *side_json(const variant *v, bool cuda)
{
    side_stats st = stats_of(v, cuda);
    cJSON *o = cJSON_CreateObject();
    json_num_or_null(o, "peak_bytes", st.peak, true);
    json_num_or_null(o, "growth_bytes_per_step", st.growth, true);
    json_num_or_null(o, "graph_nodes_per_step", st.nodes, false);
    json_num_or_null(o, "rss_peak_bytes", st.rss_peak, true);
    json_num_or_null(o, "rss_growth_bytes_per_step", st.rss_growth, true);
    json_num_or_null(o, "time_per_step_s", st.time, false);
    json_num_or_null(o, "fastest_step_s", st.time_min, false);
    if (cuda) {
        json_num_or_null(o, "reserved_peak_bytes", st.reserved_peak, true);
        json_num_or_null(o, "driver_peak_bytes", st.nvml_peak, true);
        if (v->nvml_process || v->nvml_device)
            cJSON_AddStringToObject(o, "driver_scope", v->nvml_process ? "process" : "device");
    }
    if (isfinite(st.zero_grad))
        json_num_or_null(o, "zero_grad_fraction", st.zero_grad, false);
    cJSON_AddNumberToObject(o, "iterations", (double)v->m[M_TIME].len);
    if (v->holder && isfinite(v->holder_nodes) && v->holder_nodes > 0) {
        cJSON *h = cJSON_AddObjectToObject(o, "graph_held_by");
        cJSON_AddStringToObject(h, "name", v->holder);
        cJSON_AddNumberToObject(h, "nodes", v->holder_nodes);
    }
    return o;
}

static const char *device_label(const ol_probe_env *env)
{
    return strcmp(env->device, "cuda") == 0 && env->py.gpu ? env->py.gpu : env->device;
}

static void emit_json(const probe_run *run, FILE *out)
{
    const ol_probe_env *env = run->env;
    bool cuda = strcmp(env->device, "cuda") == 0;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "device", device_label(env));
    cJSON_AddStringToObject(root, "device_kind", env->device);
    cJSON_AddStringToObject(root, "torch", env->py.torch);
    cJSON_AddNumberToObject(root, "iterations", env->opts->iterations);
    cJSON *arr = cJSON_AddArrayToObject(root, "scenarios");
    for (size_t i = 0; i < run->scenarios.len; i++) {
        const scenario *s = run->scenarios.items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", s->rule);
        cJSON_AddStringToObject(o, "scenario", s->name);
        cJSON_AddStringToObject(o, "summary", s->summary);
        cJSON_AddStringToObject(o, "verdict", s->verdict ? s->verdict : "not run");
        cJSON *by = cJSON_AddArrayToObject(o, "confirmed_by");
        if (s->by.len) {
            const char *p = s->by.data;
            while (*p) {
                const char *comma = strstr(p, ", ");
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                char *item = ol_xstrndup(p, len);
                cJSON_AddItemToArray(by, cJSON_CreateString(item));
                free(item);
                p += len + (comma ? 2 : 0);
            }
        }
        if (s->evidence.len)
            cJSON_AddStringToObject(o, "evidence", s->evidence.data);
        if (s->agree < 0)
            cJSON_AddNullToObject(o, "agree");
        else
            cJSON_AddBoolToObject(o, "agree", s->agree == 1);
        if (s->agree_detail)
            cJSON_AddStringToObject(o, "agree_detail", s->agree_detail);
        if (s->measured) {
            cJSON_AddItemToObject(o, "bad", side_json(&s->v[0], cuda));
            cJSON_AddItemToObject(o, "fixed", side_json(&s->v[1], cuda));
        } else {
            cJSON_AddNullToObject(o, "bad");
            cJSON_AddNullToObject(o, "fixed");
        }
        if (s->failed) {
            ol_buf e = {0};
            for (int k = 0; k < 2; k++)
                if (s->v[k].error)
                    ol_buf_printf(&e, "%s%s variant %s", e.len ? "; " : "", k == 0 ? "bad" : "fixed", s->v[k].error);
            cJSON_AddStringToObject(o, "error", e.data ? e.data : "");
            ol_buf_free(&e);
        }
        if (isfinite(s->scale))
            cJSON_AddNumberToObject(o, "scale_bytes", s->scale);
        if (s->params)
            cJSON_AddItemToObject(o, "params", cJSON_Duplicate(s->params, true));
        if (s->note)
            cJSON_AddStringToObject(o, "note", s->note);
        cJSON_AddItemToArray(arr, o);
    }
    ol_json_print(out, root);
}

static void pair_cell(ol_buf *b, double bad, double fixed, int kind)
{
    ol_buf_clear(b);
    if (kind == 0) {
        ol_fmt_bytes(b, bad);
        ol_buf_puts(b, " / ");
        ol_fmt_bytes(b, fixed);
    } else if (kind == 1) {
        if (isfinite(bad))
            ol_buf_printf(b, "%+.1f / %+.1f", bad, fixed);
        else
            ol_buf_puts(b, "- / -");
    } else {
        ol_fmt_seconds(b, bad);
        ol_buf_puts(b, " / ");
        ol_fmt_seconds(b, fixed);
    }
}

static void emit_text(const probe_run *run, FILE *out)
{
    const ol_probe_env *env = run->env;
    bool cuda = strcmp(env->device, "cuda") == 0;
    fprintf(out, "oomlint probe: %s, torch %s (%s), %d iterations per variant\n", device_label(env), env->py.torch,
            env->py.path, env->opts->iterations);
    if (!cuda)
        fputs("On the CPU, memory is what autograd keeps for backward (plus gradients, for the peak); "
              "resident memory and time are in the JSON.\n",
              out);
    fputc('\n', out);
    fprintf(out, "%-7s %-17s %-19s %-5s %-23s %-23s %-15s %s\n", "RULE", "SCENARIO", "VERDICT", "AGREE",
            "PEAK bad / fixed", "GROWTH/STEP bad / fixed", "NODES/STEP", "TIME/STEP bad / fixed");
    ol_buf c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0};
    for (size_t i = 0; i < run->scenarios.len; i++) {
        const scenario *s = run->scenarios.items[i];
        const char *agree = s->agree == 1 ? "yes" : s->agree == 0 ? "NO" : "-";
        if (s->measured) {
            side_stats b = stats_of(&s->v[0], cuda), f = stats_of(&s->v[1], cuda);
            pair_cell(&c1, b.peak, f.peak, 0);
            pair_cell(&c2, b.growth, f.growth, 0);
            pair_cell(&c3, b.nodes, f.nodes, 1);
            pair_cell(&c4, b.time, f.time, 2);
            fprintf(out, "%-7s %-17s %-19s %-5s %-23s %-23s %-15s %s\n", s->rule, s->name, s->verdict, agree, c1.data,
                    c2.data, c3.data, c4.data);
        } else {
            fprintf(out, "%-7s %-17s %-19s %-5s\n", s->rule, s->name, s->verdict ? s->verdict : "not run", agree);
        }
    }
    ol_buf_free(&c1);
    ol_buf_free(&c2);
    ol_buf_free(&c3);
    ol_buf_free(&c4);
    bool header = false;
    for (size_t i = 0; i < run->scenarios.len; i++) {
        const scenario *s = run->scenarios.items[i];
        ol_buf line = {0};
        if (s->failed) {
            for (int k = 0; k < 2; k++)
                if (s->v[k].error)
                    ol_buf_printf(&line, "%s%s variant %s", line.len ? "; " : "", k == 0 ? "bad" : "fixed",
                                  s->v[k].error);
        } else if (s->evidence.len) {
            ol_buf_printf(&line, "%s", s->evidence.data);
            if (s->v[0].holder && s->claims & CLAIM_GROWTH && strstr(s->by.data, "graph growth"))
                ol_buf_printf(&line, "; the graph is held by `%s`", s->v[0].holder);
        }
        if (s->agree == 0)
            ol_buf_printf(&line, "%sthe variants disagree at %s", line.len ? "; " : "", s->agree_detail);
        if (line.len) {
            if (!header) {
                fputc('\n', out);
                header = true;
            }
            fprintf(out, "%s/%s: %s\n", s->rule, s->name, line.data);
        }
        ol_buf_free(&line);
    }
}

static int metric_for_plot(const scenario *s, bool cuda, const char **unit)
{
    *unit = "bytes";
    const char *by = s->by.data ? s->by.data : "";
    if (strstr(by, "memory growth") || (!by[0] && (s->claims & CLAIM_GROWTH)))
        return cuda ? M_CUDA_ALLOC : M_SAVED;
    if (strstr(by, "graph growth")) {
        *unit = "nodes";
        return M_NODES;
    }
    if (strncmp(by, "peak", 4) == 0 || (!by[0] && (s->claims & CLAIM_PEAK)))
        return cuda ? M_CUDA_PEAK : M_HELD_PEAK;
    if (strstr(by, "resident peak") || (!by[0] && (s->claims & CLAIM_HOST_PEAK)))
        return M_RSS_PEAK;
    if (strstr(by, "driver peak"))
        return M_NVML;
    if (strstr(by, "underflow") || (!by[0] && (s->claims & CLAIM_UNDERFLOW))) {
        *unit = "share";
        return M_ZERO_GRAD;
    }
    if (strstr(by, "time") || (!by[0] && (s->claims & CLAIM_TIME))) {
        *unit = "s";
        return M_TIME;
    }
    return cuda ? M_CUDA_ALLOC : M_SAVED;
}

static const char *metric_name(int m)
{
    switch (m) {
    case M_SAVED:
        return "kept for backward";
    case M_HELD_PEAK:
        return "peak kept for backward + grads";
    case M_NODES:
        return "autograd nodes alive";
    case M_RSS_PEAK:
        return "resident peak";
    case M_CUDA_ALLOC:
        return "allocated";
    case M_CUDA_PEAK:
        return "max allocated";
    case M_NVML:
        return "driver";
    case M_ZERO_GRAD:
        return "zero gradient share";
    case M_TIME:
        return "time per step";
    default:
        return "";
    }
}

static bool write_plot(const probe_run *run, ol_buf *err)
{
    const ol_probe_env *env = run->env;
    bool cuda = strcmp(env->device, "cuda") == 0;
    ol_svg_panels panels = {0};
    for (size_t i = 0; i < run->scenarios.len; i++) {
        const scenario *s = run->scenarios.items[i];
        ol_svg_panel p = {0};
        const char *unit;
        int m = metric_for_plot(s, cuda, &unit);
        if (s->measured) {
            p.title = ol_xasprintf("%s %s: %s", s->rule, s->name, metric_name(m));
            p.lines[0] = (ol_svg_line){"bad", "#d62728", &s->v[0].m[m]};
            p.lines[1] = (ol_svg_line){"fixed", "#1f77b4", &s->v[1].m[m]};
            p.line_count = 2;
        } else {
            p.title = ol_xasprintf("%s %s: %s", s->rule, s->name, s->verdict ? s->verdict : "not run");
        }
        p.unit = ol_xstrdup(unit);
        ol_vec_push(&panels, p);
    }
    char *title = ol_xasprintf("oomlint probe: %s, torch %s, bad (red) against fixed (blue)", device_label(env),
                               env->py.torch);
    ol_buf svg = {0};
    ol_svg_render(&svg, title, &panels);
    bool ok = ol_write_file_atomic(env->opts->plot, svg.data, svg.len, err);
    ol_buf_free(&svg);
    free(title);
    ol_svg_panels_free(&panels);
    return ok;
}

int ol_probe_scenarios(ol_probe_env *env)
{
    ol_buf err = {0};
    probe_run run = {0};
    run.env = env;
    scenario_vec all = {0};
    int status = 0;
    if (!list_scenarios(env, &all, &err)) {
        status = 2;
        goto done;
    }
    if (env->opts->rules) {
        char *bad = unmatched_selector(env->opts->rules, &all);
        if (bad) {
            ol_buf names = {0};
            for (size_t i = 0; i < all.len; i++)
                if (i == 0 || strcmp(all.items[i]->rule, all.items[i - 1]->rule) != 0)
                    ol_buf_printf(&names, "%s%s", names.len ? ", " : "", all.items[i]->rule);
            ol_buf_printf(&err, "no probe scenario for '%s' (scenarios exist for %s)", bad, names.data);
            ol_buf_free(&names);
            free(bad);
            status = 2;
            goto done;
        }
    }
    for (size_t i = 0; i < all.len; i++) {
        if (rule_selected(env->opts->rules, all.items[i]->rule)) {
            ol_vec_push(&run.scenarios, all.items[i]);
            all.items[i] = NULL;
        }
    }
    if (strcmp(env->device, "cuda") == 0) {
        ol_buf why = {0};
        run.nvml = ol_nvml_open(&why);
        if (!run.nvml)
            fprintf(stderr, "oomlint probe: no driver figures: %s\n", why.data);
        ol_buf_free(&why);
    }
    run_scenarios(&run);
    ol_progress_clear(env);
    if (env->interrupted)
        goto done; /* said and answered 130 by ol_probe_main */
    if (env->opts->json)
        emit_json(&run, stdout);
    else
        emit_text(&run, stdout);
    fflush(stdout);
    for (size_t i = 0; i < run.scenarios.len; i++)
        if (run.scenarios.items[i]->failed || run.scenarios.items[i]->agree == 0)
            status = 1;
    if (env->opts->plot && !write_plot(&run, &err))
        status = 2;

done:
    if (err.len)
        fprintf(stderr, "oomlint probe: error: %s\n", err.data);
    ol_buf_free(&err);
    ol_nvml_close(run.nvml);
    for (size_t i = 0; i < all.len; i++)
        if (all.items[i])
            scenario_free(all.items[i]);
    ol_vec_free(&all);
    for (size_t i = 0; i < run.scenarios.len; i++)
        scenario_free(run.scenarios.items[i]);
    ol_vec_free(&run.scenarios);
    return status;
}

