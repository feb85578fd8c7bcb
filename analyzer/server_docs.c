/*
 * server_docs.c - open documents, incremental sync and position arithmetic
 * (see server_docs.h).
 */
#include "server_docs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

const char *ol_pos_encoding_name(ol_pos_encoding e)
{
    switch (e) {
    case OL_ENC_UTF8:
        return "utf-8";
    case OL_ENC_UTF32:
        return "utf-32";
    case OL_ENC_UTF16:
        break;
    }
    return "utf-16";
}

static void index_lines(ol_doc *d)
{
    d->lines.len = 0;
    ol_vec_push(&d->lines, 0u);
    const char *s = d->text.data;
    size_t n = d->text.len;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            ol_vec_push(&d->lines, (uint32_t)(i + 1));
        } else if (s[i] == '\r') {
            if (i + 1 < n && s[i + 1] == '\n')
                i++;
            ol_vec_push(&d->lines, (uint32_t)(i + 1));
        }
    }
}

/* Copies text into b, replacing invalid UTF-8 (and NUL) by U+FFFD. */
static void put_valid_utf8(ol_buf *b, const char *text, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t ok = ol_utf8_validate(text + i, n - i);
        const char *nul = memchr(text + i, '\0', ok);
        if (nul)
            ok = (size_t)(nul - (text + i));
        ol_buf_add(b, text + i, ok);
        i += ok;
        if (i < n) {
            ol_buf_add(b, "\xEF\xBF\xBD", 3);
            i++;
        }
    }
}

void ol_doc_set_text(ol_doc *d, const char *text, size_t n)
{
    ol_buf_clear(&d->text);
    if (n >= UINT32_MAX - 16)
        n = 0; /* larger than the engine's positions can address */
    put_valid_utf8(&d->text, text, n);
    ol_buf_reserve(&d->text, 0);
    d->text.data[d->text.len] = '\0';
    index_lines(d);
}

ol_doc *ol_doc_new(const char *uri, const char *language, int64_t version, const char *text, size_t n)
{
    ol_doc *d = ol_xcalloc(1, sizeof(*d));
    d->uri = ol_xstrdup(uri);
    d->language = ol_xstrdup(language ? language : "");
    d->version = version;
    ol_doc_set_text(d, text, n);
    return d;
}

void ol_doc_free(ol_doc *d)
{
    if (!d)
        return;
    free(d->uri);
    free(d->language);
    free(d->notebook);
    ol_buf_free(&d->text);
    ol_vec_free(&d->lines);
    free(d);
}

void ol_doc_line_span(const ol_doc *d, uint32_t i, uint32_t *start, uint32_t *end)
{
    if (i >= d->lines.len) {
        *start = *end = (uint32_t)d->text.len;
        return;
    }
    uint32_t s = d->lines.items[i];
    uint32_t e = i + 1 < d->lines.len ? d->lines.items[i + 1] : (uint32_t)d->text.len;
    /* drop the line break: "\n", "\r\n" or "\r" */
    if (e > s && d->text.data[e - 1] == '\n')
        e--;
    if (e > s && d->text.data[e - 1] == '\r')
        e--;
    *start = s;
    *end = e;
}

uint32_t ol_doc_line_of(const ol_doc *d, uint32_t byte)
{
    size_t lo = 0, hi = d->lines.len;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->lines.items[mid] <= byte)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* Units one character takes in the encoding, from its UTF-8 length. */
static uint32_t units(int utf8_len, ol_pos_encoding enc)
{
    if (enc == OL_ENC_UTF8)
        return (uint32_t)utf8_len;
    if (enc == OL_ENC_UTF16)
        return utf8_len == 4 ? 2 : 1;
    return 1;
}

static int char_len(const ol_doc *d, uint32_t i, uint32_t end)
{
    int n = ol_utf8_seq_len((const unsigned char *)d->text.data + i, end - i);
    return n > 0 ? n : 1;
}

uint32_t ol_doc_offset(const ol_doc *d, ol_lsp_pos p, ol_pos_encoding enc)
{
    if (p.line >= d->lines.len)
        return (uint32_t)d->text.len;
    uint32_t start, end;
    ol_doc_line_span(d, p.line, &start, &end);
    uint32_t i = start, count = 0;
    while (i < end && count < p.character) {
        int n = char_len(d, i, end);
        uint32_t u = units(n, enc);
        if (count + u > p.character)
            break; /* inside a surrogate pair or a UTF-8 sequence */
        count += u;
        i += (uint32_t)n;
    }
    return i;
}

ol_lsp_pos ol_doc_position(const ol_doc *d, uint32_t byte, ol_pos_encoding enc)
{
    if (byte > d->text.len)
        byte = (uint32_t)d->text.len;
    /* back to the start of a character */
    while (byte > 0 && byte < d->text.len && ((unsigned char)d->text.data[byte] & 0xC0) == 0x80)
        byte--;
    ol_lsp_pos p = {ol_doc_line_of(d, byte), 0};
    uint32_t start, end;
    ol_doc_line_span(d, p.line, &start, &end);
    if (byte > end)
        byte = end;
    for (uint32_t i = start; i < byte;) {
        int n = char_len(d, i, end);
        p.character += units(n, enc);
        i += (uint32_t)n;
    }
    return p;
}

static bool read_uint(const cJSON *j, const char *key, uint32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != (double)(int64_t)v->valuedouble)
        return false;
    *out = v->valuedouble > 4294967295.0 ? UINT32_MAX : (uint32_t)v->valuedouble;
    return true;
}

bool ol_lsp_pos_read(const cJSON *j, ol_lsp_pos *p)
{
    return cJSON_IsObject(j) && read_uint(j, "line", &p->line) && read_uint(j, "character", &p->character);
}

bool ol_lsp_range_read(const cJSON *j, ol_lsp_pos *start, ol_lsp_pos *end)
{
    return cJSON_IsObject(j) && ol_lsp_pos_read(cJSON_GetObjectItemCaseSensitive(j, "start"), start) &&
           ol_lsp_pos_read(cJSON_GetObjectItemCaseSensitive(j, "end"), end);
}

static cJSON *pos_json(ol_lsp_pos p)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "line", p.line);
    cJSON_AddNumberToObject(j, "character", p.character);
    return j;
}

cJSON *ol_lsp_range_json(ol_lsp_pos start, ol_lsp_pos end)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "start", pos_json(start));
    cJSON_AddItemToObject(j, "end", pos_json(end));
    return j;
}

bool ol_doc_apply_change(ol_doc *d, const cJSON *change, ol_pos_encoding enc, ol_buf *err)
{
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(change, "text");
    if (!cJSON_IsObject(change) || !cJSON_IsString(text)) {
        ol_buf_puts(err, "a content change needs a \"text\" string");
        return false;
    }
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(change, "range");
    if (!range || cJSON_IsNull(range)) {
        ol_doc_set_text(d, text->valuestring, strlen(text->valuestring));
        return true;
    }
    ol_lsp_pos a, b;
    if (!ol_lsp_range_read(range, &a, &b)) {
        ol_buf_puts(err, "a content change has an invalid \"range\"");
        return false;
    }
    uint32_t start = ol_doc_offset(d, a, enc), end = ol_doc_offset(d, b, enc);
    if (end < start) {
        uint32_t t = start;
        start = end;
        end = t;
    }
    size_t add = strlen(text->valuestring);
    if (d->text.len - (end - start) + add >= UINT32_MAX - 16) {
        ol_buf_puts(err, "the document would grow past 4 GiB");
        return false;
    }
    ol_buf next = {0};
    ol_buf_reserve(&next, d->text.len - (end - start) + add + 1);
    ol_buf_add(&next, d->text.data, start);
    put_valid_utf8(&next, text->valuestring, add);
    ol_buf_add(&next, d->text.data + end, d->text.len - end);
    ol_buf_reserve(&next, 0);
    next.data[next.len] = '\0';
    ol_buf_free(&d->text);
    d->text = next;
    index_lines(d);
    return true;
}

/* ---- the store ------------------------------------------------------------------- */

ol_doc *ol_docs_find(const ol_doc_store *s, const char *uri)
{
    for (size_t i = 0; i < s->docs.len; i++)
        if (strcmp(s->docs.items[i]->uri, uri) == 0)
            return s->docs.items[i];
    return NULL;
}

void ol_docs_put(ol_doc_store *s, ol_doc *d)
{
    for (size_t i = 0; i < s->docs.len; i++) {
        if (strcmp(s->docs.items[i]->uri, d->uri) == 0) {
            ol_doc_free(s->docs.items[i]);
            s->docs.items[i] = d;
            return;
        }
    }
    ol_vec_push(&s->docs, d);
}

bool ol_docs_remove(ol_doc_store *s, const char *uri)
{
    for (size_t i = 0; i < s->docs.len; i++) {
        if (strcmp(s->docs.items[i]->uri, uri) == 0) {
            ol_doc_free(s->docs.items[i]);
            s->docs.items[i] = s->docs.items[--s->docs.len];
            return true;
        }
    }
    return false;
}

void ol_docs_free(ol_doc_store *s)
{
    for (size_t i = 0; i < s->docs.len; i++)
        ol_doc_free(s->docs.items[i]);
    ol_vec_free(&s->docs);
}

/* ---- URIs ---------------------------------------------------------------------- */

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *ol_uri_to_path(const char *uri)
{
    if (!ol_mem_ieq(uri, "file://", 7) || strlen(uri) < 7)
        return NULL;
    const char *p = uri + 7;
    if (*p != '/') {
        /* an authority: only the local host is a path here */
        if (ol_mem_ieq(p, "localhost/", 10))
            p += 9;
        else
            return NULL;
    }
    ol_buf b = {0};
    for (; *p && *p != '?' && *p != '#'; p++) {
        if (*p == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
            char c = (char)(hex(p[1]) * 16 + hex(p[2]));
            if (c == '\0') {
                ol_buf_free(&b);
                return NULL;
            }
            ol_buf_putc(&b, c);
            p += 2;
        } else {
            ol_buf_putc(&b, *p);
        }
    }
    return ol_buf_take(&b);
}

char *ol_path_to_uri(const char *path)
{
    ol_buf b = {0};
    ol_buf_puts(&b, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                     c == '.' || c == '_' || c == '~' || c == '/';
        if (plain)
            ol_buf_putc(&b, (char)c);
        else
            ol_buf_printf(&b, "%%%02X", c);
    }
    return ol_buf_take(&b);
}
