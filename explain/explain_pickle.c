/*
 * explain_pickle.c - a bounded reader of the pickles PyTorch's memory
 * snapshots are written as, so that `oomlint explain` reads them without
 * PyTorch and without running anything.
 *
 * torch.cuda.memory._dump_snapshot() pickles what _snapshot() returns: a
 * dict (a list of segments in 1.13) of lists, dicts, tuples, ints, floats,
 * strings, booleans and None, nothing else. This reader knows the opcodes
 * that spell such values in every protocol (0 to 5: the text forms of
 * protocol 0, the binary ints, LONG1/LONG4, the string and bytes forms,
 * MARK with LIST/DICT/TUPLE/APPENDS/SETITEMS/ADDITEMS, the memo ops, FRAME)
 * and refuses, with the opcode and its byte offset, every opcode that
 * builds an object: GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
 * the extension registry and persistent ids. A snapshot never needs them,
 * and honouring them is how a pickle runs code.
 *
 * It is a loop over the bytes with its own stack and mark stack, never a
 * recursion: a deep or long input costs memory in proportion to its size
 * and no more. Values are small structs in an arena; strings point into the
 * input (or, decoded from protocol 0's escapes, into the arena). Nesting is
 * bounded (OL_PICKLE_MAX_DEPTH, counted as values are put into containers),
 * a container put into itself is refused, and memo indices may not run far
 * past the values read. A structure the memo makes cyclic through another
 * container is not detected here; whoever walks the values bounds its own
 * work (explain_snapshot.c does).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

typedef struct reader {
    const unsigned char *p;
    size_t n, pos;
    ol_pickle *out;
    OL_VEC(ol_pval *) stack;
    OL_VEC(size_t) marks;
    OL_VEC(ol_pval *) memo;
    size_t values;
    ol_buf *err;
    bool failed;
} reader;

static const ol_pval pv_none = {OL_PV_NONE, 0, 0, 0, {0}};
static const ol_pval pv_true = {OL_PV_BOOL, 0, 0, 0, {1}};
static const ol_pval pv_false = {OL_PV_BOOL, 0, 0, 0, {0}};

static bool fail(reader *r, size_t at, const char *fmt, ...) OL_PRINTF(3, 4);

static bool fail(reader *r, size_t at, const char *fmt, ...)
{
    if (!r->failed) {
        va_list ap;
        va_start(ap, fmt);
        ol_buf_vprintf(r->err, fmt, ap);
        va_end(ap);
        ol_buf_printf(r->err, " (at byte %zu)", at);
    }
    r->failed = true;
    return false;
}

static ol_pval *new_value(reader *r, ol_pkind kind)
{
    ol_pval *v = ol_arena_alloc(&r->out->arena, sizeof(*v));
    memset(v, 0, sizeof(*v));
    v->kind = (uint8_t)kind;
    r->values++;
    if (kind == OL_PV_LIST || kind == OL_PV_TUPLE || kind == OL_PV_DICT || kind == OL_PV_SET)
        ol_vec_push(&r->out->containers, v);
    return v;
}

static bool need(reader *r, size_t k, const char *what)
{
    if (r->n - r->pos < k)
        return fail(r, r->pos, "the pickle ends inside %s", what);
    return true;
}

static uint64_t le(const unsigned char *p, int k)
{
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool push(reader *r, const ol_pval *v)
{
    ol_vec_push(&r->stack, (ol_pval *)v);
    return true;
}

static ol_pval *pop(reader *r, size_t at)
{
    size_t floor = r->marks.len ? ol_vec_last(&r->marks) : 0;
    if (r->stack.len <= floor) {
        fail(r, at, "%s", "an opcode takes a value from an empty stack");
        return NULL;
    }
    return r->stack.items[--r->stack.len];
}

static ol_pval *top(reader *r, size_t at)
{
    size_t floor = r->marks.len ? ol_vec_last(&r->marks) : 0;
    if (r->stack.len <= floor) {
        fail(r, at, "%s", "an opcode reads a value from an empty stack");
        return NULL;
    }
    return ol_vec_last(&r->stack);
}

static bool is_container(const ol_pval *v)
{
    return v->kind == OL_PV_LIST || v->kind == OL_PV_TUPLE || v->kind == OL_PV_DICT || v->kind == OL_PV_SET;
}

/* Puts v into container c, keeping the depth bound. */
static bool add_item(reader *r, ol_pval *c, ol_pval *v, size_t at)
{
    if (v == c)
        return fail(r, at, "%s", "a container holds itself (a recursive structure)");
    uint32_t h = is_container(v) ? (uint32_t)v->height + 1 : 1;
    if (h > OL_PICKLE_MAX_DEPTH)
        return fail(r, at, "values nested deeper than %d levels", OL_PICKLE_MAX_DEPTH);
    if (h > c->height)
        c->height = (uint16_t)h;
    if (c->len == UINT32_MAX)
        return fail(r, at, "%s", "a container with more than 4294967295 items");
    if (c->len == c->cap) {
        uint32_t cap = c->cap ? (c->cap > UINT32_MAX / 2 ? UINT32_MAX : c->cap * 2) : 4;
        c->u.items = ol_xrealloc(c->u.items, (size_t)cap * sizeof(*c->u.items));
        c->cap = cap;
    }
    c->u.items[c->len++] = v;
    return true;
}

/* The values above the topmost mark, and the mark popped. */
static bool take_marked(reader *r, size_t at, size_t *from)
{
    if (!r->marks.len)
        return fail(r, at, "%s", "an opcode needs a MARK and there is none");
    *from = ol_vec_last(&r->marks);
    r->marks.len--;
    return true;
}

static bool memo_put(reader *r, uint64_t idx, size_t at)
{
    ol_pval *v = top(r, at);
    if (!v)
        return false;
    /* the pickler numbers memo entries 0, 1, 2, ...: an index far past the
     * values read so far is not a snapshot, and would cost memory for nothing */
    if (idx > r->values + 1024 || idx >= (1u << 26))
        return fail(r, at, "%s", "a memo index out of range");
    while (r->memo.len <= idx)
        ol_vec_push(&r->memo, NULL);
    r->memo.items[idx] = v;
    return true;
}

static bool memo_get(reader *r, uint64_t idx, size_t at)
{
    if (idx >= r->memo.len || !r->memo.items[idx])
        return fail(r, at, "%s", "a memo entry that was never stored");
    return push(r, r->memo.items[idx]);
}

/* Protocol 0's text argument: the bytes up to the newline. */
static bool text_arg(reader *r, const char **s, size_t *len, const char *what)
{
    const unsigned char *nl = memchr(r->p + r->pos, '\n', r->n - r->pos);
    if (!nl)
        return fail(r, r->pos, "the pickle ends inside %s", what);
    *s = (const char *)r->p + r->pos;
    *len = (size_t)(nl - (r->p + r->pos));
    r->pos += *len + 1;
    return true;
}

static bool parse_decimal(const char *s, size_t len, int64_t *out, bool *big)
{
    size_t i = 0;
    bool neg = false;
    *big = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == len)
        return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] == 'L' && i == len - 1)
            break;
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (v > (UINT64_MAX - 9) / 10)
            *big = true;
        else
            v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX)
        *big = true;
    *out = *big ? (neg ? -1 : 1) : (neg ? -(int64_t)v : (int64_t)v);
    return true;
}

static void put_utf8(ol_buf *b, uint32_t cp)
{
    if (cp < 0x80) {
        ol_buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        ol_buf_putc(b, (char)(0xC0 | cp >> 6));
        ol_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        ol_buf_putc(b, (char)(0xE0 | cp >> 12));
        ol_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ol_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        ol_buf_putc(b, (char)(0xF0 | cp >> 18));
        ol_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        ol_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        ol_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Protocol 0's escaped strings: STRING's repr (quotes, \n \t \\ \' \xNN)
 * and UNICODE's raw-unicode-escape (\uXXXX, \UXXXXXXXX); into the arena. */
static ol_pval *escaped_string(reader *r, const char *s, size_t len, bool quoted)
{
    ol_buf b = {0};
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c != '\\' || i + 1 >= len) {
            ol_buf_putc(&b, c);
            continue;
        }
        char e = s[++i];
        int digits = e == 'x' && quoted ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (digits && i + (size_t)digits < len) {
            uint32_t cp = 0;
            bool ok = true;
            for (int k = 1; k <= digits; k++) {
                int h = hexval(s[i + (size_t)k]);
                ok &= h >= 0;
                cp = cp << 4 | (uint32_t)(h < 0 ? 0 : h);
            }
            if (ok && cp <= 0x10FFFF) {
                if (e == 'x')
                    ol_buf_putc(&b, (char)cp);
                else
                    put_utf8(&b, cp);
                i += (size_t)digits;
                continue;
            }
        }
        if (!quoted) {
            ol_buf_putc(&b, '\\');
            ol_buf_putc(&b, e);
            continue;
        }
        switch (e) {
        case 'n': ol_buf_putc(&b, '\n'); break;
        case 't': ol_buf_putc(&b, '\t'); break;
        case 'r': ol_buf_putc(&b, '\r'); break;
        case '\\': ol_buf_putc(&b, '\\'); break;
        case '\'': ol_buf_putc(&b, '\''); break;
        case '"': ol_buf_putc(&b, '"'); break;
        default: ol_buf_putc(&b, '\\'); ol_buf_putc(&b, e); break;
        }
    }
    ol_pval *v = new_value(r, OL_PV_STR);
    v->len = (uint32_t)b.len;
    v->u.s = ol_arena_strndup(&r->out->arena, b.data ? b.data : "", b.len);
    ol_buf_free(&b);
    return v;
}

static bool counted(reader *r, int width, ol_pkind kind, const char *what)
{
    if (!need(r, (size_t)width, what))
        return false;
    uint64_t len = le(r->p + r->pos, width);
    r->pos += (size_t)width;
    if (len > r->n - r->pos || len > UINT32_MAX)
        return fail(r, r->pos, "the pickle ends inside %s", what);
    ol_pval *v = new_value(r, kind);
    v->len = (uint32_t)len;
    v->u.s = (const char *)r->p + r->pos;
    r->pos += (size_t)len;
    return push(r, v);
}

static bool int_value(reader *r, int64_t i)
{
    ol_pval *v = new_value(r, OL_PV_INT);
    v->u.i = i;
    return push(r, v);
}

/* LONG1 / LONG4: little-endian two's complement of n bytes. */
static bool long_value(reader *r, uint64_t nbytes, size_t at)
{
    if (nbytes > r->n - r->pos)
        return fail(r, at, "the pickle ends inside %s", "a long integer");
    const unsigned char *b = r->p + r->pos;
    r->pos += (size_t)nbytes;
    if (nbytes == 0)
        return int_value(r, 0);
    bool neg = b[nbytes - 1] & 0x80;
    /* beyond 8 bytes it fits only when the high bytes are all sign */
    for (uint64_t k = 8; k < nbytes; k++) {
        if (b[k] != (neg ? 0xFF : 0x00)) {
            ol_pval *v = new_value(r, OL_PV_BIGINT);
            v->u.i = neg ? -1 : 1;
            return push(r, v);
        }
    }
    uint64_t u = 0;
    int k = nbytes < 8 ? (int)nbytes : 8;
    u = le(b, k);
    if (k < 8 && neg)
        u |= ~(uint64_t)0 << (8 * k);
    if (nbytes > 8 && (bool)(u >> 63) != neg) {
        ol_pval *v = new_value(r, OL_PV_BIGINT);
        v->u.i = neg ? -1 : 1;
        return push(r, v);
    }
    int64_t i;
    memcpy(&i, &u, sizeof(i));
    return int_value(r, i);
}

static bool make_seq(reader *r, ol_pkind kind, size_t from, size_t at)
{
    ol_pval *c = new_value(r, kind);
    for (size_t i = from; i < r->stack.len; i++)
        if (!add_item(r, c, r->stack.items[i], at))
            return false;
    r->stack.len = from;
    return push(r, c);
}

static bool extend(reader *r, ol_pkind want, size_t from, size_t at, int step)
{
    if (from == 0)
        return fail(r, at, "%s", "an opcode adds to a container that is not there");
    ol_pval *c = r->stack.items[from - 1];
    if (c->kind != (uint8_t)want)
        return fail(r, at, "%s", want == OL_PV_DICT ? "SETITEMS on a value that is not a dict"
                                                    : "an opcode adds items to a value that is not a list or set");
    if ((r->stack.len - from) % (size_t)step)
        return fail(r, at, "%s", "SETITEMS with a key and no value");
    for (size_t i = from; i < r->stack.len; i++)
        if (!add_item(r, c, r->stack.items[i], at))
            return false;
    r->stack.len = from;
    return true;
}

static const char *object_opcode(unsigned char op)
{
    switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return NULL;
    }
}

static bool step(reader *r, bool *stop)
{
    size_t at = r->pos;
    unsigned char op = r->p[r->pos++];
    const char *s = NULL;
    size_t len = 0;
    int64_t iv;
    bool big;
    size_t from = 0;
    ol_pval *v, *k, *c;
    switch (op) {
    case 0x80: /* PROTO */
        if (!need(r, 1, "PROTO"))
            return false;
        r->out->protocol = r->p[r->pos++];
        if (r->out->protocol > 5)
            return fail(r, at, "%s", "pickle protocol above 5");
        return true;
    case 0x95: /* FRAME: a length hint, nothing to build */
        if (!need(r, 8, "FRAME"))
            return false;
        r->pos += 8;
        return true;
    case '.':
        *stop = true;
        return true;
    case '(':
        ol_vec_push(&r->marks, r->stack.len);
        return true;
    case '0':
        return pop(r, at) != NULL;
    case '1':
        if (!take_marked(r, at, &from))
            return false;
        r->stack.len = from;
        return true;
    case '2':
        v = top(r, at);
        return v && push(r, v);
    case 'N':
        return push(r, &pv_none);
    case 0x88:
        return push(r, &pv_true);
    case 0x89:
        return push(r, &pv_false);
    case 'J':
        if (!need(r, 4, "BININT"))
            return false;
        iv = (int32_t)(uint32_t)le(r->p + r->pos, 4);
        r->pos += 4;
        return int_value(r, iv);
    case 'K':
        if (!need(r, 1, "BININT1"))
            return false;
        return int_value(r, r->p[r->pos++]);
    case 'M':
        if (!need(r, 2, "BININT2"))
            return false;
        iv = (int64_t)le(r->p + r->pos, 2);
        r->pos += 2;
        return int_value(r, iv);
    case 0x8a:
        if (!need(r, 1, "LONG1"))
            return false;
        return long_value(r, r->p[r->pos++], at);
    case 0x8b:
        if (!need(r, 4, "LONG4"))
            return false;
        iv = (int64_t)le(r->p + r->pos, 4);
        r->pos += 4;
        return long_value(r, (uint64_t)iv, at);
    case 'I':
    case 'L':
        if (!text_arg(r, &s, &len, op == 'I' ? "INT" : "LONG"))
            return false;
        if (op == 'I' && len == 2 && (memcmp(s, "01", 2) == 0 || memcmp(s, "00", 2) == 0))
            return push(r, s[1] == '1' ? &pv_true : &pv_false);
        if (!parse_decimal(s, len, &iv, &big))
            return fail(r, at, "%s", "an INT or LONG that is not a number");
        if (big) {
            v = new_value(r, OL_PV_BIGINT);
            v->u.i = iv;
            return push(r, v);
        }
        return int_value(r, iv);
    case 'G': {
        if (!need(r, 8, "BINFLOAT"))
            return false;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | r->p[r->pos + (size_t)i];
        r->pos += 8;
        v = new_value(r, OL_PV_FLOAT);
        memcpy(&v->u.f, &bits, sizeof(double));
        return push(r, v);
    }
    case 'F': {
        if (!text_arg(r, &s, &len, "FLOAT"))
            return false;
        char tmp[64];
        if (len == 0 || len >= sizeof(tmp))
            return fail(r, at, "%s", "a FLOAT that is not a number");
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        char *end;
        double d = strtod(tmp, &end);
        if (*end)
            return fail(r, at, "%s", "a FLOAT that is not a number");
        v = new_value(r, OL_PV_FLOAT);
        v->u.f = d;
        return push(r, v);
    }
    case 0x8c: return counted(r, 1, OL_PV_STR, "SHORT_BINUNICODE");
    case 'X': return counted(r, 4, OL_PV_STR, "BINUNICODE");
    case 0x8d: return counted(r, 8, OL_PV_STR, "BINUNICODE8");
    case 'U': return counted(r, 1, OL_PV_STR, "SHORT_BINSTRING");
    case 'T': return counted(r, 4, OL_PV_STR, "BINSTRING");
    case 'C': return counted(r, 1, OL_PV_BYTES, "SHORT_BINBYTES");
    case 'B': return counted(r, 4, OL_PV_BYTES, "BINBYTES");
    case 0x8e: return counted(r, 8, OL_PV_BYTES, "BINBYTES8");
    case 0x96: return counted(r, 8, OL_PV_BYTES, "BYTEARRAY8");
    case 'V':
        if (!text_arg(r, &s, &len, "UNICODE"))
            return false;
        return push(r, escaped_string(r, s, len, false));
    case 'S':
        if (!text_arg(r, &s, &len, "STRING"))
            return false;
        if (len < 2 || (s[0] != '\'' && s[0] != '"') || s[len - 1] != s[0])
            return fail(r, at, "%s", "a STRING without its quotes");
        return push(r, escaped_string(r, s + 1, len - 2, true));
    case ']':
        return push(r, new_value(r, OL_PV_LIST));
    case '}':
        return push(r, new_value(r, OL_PV_DICT));
    case ')':
        return push(r, new_value(r, OL_PV_TUPLE));
    case 0x8f:
        return push(r, new_value(r, OL_PV_SET));
    case 'l':
        return take_marked(r, at, &from) && make_seq(r, OL_PV_LIST, from, at);
    case 't':
        return take_marked(r, at, &from) && make_seq(r, OL_PV_TUPLE, from, at);
    case 0x91:
        return take_marked(r, at, &from) && make_seq(r, OL_PV_SET, from, at);
    case 'd':
        if (!take_marked(r, at, &from))
            return false;
        if ((r->stack.len - from) % 2)
            return fail(r, at, "%s", "DICT with a key and no value");
        return make_seq(r, OL_PV_DICT, from, at);
    case 0x85:
    case 0x86:
    case 0x87: {
        size_t count = (size_t)(op - 0x84);
        size_t floor = r->marks.len ? ol_vec_last(&r->marks) : 0;
        if (r->stack.len < floor + count)
            return fail(r, at, "%s", "a TUPLE opcode takes more values than the stack has");
        return make_seq(r, OL_PV_TUPLE, r->stack.len - count, at);
    }
    case 'a':
        v = pop(r, at);
        if (!v)
            return false;
        c = top(r, at);
        if (!c)
            return false;
        if (c->kind != OL_PV_LIST)
            return fail(r, at, "%s", "APPEND to a value that is not a list");
        return add_item(r, c, v, at);
    case 'e':
        return take_marked(r, at, &from) && extend(r, OL_PV_LIST, from, at, 1);
    case 0x90:
        if (!take_marked(r, at, &from))
            return false;
        if (from == 0 || r->stack.items[from - 1]->kind != OL_PV_SET)
            return fail(r, at, "%s", "ADDITEMS to a value that is not a set");
        for (size_t i = from; i < r->stack.len; i++)
            if (!add_item(r, r->stack.items[from - 1], r->stack.items[i], at))
                return false;
        r->stack.len = from;
        return true;
    case 's':
        v = pop(r, at);
        k = v ? pop(r, at) : NULL;
        c = k ? top(r, at) : NULL;
        if (!c)
            return false;
        if (c->kind != OL_PV_DICT)
            return fail(r, at, "%s", "SETITEM on a value that is not a dict");
        return add_item(r, c, k, at) && add_item(r, c, v, at);
    case 'u':
        return take_marked(r, at, &from) && extend(r, OL_PV_DICT, from, at, 2);
    case 'q':
        if (!need(r, 1, "BINPUT"))
            return false;
        return memo_put(r, r->p[r->pos++], at);
    case 'r':
        if (!need(r, 4, "LONG_BINPUT"))
            return false;
        r->pos += 4;
        return memo_put(r, le(r->p + r->pos - 4, 4), at);
    case 0x94:
        return memo_put(r, r->memo.len, at);
    case 'h':
        if (!need(r, 1, "BINGET"))
            return false;
        return memo_get(r, r->p[r->pos++], at);
    case 'j':
        if (!need(r, 4, "LONG_BINGET"))
            return false;
        r->pos += 4;
        return memo_get(r, le(r->p + r->pos - 4, 4), at);
    case 'p':
    case 'g':
        if (!text_arg(r, &s, &len, op == 'p' ? "PUT" : "GET"))
            return false;
        if (!parse_decimal(s, len, &iv, &big) || big || iv < 0)
            return fail(r, at, "%s", "a memo index that is not a number");
        return op == 'p' ? memo_put(r, (uint64_t)iv, at) : memo_get(r, (uint64_t)iv, at);
    default: {
        const char *name = object_opcode(op);
        if (name) {
            ol_buf_printf(r->err, "the pickle builds Python objects (opcode %s at byte %zu); a memory snapshot holds "
                                  "plain values only, and oomlint never runs what a pickle names",
                          name, at);
            r->failed = true;
            return false;
        }
        char hex[8];
        snprintf(hex, sizeof(hex), "0x%02x", op);
        return fail(r, at, "unknown pickle opcode %s", hex);
    }
    }
}

bool ol_pickle_read(ol_pickle *p, const char *data, size_t n, ol_buf *err)
{
    memset(p, 0, sizeof(*p));
    reader r = {0};
    r.p = (const unsigned char *)data;
    r.n = n;
    r.out = p;
    r.err = err;
    if (n >= 2 && data[0] == 'P' && data[1] == 'K') {
        ol_buf_puts(err, "this is a zip archive (torch.save writes those), not a snapshot pickle: write one with "
                         "torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")");
        return false;
    }
    if (n > OL_PICKLE_MAX_BYTES) {
        ol_buf_puts(err, "larger than the 1 GiB oomlint reads");
        return false;
    }
    bool stop = false;
    while (!stop && !r.failed) {
        if (r.pos >= r.n) {
            fail(&r, r.pos, "%s", "the pickle ends before its STOP opcode");
            break;
        }
        step(&r, &stop);
    }
    if (!r.failed && r.stack.len != 1)
        fail(&r, r.pos, "%s", r.stack.len ? "the pickle leaves more than one value" : "the pickle holds no value");
    if (!r.failed)
        p->root = r.stack.items[0];
    ol_vec_free(&r.stack);
    ol_vec_free(&r.marks);
    ol_vec_free(&r.memo);
    if (r.failed) {
        ol_pickle_free(p);
        return false;
    }
    return true;
}

void ol_pickle_free(ol_pickle *p)
{
    for (size_t i = 0; i < p->containers.len; i++)
        free(p->containers.items[i]->u.items);
    ol_vec_free(&p->containers);
    ol_arena_free(&p->arena);
    p->root = NULL;
}

const ol_pval *ol_pval_get(const ol_pval *dict, const char *key)
{
    if (!dict || dict->kind != OL_PV_DICT)
        return NULL;
    size_t klen = strlen(key);
    for (uint32_t i = 0; i + 1 < dict->len; i += 2) {
        const ol_pval *k = dict->u.items[i];
        if (k->kind == OL_PV_STR && k->len == klen && memcmp(k->u.s, key, klen) == 0)
            return dict->u.items[i + 1];
    }
    return NULL;
}

int64_t ol_pval_int(const ol_pval *v, int64_t dflt)
{
    if (!v)
        return dflt;
    if (v->kind == OL_PV_INT || v->kind == OL_PV_BOOL)
        return v->u.i;
    if (v->kind == OL_PV_FLOAT && isfinite(v->u.f) && fabs(v->u.f) < 9e18)
        return (int64_t)v->u.f;
    return dflt;
}

bool ol_pval_str_is(const ol_pval *v, const char *s)
{
    size_t n = strlen(s);
    return v && v->kind == OL_PV_STR && v->len == n && memcmp(v->u.s, s, n) == 0;
}
