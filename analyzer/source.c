/*
 * source.c - decoding source bytes to UTF-8 and the line index.
 *
 * The decoder mirrors CPython's tokenizer: BOM, then a PEP 263 declaration on
 * the first two lines, then strict UTF-8. A failure is reported with where it
 * happened (line and column of the first bad byte) so the user can find it.
 */
#include "source.h"

#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ol_utf8_seq_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0; /* beyond U+10FFFF */
        return 4;
    }
    return 0;
}

size_t ol_utf8_validate(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        int len = ol_utf8_seq_len(u + i, n - i);
        if (len == 0)
            return i;
        i += (size_t)len;
    }
    return n;
}

void ol_source_index_lines(ol_source *src)
{
    free(src->line_starts);
    uint32_t count = 1;
    for (uint32_t i = 0; i < src->len; i++)
        if (src->text[i] == '\n')
            count++;
    src->line_starts = ol_xmalloc(sizeof(uint32_t) * count);
    src->line_starts[0] = 0;
    uint32_t k = 1;
    for (uint32_t i = 0; i < src->len; i++)
        if (src->text[i] == '\n')
            src->line_starts[k++] = i + 1;
    src->line_count = count;
    const char *nl = memchr(src->text, '\n', src->len);
    src->crlf = nl && nl > src->text && nl[-1] == '\r';
}

/*
 * Finds a PEP 263 declaration: a comment on line 1 or 2 matching
 * `coding[:=]\s*([-\w.]+)`. Line 2 only counts when line 1 is a comment or
 * blank, as in CPython. Writes the name into name (lowercased, '_' -> '-').
 */
static bool find_coding(const char *s, size_t n, char *name, size_t name_cap)
{
    size_t pos = 0;
    for (int line = 0; line < 2 && pos < n; line++) {
        size_t end = pos;
        while (end < n && s[end] != '\n' && s[end] != '\r')
            end++;
        size_t i = pos;
        while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f'))
            i++;
        if (i < end && s[i] == '#') {
            for (size_t j = i; j + 6 < end; j++) {
                if (memcmp(s + j, "coding", 6) != 0 || (s[j + 6] != ':' && s[j + 6] != '='))
                    continue;
                size_t k = j + 7;
                while (k < end && (s[k] == ' ' || s[k] == '\t'))
                    k++;
                size_t len = 0;
                while (k < end && len + 1 < name_cap) {
                    char c = s[k];
                    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
                        break;
                    if (c >= 'A' && c <= 'Z')
                        c = (char)(c - 'A' + 'a');
                    if (c == '_')
                        c = '-';
                    name[len++] = c;
                    k++;
                }
                name[len] = '\0';
                if (len > 0)
                    return true;
            }
        } else if (i < end) {
            return false; /* line 1 is code: line 2 cannot declare */
        }
        pos = end;
        if (pos < n && s[pos] == '\r')
            pos++;
        if (pos < n && s[pos] == '\n')
            pos++;
    }
    return false;
}

/* UTF-8, also through codecs that packages register to rewrite UTF-8
 * source before Python reads it (the future-fstrings package backports
 * f-strings to old Pythons with `# -*- coding: future-fstrings -*-`). */
static bool is_utf8_name(const char *name)
{
    return strcmp(name, "utf-8") == 0 || strcmp(name, "utf8") == 0 || strcmp(name, "utf-8-sig") == 0 ||
           ol_str_has_prefix(name, "utf-8-") || strcmp(name, "future-fstrings") == 0 ||
           strcmp(name, "future_fstrings") == 0;
}

/* Python codec names that iconv spells differently. */
static const char *iconv_name(const char *name)
{
    static const struct { const char *py, *iconv; } aliases[] = {
        {"latin-1", "ISO-8859-1"}, {"latin1", "ISO-8859-1"}, {"l1", "ISO-8859-1"},
        {"iso-8859-1", "ISO-8859-1"}, {"iso8859-1", "ISO-8859-1"}, {"iso-latin-1", "ISO-8859-1"},
        {"cp819", "ISO-8859-1"}, {"ascii", "ASCII"}, {"us-ascii", "ASCII"},
        {"cp1252", "CP1252"}, {"windows-1252", "CP1252"}, {"euc-kr", "EUC-KR"}, {"euckr", "EUC-KR"},
        {"cp949", "CP949"}, {"uhc", "CP949"}, {"gbk", "GBK"}, {"cp936", "GBK"}, {"gb2312", "GB2312"},
        {"gb18030", "GB18030"}, {"big5", "BIG5"}, {"shift-jis", "SHIFT_JIS"}, {"sjis", "SHIFT_JIS"},
        {"cp932", "CP932"}, {"euc-jp", "EUC-JP"}, {"koi8-r", "KOI8-R"},
    };
    for (size_t i = 0; i < OL_ARRAY_LEN(aliases); i++)
        if (strcmp(aliases[i].py, name) == 0)
            return aliases[i].iconv;
    return NULL;
}

enum convert_result { CONVERT_OK, CONVERT_UNKNOWN_ENCODING, CONVERT_BAD_INPUT };

/* Converts with iconv; on CONVERT_BAD_INPUT *bad_offset is where it stopped. */
static enum convert_result convert(const char *to, const char *from, const char *in, size_t n,
                                   ol_buf *out, size_t *bad_offset)
{
    *bad_offset = 0;
    iconv_t cd = iconv_open(to, from);
    if (cd == (iconv_t)-1)
        return CONVERT_UNKNOWN_ENCODING;
    char *inp = (char *)in;
    size_t inleft = n;
    ol_buf_clear(out);
    ol_buf_reserve(out, n * 2 + 16);
    bool ok = true;
    while (inleft > 0) {
        ol_buf_reserve(out, inleft * 4 + 16);
        char *outp = out->data + out->len;
        size_t outleft = out->cap - out->len - 1;
        size_t rc = iconv(cd, &inp, &inleft, &outp, &outleft);
        out->len = (size_t)(outp - out->data);
        if (rc == (size_t)-1 && errno != E2BIG) {
            ok = false;
            break;
        }
    }
    if (ok) {
        char *outp = out->data + out->len;
        size_t outleft = out->cap - out->len - 1;
        iconv(cd, NULL, NULL, &outp, &outleft);
        out->len = (size_t)(outp - out->data);
    }
    *bad_offset = n - inleft;
    iconv_close(cd);
    ol_buf_reserve(out, 0);
    out->data[out->len] = '\0';
    return ok ? CONVERT_OK : CONVERT_BAD_INPUT;
}

static void where(const char *s, size_t offset, uint32_t *line, uint32_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static void set_empty(ol_source *src, const char *path)
{
    memset(src, 0, sizeof(*src));
    src->path = ol_xstrdup(path);
    src->text = ol_xstrdup("");
    ol_source_index_lines(src);
}

bool ol_source_init(ol_source *src, const char *path, char *bytes, size_t n, ol_buf *err)
{
    set_empty(src, path);
    if (n >= UINT32_MAX) {
        ol_buf_printf(err, "file is too large (%zu bytes)", n);
        free(bytes);
        return false;
    }
    const char *nul = memchr(bytes, '\0', n);
    if (nul) {
        uint32_t line, col;
        where(bytes, (size_t)(nul - bytes), &line, &col);
        ol_buf_printf(err, "contains a NUL byte at line %u, column %u (binary file?)", line, col);
        free(bytes);
        return false;
    }
    bool bom = n >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0;
    const char *body = bom ? bytes + 3 : bytes;
    size_t body_len = bom ? n - 3 : n;

    char coding[64];
    bool declared = find_coding(body, body_len, coding, sizeof(coding));
    if (declared && !is_utf8_name(coding)) {
        if (bom) {
            ol_buf_printf(err, "has a UTF-8 BOM but declares encoding '%s'", coding);
            free(bytes);
            return false;
        }
        const char *iname = iconv_name(coding);
        char upper[64];
        if (!iname) {
            size_t i = 0;
            for (; coding[i] && i + 1 < sizeof(upper); i++)
                upper[i] = (coding[i] >= 'a' && coding[i] <= 'z') ? (char)(coding[i] - 'a' + 'A') : coding[i];
            upper[i] = '\0';
            iname = upper;
        }
        ol_buf decoded = {0};
        size_t bad = 0;
        enum convert_result cr = convert("UTF-8", iname, body, body_len, &decoded, &bad);
        if (cr != CONVERT_OK) {
            if (cr == CONVERT_UNKNOWN_ENCODING) {
                ol_buf_printf(err, "declares an unknown encoding '%s'", coding);
            } else {
                uint32_t line, col;
                where(body, bad, &line, &col);
                ol_buf_printf(err, "cannot be decoded as '%s' (declared) at line %u, column %u", coding,
                              line, col);
            }
            ol_buf_free(&decoded);
            free(bytes);
            return false;
        }
        free(bytes);
        free(src->text);
        src->len = (uint32_t)decoded.len;
        src->text = ol_buf_take(&decoded);
        src->encoding = ol_xstrdup(iname);
        ol_source_index_lines(src);
        return true;
    }

    size_t bad = ol_utf8_validate(body, body_len);
    if (bad != body_len) {
        uint32_t line, col;
        where(body, bad, &line, &col);
        ol_buf_printf(err,
                      "is not valid UTF-8 (byte 0x%02X at line %u, column %u); declare its encoding "
                      "with a '# -*- coding: ... -*-' line",
                      (unsigned char)body[bad], line, col);
        free(bytes);
        return false;
    }
    free(src->text);
    if (bom)
        memmove(bytes, bytes + 3, body_len + 1);
    src->text = bytes;
    src->len = (uint32_t)body_len;
    src->text[src->len] = '\0';
    src->bom = bom;
    ol_source_index_lines(src);
    return true;
}

void ol_source_init_text(ol_source *src, const char *path, char *text, size_t n)
{
    set_empty(src, path);
    free(src->text);
    src->text = text;
    src->len = (uint32_t)n;
    ol_source_index_lines(src);
}

void ol_source_free(ol_source *src)
{
    free(src->path);
    free(src->text);
    free(src->line_starts);
    free(src->encoding);
    for (size_t i = 0; i < src->cells.len; i++)
        free(src->cells.items[i].file_lines);
    ol_vec_free(&src->cells);
    free(src->raw);
    memset(src, 0, sizeof(*src));
}

uint32_t ol_source_line_index(const ol_source *src, uint32_t byte)
{
    uint32_t lo = 0, hi = src->line_count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->line_starts[mid] <= byte)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

ol_pos ol_source_pos(const ol_source *src, uint32_t byte)
{
    if (byte > src->len)
        byte = src->len;
    uint32_t line = ol_source_line_index(src, byte);
    ol_pos p = {line + 1, 1, 1};
    for (uint32_t i = src->line_starts[line]; i < byte; i++) {
        unsigned char c = (unsigned char)src->text[i];
        if ((c & 0xC0) != 0x80) {
            p.col++;
            p.col16 += c >= 0xF0 ? 2 : 1;
        }
    }
    return p;
}

const char *ol_source_line(const ol_source *src, uint32_t i, uint32_t *len)
{
    if (i >= src->line_count) {
        *len = 0;
        return src->text + src->len;
    }
    uint32_t start = src->line_starts[i];
    uint32_t end = i + 1 < src->line_count ? src->line_starts[i + 1] - 1 : src->len;
    if (end > start && src->text[end - 1] == '\r' && end - 1 >= start)
        end--;
    if (end < start)
        end = start;
    *len = end - start;
    return src->text + start;
}

uint32_t ol_source_offset(const ol_source *src, uint32_t line, uint32_t col)
{
    if (line == 0)
        line = 1;
    if (line > src->line_count)
        return src->len;
    uint32_t len;
    const char *s = ol_source_line(src, line - 1, &len);
    uint32_t i = 0;
    for (uint32_t c = 1; c < col && i < len; c++) {
        int n = ol_utf8_seq_len((const unsigned char *)s + i, len - i);
        i += n > 0 ? (uint32_t)n : 1;
    }
    return (uint32_t)(s - src->text) + i;
}

const ol_cell *ol_source_cell(const ol_source *src, uint32_t line0)
{
    for (size_t i = 0; i < src->cells.len; i++) {
        const ol_cell *c = &src->cells.items[i];
        if (line0 >= c->first_line && line0 < c->first_line + c->line_count)
            return c;
    }
    return NULL;
}

bool ol_source_encode(const ol_source *src, const char *text, size_t n, ol_buf *out, ol_buf *err)
{
    ol_buf_clear(out);
    if (src->bom)
        ol_buf_add(out, "\xEF\xBB\xBF", 3);
    if (!src->encoding) {
        ol_buf_add(out, text, n);
        return true;
    }
    ol_buf converted = {0};
    size_t bad = 0;
    if (convert(src->encoding, "UTF-8", text, n, &converted, &bad) != CONVERT_OK) {
        ol_buf_printf(err, "the fixed text cannot be written back as %s", src->encoding);
        ol_buf_free(&converted);
        return false;
    }
    ol_buf_add(out, converted.data, converted.len);
    ol_buf_free(&converted);
    return true;
}
