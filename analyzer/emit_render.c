/*
 * emit_render.c - a file's part of the report, made on the worker that
 * linted it (see ol_renderer in emit.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "emit.h"
#include "util.h"

void ol_renderer_init(ol_renderer *rd, const ol_emit_options *o, bool discard)
{
    rd->o = *o;
    rd->discard = discard;
    rd->cwd = !discard && o->format == OL_FMT_SARIF ? ol_sarif_cwd() : NULL;
}

void ol_renderer_free(ol_renderer *rd)
{
    free(rd->cwd);
    rd->cwd = NULL;
}

/* Text and annotations are written through a FILE, as to the report. */
static void render_stream(const ol_renderer *rd, ol_file_result *r)
{
    char *data = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&data, &len);
    if (!mem)
        ol_oom();
    if (rd->o.format == OL_FMT_GITHUB)
        ol_emit_github_file(mem, r);
    else
        ol_emit_text_file(mem, r, &rd->o);
    if (fclose(mem) != 0 || !data)
        ol_oom();
    r->rendered = data;
    r->rendered_len = len;
}

void ol_render_result(const ol_renderer *rd, ol_file_result *r)
{
    if (!rd || r->from_stdin || !r->has_source || r->rendered)
        return;
    if (!rd->discard && r->diags.len) {
        if (rd->o.format == OL_FMT_JSON || rd->o.format == OL_FMT_SARIF) {
            /* JSON's --statistics counts findings; SARIF has no such form */
            if (!(rd->o.statistics && rd->o.format == OL_FMT_JSON)) {
                ol_buf b = {0};
                if (rd->o.format == OL_FMT_JSON)
                    ol_emit_json_file(&b, r);
                else
                    ol_emit_sarif_file(&b, rd->cwd, r);
                r->rendered_len = b.len;
                r->rendered = b.data ? ol_buf_take(&b) : ol_xstrdup("");
            }
        } else {
            render_stream(rd, r);
        }
    }
    ol_source_free(&r->src);
    r->has_source = false;
}
