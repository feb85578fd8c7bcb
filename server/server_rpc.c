/*
 * server_rpc.c - LSP message framing and JSON-RPC messages (see server_rpc.h).
 *
 * A header block starts at the first `Content-Length` the reader finds:
 * other header fields (`Content-Type`) are accepted and ignored, and bytes
 * before it (the leftovers of a message whose header was dropped) are
 * skipped. That makes resynchronising after bad framing the same code path
 * as reading a good message.
 */
#include "server_rpc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"

/* A header block longer than this is not a header. */
#define OL_RPC_MAX_HEADER (64u * 1024u)

void ol_rpc_reader_init(ol_rpc_reader *r, int fd)
{
    memset(r, 0, sizeof(*r));
    r->fd = fd;
}

void ol_rpc_reader_free(ol_rpc_reader *r)
{
    ol_buf_free(&r->buf);
    memset(r, 0, sizeof(*r));
}

/* The end of the header block that starts at s: the offset just past the
 * blank line ("\r\n\r\n", or "\n\n" from lenient clients), or 0 when it has
 * not arrived yet. */
static size_t header_end(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\n')
            continue;
        if (i + 1 < n && s[i + 1] == '\n')
            return i + 2;
        if (i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static void consume(ol_rpc_reader *r, size_t n)
{
    r->pos += n;
    if (r->pos == r->buf.len) {
        r->pos = 0;
        r->buf.len = 0;
    } else if (r->pos > 65536 && r->pos > r->buf.len / 2) {
        /* keep the buffer from creeping forward without bound */
        memmove(r->buf.data, r->buf.data + r->pos, r->buf.len - r->pos);
        r->buf.len -= r->pos;
        r->pos = 0;
    }
}

/* One step of ol_rpc_next; *again when it only skipped blank lines. */
static ol_rpc_status next_step(ol_rpc_reader *r, char **body, size_t *len, char **error, bool *again)
{
    *again = false;
    *body = NULL;
    *len = 0;
    *error = NULL;
    /* (an empty buffer may have no storage yet: no pointer arithmetic on it) */
    if (r->pos >= r->buf.len)
        return OL_RPC_NONE;
    /* line breaks and blanks before a header are nothing: skip them all at
     * once (a run of them costs its length, not its length squared) */
    size_t skip = 0;
    for (char c; r->pos + skip < r->buf.len && ((c = r->buf.data[r->pos + skip]) == '\r' || c == '\n' ||
                                                c == ' ' || c == '\t');)
        skip++;
    if (skip) {
        consume(r, skip);
        if (r->pos >= r->buf.len)
            return OL_RPC_NONE;
    }
    const char *data = r->buf.data + r->pos;
    size_t avail = r->buf.len - r->pos;
    const char *field = ol_find_ci(data, avail, "content-length");
    size_t first_end = header_end(data, avail);
    if (first_end && (!field || (size_t)(field - data) >= first_end)) {
        /* a complete header block with no Content-Length in it */
        bool blank = true;
        for (size_t i = 0; i < first_end; i++)
            blank = blank && (data[i] == '\r' || data[i] == '\n' || data[i] == ' ' || data[i] == '\t');
        consume(r, first_end);
        if (blank) {
            /* stray line breaks between messages: what follows them may be
             * a whole message already here, which must not wait for more input */
            *again = true;
            return OL_RPC_NONE;
        }
        *error = ol_xstrdup("a message header without Content-Length was dropped");
        return OL_RPC_BAD_FRAME;
    }
    if (!field) {
        if (avail > OL_RPC_MAX_HEADER) {
            /* keep a tail that may hold the start of the next header */
            consume(r, avail - 16);
            *error = ol_xstrdup("bytes without a message header were dropped");
            return OL_RPC_BAD_FRAME;
        }
        return OL_RPC_NONE;
    }
    if (field > data) {
        /* what precedes the field: other header fields, or leftovers */
        consume(r, (size_t)(field - data));
        data = r->buf.data + r->pos;
        avail = r->buf.len - r->pos;
    }
    size_t end = header_end(data, avail);
    if (!end) {
        if (avail > OL_RPC_MAX_HEADER) {
            consume(r, strlen("content-length"));
            *error = ol_xstrdup("a message header that never ended was dropped");
            return OL_RPC_BAD_FRAME;
        }
        return OL_RPC_NONE;
    }
    /* Content-Length: <digits> */
    size_t i = strlen("content-length");
    while (i < end && (data[i] == ' ' || data[i] == '\t'))
        i++;
    bool ok = i < end && data[i] == ':';
    i++;
    while (ok && i < end && (data[i] == ' ' || data[i] == '\t'))
        i++;
    unsigned long long value = 0;
    size_t digits = 0;
    while (ok && i < end && data[i] >= '0' && data[i] <= '9') {
        if (digits < 19)
            value = value * 10 + (unsigned long long)(data[i] - '0');
        digits++;
        i++;
    }
    ok = ok && digits > 0 && (data[i] == '\r' || data[i] == '\n' || data[i] == ' ' || data[i] == '\t');
    if (!ok) {
        consume(r, end);
        *error = ol_xstrdup("a message header with an unreadable Content-Length was dropped");
        return OL_RPC_BAD_FRAME;
    }
    if (digits > 18 || value > OL_RPC_MAX_CONTENT) {
        consume(r, end);
        *error = ol_xasprintf("a message of %s%llu bytes was refused (the limit is %u MiB)", digits > 18 ? "more than " : "",
                              value, OL_RPC_MAX_CONTENT / (1024u * 1024u));
        return OL_RPC_BAD_FRAME;
    }
    if (avail - end < value)
        return OL_RPC_NONE;
    *len = (size_t)value;
    *body = ol_xstrndup(data + end, (size_t)value);
    consume(r, end + (size_t)value);
    return OL_RPC_MESSAGE;
}

ol_rpc_status ol_rpc_next(ol_rpc_reader *r, char **body, size_t *len, char **error)
{
    bool again = true;
    ol_rpc_status st = OL_RPC_NONE;
    while (again)
        st = next_step(r, body, len, error, &again);
    return st;
}

bool ol_rpc_fill(ol_rpc_reader *r, int timeout_ms)
{
    if (r->eof)
        return false;
    struct pollfd p = {r->fd, POLLIN, 0};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r->eof = true;
            return false;
        }
        if (n == 0)
            return false;
        break;
    }
    ol_buf_reserve(&r->buf, 65536);
    for (;;) {
        ssize_t got = read(r->fd, r->buf.data + r->buf.len, r->buf.cap - r->buf.len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            r->eof = true;
            return false;
        }
        r->buf.len += (size_t)got;
        r->buf.data[r->buf.len] = '\0';
        return true;
    }
}

static bool write_all(ol_rpc_writer *w, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t put = write(w->fd, s, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            w->broken = true;
            return false;
        }
        s += put;
        n -= (size_t)put;
    }
    return true;
}

bool ol_rpc_send(ol_rpc_writer *w, const cJSON *msg)
{
    if (w->broken)
        return false;
    char *text = cJSON_PrintUnformatted(msg);
    if (!text)
        ol_oom();
    size_t n = strlen(text);
    /* JSON on the wire is UTF-8: bytes a client sent that are not (echoed
     * in a message, an id, a URI) go out as U+FFFD */
    if (ol_utf8_validate(text, n) != n) {
        ol_buf fixed = {0};
        size_t i = 0;
        while (i < n) {
            size_t ok = ol_utf8_validate(text + i, n - i);
            ol_buf_add(&fixed, text + i, ok);
            i += ok;
            if (i < n) {
                ol_buf_add(&fixed, "\xEF\xBF\xBD", 3);
                i++;
            }
        }
        cJSON_free(text);
        n = fixed.len;
        text = cJSON_malloc(n + 1);
        if (!text)
            ol_oom();
        memcpy(text, fixed.data, n);
        text[n] = '\0';
        ol_buf_free(&fixed);
    }
    char header[64];
    int hn = snprintf(header, sizeof header, "Content-Length: %zu\r\n\r\n", n);
    bool ok = write_all(w, header, (size_t)hn) && write_all(w, text, n);
    cJSON_free(text);
    return ok;
}

static cJSON *message(const cJSON *id)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    if (id)
        cJSON_AddItemToObject(m, "id", cJSON_Duplicate(id, true));
    else
        cJSON_AddNullToObject(m, "id");
    return m;
}

cJSON *ol_rpc_response(const cJSON *id, cJSON *result)
{
    cJSON *m = message(id);
    cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateNull());
    return m;
}

cJSON *ol_rpc_error(const cJSON *id, int code, const char *text)
{
    cJSON *m = message(id);
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", text);
    return m;
}

cJSON *ol_rpc_notification(const char *method, cJSON *params)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddStringToObject(m, "method", method);
    if (params)
        cJSON_AddItemToObject(m, "params", params);
    return m;
}
