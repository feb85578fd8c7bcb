/*
 * source.c - decoding source bytes to UTF-8 and the line index.
 *
 * The decoder mirrors CPython's tokenizer: BOM, then a PEP 263 declaration on
 * the first two lines, then strict UTF-8. A failure is reported with where it
 * happened (line and column of the first bad byte) so the user can find it.
 */
#include "source.h"

#include <ctype.h>
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
        /* ASCII, eight bytes at a time: most source is nothing else */
        while (i + 8 <= n) {
            uint64_t word;
            memcpy(&word, u + i, 8);
            if (word & 0x8080808080808080ull)
                break;
            i += 8;
        }
        if (i >= n)
            break;
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

/* Counts per block for ol_source_pos (see col_marks in source.h). */
static void index_columns(ol_source *src)
{
    free(src->col_marks);
    uint32_t blocks = src->len / OL_COL_BLOCK + 1;
    src->col_marks = ol_xmalloc(sizeof(uint32_t) * 2 * blocks);
    uint32_t cp = 0, u16 = 0;
    for (uint32_t b = 0; b < blocks; b++) {
        src->col_marks[2 * b] = cp;
        src->col_marks[2 * b + 1] = u16;
        uint32_t end = b * OL_COL_BLOCK + OL_COL_BLOCK;
        if (end > src->len)
            end = src->len;
        uint32_t i = b * OL_COL_BLOCK;
        /* ASCII, eight bytes at a time: one code point and one UTF-16 unit each */
        while (i + 8 <= end) {
            uint64_t word;
            memcpy(&word, src->text + i, 8);
            if (word & 0x8080808080808080ull)
                break;
            cp += 8;
            u16 += 8;
            i += 8;
        }
        for (; i < end; i++) {
            unsigned char c = (unsigned char)src->text[i];
            if ((c & 0xC0) != 0x80) {
                cp++;
                u16 += c >= 0xF0 ? 2 : 1;
            }
        }
    }
}

void ol_source_index_lines(ol_source *src)
{
    index_columns(src);
    free(src->line_starts);
    /* one pass: the array grows as lines are found, then fits them */
    size_t cap = src->len / 32 + 16, count = 1;
    uint32_t *starts = ol_xmalloc(sizeof(uint32_t) * cap);
    starts[0] = 0;
    const char *end = src->text + src->len;
    for (const char *p = src->len ? memchr(src->text, '\n', src->len) : NULL; p;
         p = p + 1 < end ? memchr(p + 1, '\n', (size_t)(end - p - 1)) : NULL) {
        if (count == cap) {
            cap *= 2;
            starts = ol_xrealloc(starts, sizeof(uint32_t) * cap);
        }
        starts[count++] = (uint32_t)(p - src->text) + 1;
    }
    src->line_starts = count < cap ? ol_xrealloc(starts, sizeof(uint32_t) * count) : starts;
    src->line_count = (uint32_t)count;
    const char *nl = memchr(src->text, '\n', src->len);
    src->crlf = nl && nl > src->text && nl[-1] == '\r';
}

/*
 * Finds a PEP 263 declaration: a comment on line 1 or 2 matching
 * `coding[:=]\s*([-\w.]+)`. Line 2 only counts when line 1 is a comment or
 * blank, as in CPython. Writes the name as declared into name; false also
 * when the name does not fit (no codec has so long a name).
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

#include "codec_table.h"

static int cmp_alias(const void *key, const void *entry)
{
    return strcmp(key, ((const struct ol_codec_alias *)entry)->name);
}

static const char *find_alias(const char *name)
{
    const struct ol_codec_alias *a = bsearch(name, ol_codec_aliases, OL_ARRAY_LEN(ol_codec_aliases),
                                             sizeof(ol_codec_aliases[0]), cmp_alias);
    return a ? a->iconv : NULL;
}

const char *ol_codec_iconv_name(const char *declared)
{
    char buf[128];
    size_t n = strlen(declared);
    if (n >= sizeof(buf))
        return NULL;
    /* CPython's tokenizer first folds the spellings of UTF-8 and Latin-1
     * (get_normal_name): lowercase, '_' as '-', then "utf-8", "utf-8-*",
     * "latin-1", "iso-8859-1", "iso-latin-1" and their "-*" forms */
    for (size_t i = 0; i <= n; i++) {
        char c = declared[i];
        c = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        buf[i] = c == '_' ? '-' : c;
    }
    if (strcmp(buf, "utf-8") == 0 || ol_str_has_prefix(buf, "utf-8-"))
        return "UTF-8";
    static const char *const latin1[] = {"latin-1", "iso-8859-1", "iso-latin-1"};
    for (size_t i = 0; i < OL_ARRAY_LEN(latin1); i++) {
        size_t k = strlen(latin1[i]);
        if (strncmp(buf, latin1[i], k) == 0 && (buf[k] == '\0' || buf[k] == '-'))
            return "ISO-8859-1";
    }
    /* then codecs.lookup: lowercase, and every run of characters other than
     * letters, digits and '.' becomes one '_' (none at either end)
     * (encodings.normalize_encoding); the alias table, again with '.' as
     * '_', else the name of a codec module itself */
    size_t len = 0;
    bool punct = false;
    for (size_t i = 0; i < n; i++) {
        char c = declared[i];
        c = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.') {
            if (punct && len > 0)
                buf[len++] = '_';
            buf[len++] = c;
            punct = false;
        } else {
            punct = true;
        }
    }
    buf[len] = '\0';
    const char *found = find_alias(buf);
    if (!found && strchr(buf, '.')) {
        for (char *c = buf; *c; c++)
            if (*c == '.')
                *c = '_';
        found = find_alias(buf);
    }
    return found;
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

static bool has_lone_cr(const char *s, size_t n)
{
    for (const char *p = memchr(s, '\r', n); p; p = memchr(p + 1, '\r', (size_t)(s + n - p - 1)))
        if (p + 1 == s + n || p[1] != '\n')
            return true;
    return false;
}

/* Python reads a CR alone as a line ending (universal newlines): it becomes
 * LF here, in place, so lines, positions, frames and suppression comments
 * are the lines Python sees. Sets src->cr_newlines from the first line end. */
static void translate_lone_cr(ol_source *src)
{
    char *s = src->text, *end = src->text + src->len;
    char *cr = memchr(s, '\r', src->len);
    if (!cr)
        return;
    if (!memchr(s, '\n', (size_t)(cr - s)))
        src->cr_newlines = cr + 1 == end || cr[1] != '\n'; /* the first line ends at this CR */
    for (; cr; cr = cr + 1 < end ? memchr(cr + 1, '\r', (size_t)(end - cr - 1)) : NULL)
        if (cr + 1 == end || cr[1] != '\n')
            *cr = '\n';
}

static void where(const char *s, size_t offset, uint32_t *line, uint32_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset; i++) {
        if (s[i] == '\n' || (s[i] == '\r' && s[i + 1] != '\n')) {
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

/* `# -*- coding: future-fstrings -*-`: the codec the future-fstrings package
 * registers to backport f-strings to old Pythons. The text is UTF-8, and
 * Python 3.6+ reads its f-strings natively. */
static bool future_fstrings(const char *coding)
{
    static const char want[] = "future_fstrings";
    size_t i = 0;
    for (; coding[i] && i < sizeof want - 1; i++) {
        char c = (char)tolower((unsigned char)coding[i]);
        if ((c == '-' ? '_' : c) != want[i])
            return false;
    }
    return i == sizeof want - 1 && coding[i] == '\0';
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

    char coding[100];
    bool declared = find_coding(body, body_len, coding, sizeof(coding));
    const char *iname = declared ? ol_codec_iconv_name(coding) : NULL;
    if (declared && !iname && future_fstrings(coding))
        iname = "UTF-8";
    if (declared && !iname) {
        ol_buf_printf(err, "declares an unknown encoding '%s' (not one Python accepts in a source file)", coding);
        free(bytes);
        return false;
    }
    if (declared && strcmp(iname, "UTF-8") != 0) {
        if (bom) {
            ol_buf_printf(err, "has a UTF-8 BOM but declares encoding '%s'", coding);
            free(bytes);
            return false;
        }
        ol_buf decoded = {0};
        size_t bad = 0;
        enum convert_result cr = convert("UTF-8", iname, body, body_len, &decoded, &bad);
        if (cr != CONVERT_OK) {
            if (cr == CONVERT_UNKNOWN_ENCODING) {
                ol_buf_printf(err, "declares encoding '%s', which this system's iconv cannot decode (%s)",
                              coding, iname);
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
        free(src->text);
        src->len = (uint32_t)decoded.len;
        src->text = ol_buf_take(&decoded);
        src->encoding = ol_xstrdup(iname);
        src->raw = bytes; /* --fix splices its edits into these */
        src->raw_len = n;
        translate_lone_cr(src);
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
    if (has_lone_cr(body, body_len)) {
        src->raw = ol_xmalloc(n + 1);
        memcpy(src->raw, bytes, n);
        src->raw[n] = '\0';
        src->raw_len = n;
    }
    if (bom)
        memmove(bytes, bytes + 3, body_len + 1);
    src->text = bytes;
    src->len = (uint32_t)body_len;
    src->text[src->len] = '\0';
    src->bom = bom;
    translate_lone_cr(src);
    ol_source_index_lines(src);
    return true;
}

void ol_source_init_text(ol_source *src, const char *path, char *text, size_t n)
{
    set_empty(src, path);
    free(src->text);
    src->text = text;
    src->len = (uint32_t)n;
    translate_lone_cr(src);
    ol_source_index_lines(src);
}

void ol_source_free(ol_source *src)
{
    free(src->path);
    free(src->text);
    free(src->line_starts);
    free(src->col_marks);
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

/* Code points and UTF-16 units in [from, to). */
static void count_columns(const ol_source *src, uint32_t from, uint32_t to, uint32_t *cp, uint32_t *u16)
{
    for (uint32_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)src->text[i];
        if ((c & 0xC0) != 0x80) {
            (*cp)++;
            *u16 += c >= 0xF0 ? 2 : 1;
        }
    }
}

/* Code points and UTF-16 units before byte (from the text's start). */
static void columns_before(const ol_source *src, uint32_t byte, uint32_t *cp, uint32_t *u16)
{
    uint32_t b = byte / OL_COL_BLOCK;
    *cp = src->col_marks[2 * b];
    *u16 = src->col_marks[2 * b + 1];
    count_columns(src, b * OL_COL_BLOCK, byte, cp, u16);
}

ol_pos ol_source_pos(const ol_source *src, uint32_t byte)
{
    if (byte > src->len)
        byte = src->len;
    uint32_t line = ol_source_line_index(src, byte);
    ol_pos p = {line + 1, 1, 1};
    uint32_t start = src->line_starts[line];
    if (!src->col_marks || byte - start <= 2 * OL_COL_BLOCK) {
        count_columns(src, start, byte, &p.col, &p.col16);
        return p;
    }
    /* a long line: by difference of the counts from the text's start, so
     * many findings on one line cost a block each, not the line each */
    uint32_t cp_a, u16_a, cp_b, u16_b;
    columns_before(src, start, &cp_a, &u16_a);
    columns_before(src, byte, &cp_b, &u16_b);
    p.col += cp_b - cp_a;
    p.col16 += u16_b - u16_a;
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
    /* cells are in order of first_line: the last one starting at or before line0 */
    size_t lo = 0, hi = src->cells.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (src->cells.items[mid].first_line <= line0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const ol_cell *c = &src->cells.items[lo - 1];
    return line0 < c->first_line + c->line_count ? c : NULL;
}

/* Offsets in src->raw of the sorted text offsets `at`: where the decoder
 * has consumed the bytes that give the text before each. False when an
 * offset falls inside what one input sequence decodes to. */
static bool raw_offsets(const ol_source *src, const uint32_t *at, size_t count, size_t *raw_at)
{
    if (!src->encoding) {
        for (size_t i = 0; i < count; i++)
            raw_at[i] = at[i] + (src->bom ? 3u : 0u);
        return true;
    }
    iconv_t cd = iconv_open("UTF-8", src->encoding);
    if (cd == (iconv_t)-1)
        return false;
    char *in = src->raw;
    size_t in_left = src->raw_len, produced = 0;
    bool ok = true;
    char scratch[4096];
    for (size_t i = 0; i < count && ok; i++) {
        while (produced < at[i]) {
            size_t want = at[i] - produced < sizeof scratch ? at[i] - produced : sizeof scratch;
            char *outp = scratch;
            size_t out_left = want;
            size_t rc = iconv(cd, &in, &in_left, &outp, &out_left);
            size_t got = want - out_left;
            produced += got;
            if (rc == (size_t)-1 && (errno != E2BIG || got == 0)) {
                ok = false; /* a character straddles the offset, or bad input */
                break;
            }
            if (rc != (size_t)-1 && in_left == 0 && produced < at[i]) {
                ok = false;
                break;
            }
        }
        raw_at[i] = (size_t)(in - src->raw);
    }
    iconv_close(cd);
    return ok;
}

/* Appends text, as the file writes it: LF as CR in a CR file (but not the
 * LF of a CRLF), then in the file's encoding. */
static bool encode_span(const ol_source *src, const char *text, size_t n, bool after_cr, ol_buf *out)
{
    ol_buf lines = {0};
    const char *s = text;
    if (src->cr_newlines) {
        ol_buf_add(&lines, text, n);
        for (size_t i = 0; i < n; i++) {
            bool crlf = i > 0 ? text[i - 1] == '\r' : after_cr;
            if (text[i] == '\n' && !crlf)
                lines.data[i] = '\r';
        }
        s = lines.data ? lines.data : "";
    }
    bool ok = true;
    if (!src->encoding) {
        ol_buf_add(out, s, n);
    } else if (n > 0) {
        ol_buf converted = {0};
        size_t bad = 0;
        ok = convert(src->encoding, "UTF-8", s, n, &converted, &bad) == CONVERT_OK;
        if (ok)
            ol_buf_add(out, converted.data, converted.len);
        ol_buf_free(&converted);
    }
    ol_buf_free(&lines);
    return ok;
}

bool ol_source_encode(const ol_source *src, const char *new_text, size_t new_len, const ol_text_change *changes,
                      size_t count, ol_buf *out, ol_buf *err)
{
    ol_buf_clear(out);
    if (!src->raw) {
        /* UTF-8 whose text is its bytes: nothing to splice */
        if (src->bom)
            ol_buf_add(out, "\xEF\xBB\xBF", 3);
        ol_buf_add(out, new_text, new_len);
        return true;
    }
    uint32_t *at = ol_xmalloc(sizeof(uint32_t) * (2 * count + 1));
    size_t *raw_at = ol_xmalloc(sizeof(size_t) * (2 * count + 1));
    for (size_t i = 0; i < count; i++) {
        at[2 * i] = changes[i].old_start;
        at[2 * i + 1] = changes[i].old_end;
    }
    bool ok = raw_offsets(src, at, 2 * count, raw_at);
    if (!ok)
        ol_buf_printf(err, "a change falls inside a character of the file's encoding (%s)",
                      src->encoding ? src->encoding : "UTF-8");
    size_t copied = 0;
    for (size_t i = 0; i < count && ok; i++) {
        const ol_text_change *c = &changes[i];
        ol_buf_add(out, src->raw + copied, raw_at[2 * i] - copied);
        bool after_cr = c->new_start > 0 && new_text[c->new_start - 1] == '\r';
        if (!encode_span(src, new_text + c->new_start, c->new_end - c->new_start, after_cr, out)) {
            ol_buf_printf(err, "the fixed text cannot be written back as %s", src->encoding);
            ok = false;
        }
        copied = raw_at[2 * i + 1];
    }
    if (ok)
        ol_buf_add(out, src->raw + copied, src->raw_len - copied);
    free(at);
    free(raw_at);
    if (!ok)
        return false;
    /* the bytes must read back as the fixed text, or nothing is written */
    ol_source check;
    ol_buf why = {0};
    char *copy = ol_xmalloc(out->len + 1);
    memcpy(copy, out->data ? out->data : "", out->len);
    copy[out->len] = '\0';
    ok = ol_source_init(&check, src->path, copy, out->len, &why) && check.len == new_len &&
         memcmp(check.text, new_text, new_len) == 0;
    if (!ok)
        ol_buf_printf(err, "the fixed text does not read back the same in the file's encoding (%s)%s%s",
                      src->encoding ? src->encoding : "UTF-8", why.len ? ": " : "", why.len ? why.data : "");
    ol_source_free(&check);
    ol_buf_free(&why);
    return ok;
}
