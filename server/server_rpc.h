/*
 * server_rpc.h - JSON-RPC 2.0 over a byte stream, framed as the Language
 * Server Protocol frames it (`Content-Length: N\r\n\r\n` + N bytes of JSON).
 *
 * The reader buffers whatever arrives, in whatever pieces (a message split
 * over many reads, several messages in one read), and hands out one complete
 * message body at a time. Bad framing never stops it: a header block without
 * a usable Content-Length, or one past OL_RPC_MAX_CONTENT, is reported and
 * dropped, and reading resumes at the next header. Nothing waits on its own:
 * the caller decides how long to block (ol_rpc_fill), so the server can look
 * ahead for queued edits before it lints.
 *
 * The writer frames and writes one message at a time; once the peer is gone
 * (EPIPE, EOF) it stops trying and says so.
 */
#ifndef OL_SERVER_RPC_H
#define OL_SERVER_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util.h"

/* The largest message body accepted: a 64 MiB source escaped as JSON fits. */
#define OL_RPC_MAX_CONTENT (256u * 1024u * 1024u)

/* JSON-RPC and LSP error codes. */
enum {
    OL_RPC_PARSE_ERROR = -32700,
    OL_RPC_INVALID_REQUEST = -32600,
    OL_RPC_METHOD_NOT_FOUND = -32601,
    OL_RPC_INVALID_PARAMS = -32602,
    OL_RPC_INTERNAL_ERROR = -32603,
    OL_RPC_SERVER_NOT_INITIALIZED = -32002,
    OL_RPC_REQUEST_FAILED = -32803,
};

typedef struct ol_rpc_reader {
    int fd;
    ol_buf buf;      /* bytes read and not yet consumed start at pos */
    size_t pos;
    bool eof;        /* the stream ended (or failed): nothing more will come */
} ol_rpc_reader;

typedef enum ol_rpc_status {
    OL_RPC_NONE,     /* no complete message buffered */
    OL_RPC_MESSAGE,  /* *body holds one message */
    OL_RPC_BAD_FRAME /* a header was dropped; *error says why */
} ol_rpc_status;

void ol_rpc_reader_init(ol_rpc_reader *r, int fd);
void ol_rpc_reader_free(ol_rpc_reader *r);

/* Takes the next message out of the buffer. On OL_RPC_MESSAGE, *body is a
 * NUL-terminated copy (owned by the caller) of *len bytes. On
 * OL_RPC_BAD_FRAME, *error is a description (owned by the caller). */
ol_rpc_status ol_rpc_next(ol_rpc_reader *r, char **body, size_t *len, char **error);

/* Reads what the stream has, waiting up to timeout_ms (-1: until something
 * arrives, 0: not at all). Returns true when bytes were added; false on a
 * timeout or at the end of the stream (then r->eof is set). */
bool ol_rpc_fill(ol_rpc_reader *r, int timeout_ms);

typedef struct ol_rpc_writer {
    int fd;
    bool broken;     /* a write failed: the peer is gone */
} ol_rpc_writer;

/* Frames and writes msg. Returns false (and sets broken) when it could not. */
bool ol_rpc_send(ol_rpc_writer *w, const cJSON *msg);

/* Message builders; each returns a new object for ol_rpc_send. id may be
 * NULL (a response to a message whose id could not be read). */
cJSON *ol_rpc_response(const cJSON *id, cJSON *result);
cJSON *ol_rpc_error(const cJSON *id, int code, const char *message);
cJSON *ol_rpc_notification(const char *method, cJSON *params);

#endif
