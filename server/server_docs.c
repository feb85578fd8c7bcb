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

/* Units one character takes in the encoding, from its UTF-8 length. */
static uint32_t units(int utf8_len, ol_pos_encoding enc)
{
    if (enc == OL_ENC_UTF8)
        return (uint32_t)utf8_len;
    if (enc == OL_ENC_UTF16)
        return utf8_len == 4 ? 2 : 1;
    return 1;
}

static void index_lines(ol_doc *d)
{
    d->col_marks.len = 0;
    uint32_t cp = 0, u16 = 0;
    for (size_t b = 0; b <= d->text.len / OL_DOC_BLOCK; b++) {
        ol_vec_push(&d->col_marks, cp);
        ol_vec_push(&d->col_marks, u16);
        size_t end = b * OL_DOC_BLOCK + OL_DOC_BLOCK;
        if (end > d->text.len)
            end = d->text.len;
        for (size_t i = b * OL_DOC_BLOCK; i < end; i++) {
            unsigned char c = (unsigned char)d->text.data[i];
            if ((c & 0xC0) != 0x80) {
                cp++;
                u16 += c >= 0xF0 ? 2 : 1;
            }
        }
    }
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
    ol_vec_free(&d->col_marks);
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

/* Units of the encoding in the text before byte (a character's start). */
static uint32_t units_before(const ol_doc *d, uint32_t byte, ol_pos_encoding enc)
{
    if (enc == OL_ENC_UTF8)
        return byte;
    uint32_t b = byte / OL_DOC_BLOCK;
    uint32_t n = d->col_marks.items[2 * b + (enc == OL_ENC_UTF16 ? 1 : 0)];
    for (uint32_t i = b * OL_DOC_BLOCK; i < byte; i++) {
        unsigned char c = (unsigned char)d->text.data[i];
        if ((c & 0xC0) != 0x80)
            n += enc == OL_ENC_UTF16 && c >= 0xF0 ? 2 : 1;
    }
    return n;
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
    if (byte - start > 2 * OL_DOC_BLOCK && d->col_marks.len > 0) {
        /* a long line: by difference of counts from the text's start, so many
         * findings on one line cost a block each, not the line each */
        p.character = units_before(d, byte, enc) - units_before(d, start, enc);
        return p;
    }
    for (uint32_t i = start; i < byte;) {
        int n = char_len(d, i, end);
        p.character += units(n, enc);
        i += (uint32_t)n;
    }
    return p;
}

int64_t ol_json_clamp(double v, int64_t lo, int64_t hi)
{
    if (!(v > (double)lo)) /* NaN too */
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

static bool read_uint(const cJSON *j, const char *key, uint32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
        return false;
    if (v->valuedouble > 4294967295.0) {
        *out = UINT32_MAX; /* past any document's end: clamped there */
        return true;
    }
    if (v->valuedouble != (double)(uint32_t)v->valuedouble)
        return false; /* a fraction */
    *out = (uint32_t)v->valuedouble;
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

static size_t uri_hash(const char *uri)
{
    uint64_t h = 1469598103934665603u;
    for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return (size_t)(h ^ (h >> 29));
}

/* The slot holding uri, or the empty slot where it would go. */
static size_t slot_of(const ol_doc_store *s, const char *uri)
{
    size_t mask = s->slot_count - 1, i = uri_hash(uri) & mask;
    while (s->slots[i] && strcmp(s->slots[i]->uri, uri) != 0)
        i = (i + 1) & mask;
    return i;
}

static void rehash(ol_doc_store *s, size_t count)
{
    free(s->slots);
    s->slot_count = count;
    s->slots = ol_xcalloc(count, sizeof(ol_doc *));
    for (size_t i = 0; i < s->docs.len; i++)
        s->slots[slot_of(s, s->docs.items[i]->uri)] = s->docs.items[i];
}

ol_doc *ol_docs_find(const ol_doc_store *s, const char *uri)
{
    if (s->slot_count == 0)
        return NULL;
    return s->slots[slot_of(s, uri)];
}

void ol_docs_put(ol_doc_store *s, ol_doc *d)
{
    if ((s->docs.len + 1) * 2 > s->slot_count)
        rehash(s, s->slot_count ? s->slot_count * 2 : 64);
    size_t k = slot_of(s, d->uri);
    ol_doc *old = s->slots[k];
    s->slots[k] = d;
    if (old) {
        d->store_index = old->store_index;
        s->docs.items[d->store_index] = d;
        ol_doc_free(old);
        return;
    }
    d->store_index = s->docs.len;
    ol_vec_push(&s->docs, d);
}

bool ol_docs_remove(ol_doc_store *s, const char *uri)
{
    if (s->slot_count == 0)
        return false;
    size_t mask = s->slot_count - 1, k = slot_of(s, uri);
    ol_doc *d = s->slots[k];
    if (!d)
        return false;
    /* backward-shift deletion keeps every probe sequence unbroken */
    s->slots[k] = NULL;
    for (size_t j = (k + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
        size_t home = uri_hash(s->slots[j]->uri) & mask;
        /* move j into the hole at k unless its home lies cyclically in (k, j] */
        bool stays = k <= j ? (home > k && home <= j) : (home > k || home <= j);
        if (!stays) {
            s->slots[k] = s->slots[j];
            s->slots[j] = NULL;
            k = j;
        }
    }
    size_t at = d->store_index;
    ol_doc *last = s->docs.items[--s->docs.len];
    s->docs.items[at] = last;
    last->store_index = at;
    ol_doc_free(d);
    return true;
}

void ol_docs_free(ol_doc_store *s)
{
    for (size_t i = 0; i < s->docs.len; i++)
        ol_doc_free(s->docs.items[i]);
    ol_vec_free(&s->docs);
    free(s->slots);
    s->slots = NULL;
    s->slot_count = 0;
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
