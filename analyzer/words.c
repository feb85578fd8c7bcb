/*
 * words.c - the words of a file's text and its `a as b` pairs, read in one
 * pass over the bytes (see words.h for what they are for).
 *
 * A word is a run of ASCII letters, digits, underscores and bytes >= 0x80
 * (UTF-8 identifiers). The pass also follows dotted names (`pkg.mod.f`, with
 * spaces and line continuations between the parts) so that `import pkg.mod
 * as m` pairs every part with `m`; words in comments are words, but do not
 * break or start a dotted name. Blanks change nothing, so the pass finds the
 * word bytes and blanks of 64 bytes at once (SSE2, or a table) and visits
 * only the starts of words and the other bytes.
 */
#include "words.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Files larger than this are not parsed (source.c): their words are unknown. */
#define SCAN_MAX_BYTES ((off_t)64 << 20)
/* The parts of a dotted name before `as` paired with what it binds. */
#define CHAIN_MAX 8
/* Bits of filter per distinct word, and probes per word: about 1.7% of the
 * words a file lacks pass, each costing at most a parse needed anyway. */
#define BITS_PER_WORD 10
#define PROBES OL_WORD_PROBES
/* Zero bytes after the text in the scan's buffer: the scan classifies 64
 * bytes at once, and reads a word's last eight in one load. */
#define PAD 64

struct ol_words {
    size_t mask; /* bit count - 1 (a power of two) */
    ol_word_alias *aliases;
    size_t alias_count;
    char *classes;      /* the names after `class`, each NUL-terminated, then an empty one */
    bool opaque;
    bool aliases_sure;
    bool calls_save;
    unsigned char relative; /* the most dots after a `from` */
    /* the filter, in the same block: a question reads every file's (one
     * load fewer that misses the cache, on a run of thousands of files) */
    uint64_t bits[];
};

/* Eight bytes as a little-endian number, on any host. */
static uint64_t load8(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
#endif
}

/* A word's hash, eight bytes at a time; p[n..n+8) must be readable (the
 * scan pads its buffer), and only p[0..n) counts. */
static uint64_t hash_padded(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ load8(p + i)) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (i < n) {
        uint64_t v = load8(p + i) & (((uint64_t)1 << (8 * (n - i))) - 1);
        h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 29;
    }
    return h;
}

uint64_t ol_word_hash(const char *s, size_t n)
{
    unsigned char tail[16] = {0};
    size_t full = n & ~(size_t)7;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (size_t i = 0; i < full; i += 8) {
        h = (h ^ load8((const unsigned char *)s + i)) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (full < n) {
        memcpy(tail, s + full, n - full);
        h = (h ^ load8(tail)) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 29;
    }
    return h;
}

/* FNV's low bits are weak for a filter's positions: mixed first. */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

typedef struct scan {
    uint64_t *set; /* the distinct hashes, open addressing (0: empty) */
    size_t cap, count;
    OL_VEC(ol_word_alias) aliases;
    uint64_t chain[CHAIN_MAX]; /* the dotted name just read */
    int chain_len;
    bool after_dot;    /* a '.' followed the chain */
    bool expect_bound; /* the chain was followed by `as` */
    bool comment;
    bool import;       /* in an import statement: only there does `as` bind a name for other files */
    int parens;        /* open parentheses of the import statement */
    bool continued;    /* a backslash since the last line's words: the statement goes on */
    bool calls_save;
    bool foreign;      /* the bytes are not the text the parser reads (encoding, NUL) */
    bool class_name;   /* the word `class` was the last: the next is a class's name */
    bool after_from;   /* the word `from` was the last, then only dots */
    unsigned dots, relative;
    OL_VEC(char) classes;
    uint64_t as_hash, import_hash, class_hash, from_hash;
} scan;

/* The set's slot: FNV's high bits folded in, cheaper than mix() for a
 * table asked once per word of the text. */
static size_t slot_of(uint64_t h, size_t cap)
{
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static void set_add(scan *s, uint64_t h)
{
    if (h == 0)
        h = 1;
    if ((s->count + 1) * 2 > s->cap) {
        uint64_t *old = s->set;
        size_t old_cap = s->cap;
        s->cap = old_cap ? old_cap * 2 : 1024;
        s->set = ol_xcalloc(s->cap, sizeof(uint64_t));
        for (size_t i = 0; i < old_cap; i++)
            if (old[i]) {
                size_t k = slot_of(old[i], s->cap);
                while (s->set[k])
                    k = (k + 1) & (s->cap - 1);
                s->set[k] = old[i];
            }
        free(old);
    }
    size_t k = slot_of(h, s->cap);
    while (s->set[k]) {
        if (s->set[k] == h)
            return;
        k = (k + 1) & (s->cap - 1);
    }
    s->set[k] = h;
    s->count++;
}

static void add_word(scan *s, uint64_t h, const unsigned char *text, size_t len)
{
    set_add(s, h);
    if (s->comment)
        return;
    if (s->after_from && s->dots > s->relative)
        s->relative = s->dots;
    s->after_from = h == s->from_hash;
    s->dots = 0;
    if (s->class_name) {
        for (size_t i = 0; i < len; i++)
            ol_vec_push(&s->classes, (char)text[i]);
        ol_vec_push(&s->classes, '\0');
    }
    s->class_name = h == s->class_hash;
    s->continued = false;
    if (h == s->import_hash)
        s->import = true;
    if (s->expect_bound && s->import) {
        for (int i = 0; i < s->chain_len; i++) {
            ol_word_alias a = {s->chain[i], h, i + 1 == s->chain_len};
            ol_vec_push(&s->aliases, a);
        }
        s->expect_bound = false;
        s->chain_len = 0;
    } else if (h == s->as_hash && s->chain_len > 0 && !s->after_dot && s->import) {
        s->expect_bound = true;
        s->after_dot = false;
        return;
    }
    if (s->after_dot && s->chain_len > 0) {
        if (s->chain_len == CHAIN_MAX) {
            memmove(s->chain, s->chain + 1, sizeof(uint64_t) * (CHAIN_MAX - 1));
            s->chain_len--;
        }
        s->chain[s->chain_len++] = h;
    } else {
        s->chain[0] = h;
        s->chain_len = 1;
    }
    s->after_dot = false;
}

/* Byte classes: word bytes, and the few others the pass looks at. */
enum { C_OTHER, C_WORD, C_SPACE, C_NEWLINE, C_DOT, C_HASH, C_NUL, C_BACKSLASH, C_OPEN, C_CLOSE, C_SEMICOLON };

static unsigned char byte_class[256];

/* classify64's SSE2 path spells C_WORD and C_SPACE again: change both (the
 * unit tests compare a block's reading with this table's, byte by byte). */
static void init_classes(void)
{
    for (int c = 0; c < 256; c++) {
        unsigned char k = C_OTHER;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80)
            k = C_WORD;
        else if (c == ' ' || c == '\t' || c == '\r' || c == '\f')
            k = C_SPACE;
        else if (c == '\\')
            k = C_BACKSLASH;
        else if (c == '(')
            k = C_OPEN;
        else if (c == ')')
            k = C_CLOSE;
        else if (c == ';')
            k = C_SEMICOLON;
        else if (c == '\n')
            k = C_NEWLINE;
        else if (c == '.')
            k = C_DOT;
        else if (c == '#')
            k = C_HASH;
        else if (c == 0)
            k = C_NUL;
        byte_class[c] = k;
    }
}

/* What one byte that is neither a word's nor a blank's does to the state:
 * a line's end, a backslash, a dot, a comment, brackets and the rest. */
static void feed_other(scan *s, unsigned char k)
{
    switch (k) {
    case C_NEWLINE:
        /* an import statement ends with its line, unless it is in
         * parentheses or the line ends with a backslash */
        if (s->import && s->parens == 0 && !(s->continued && !s->comment))
            s->import = false;
        s->comment = false;
        s->continued = false;
        break;
    case C_BACKSLASH:
        if (!s->comment)
            s->continued = true;
        break;
    case C_DOT:
        if (!s->comment && s->chain_len > 0 && !s->expect_bound)
            s->after_dot = true;
        if (!s->comment && s->after_from)
            s->dots++;
        break;
    case C_HASH:
        s->comment = true;
        break;
    case C_NUL:
        s->foreign = true;
        /* fall through */
    default:
        if (!s->comment) {
            s->class_name = false;
            s->after_from = false;
            if (k == C_OPEN && s->import)
                s->parens++;
            else if (k == C_CLOSE && s->parens > 0)
                s->parens--;
            else if (k == C_SEMICOLON && s->parens == 0)
                s->import = false;
            s->continued = false;
            s->chain_len = 0;
            s->after_dot = false;
            s->expect_bound = false;
        }
        break;
    }
}

/* The word bytes and the blanks of p[0..64), a bit each (bit k for p[k]):
 * byte_class's C_WORD and C_SPACE, read 16 bytes at a time with SSE2. */
static void classify64(const unsigned char *p, uint64_t *word, uint64_t *blank)
{
#if defined(__SSE2__)
    uint64_t w = 0, b = 0;
    const __m128i case_bit = _mm_set1_epi8(0x20);
    for (int k = 0; k < 64; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + k));
        __m128i low = _mm_or_si128(v, case_bit);
        __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)),
                                       _mm_cmplt_epi8(low, _mm_set1_epi8('z' + 1)));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
        __m128i under = _mm_cmpeq_epi8(v, _mm_set1_epi8('_'));
        /* bytes >= 0x80 (UTF-8) are word bytes: their sign bit, read by movemask */
        __m128i is_word = _mm_or_si128(_mm_or_si128(letter, digit), _mm_or_si128(under, v));
        __m128i is_blank = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
                                        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\f'))));
        w |= (uint64_t)(uint16_t)_mm_movemask_epi8(is_word) << k;
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(is_blank) << k;
    }
    *word = w;
    *blank = b;
#else
    uint64_t w = 0, b = 0;
    for (int k = 0; k < 64; k++) {
        unsigned char c = byte_class[p[k]];
        w |= (uint64_t)(c == C_WORD) << k;
        b |= (uint64_t)(c == C_SPACE) << k;
    }
    *word = w;
    *blank = b;
#endif
}

/* Scans p[0..n); the buffer holds PAD readable bytes after p[n - 1], the
 * first of them a NUL. Sixty-four bytes at a time: their word bytes and
 * blanks found at once, then only the starts of words and the other bytes
 * visited, in order (blanks change nothing). */
static void feed(scan *s, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t word, blank;
        classify64(p + i, &word, &blank);
        size_t left = n - i;
        uint64_t valid = left >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << left) - 1);
        word &= valid;
        /* a word starts where a word byte follows a byte that is not one;
         * bit 0 always starts one: a word never continues from before i */
        uint64_t starts = word & ~(word << 1);
        uint64_t events = (starts | (~word & ~blank)) & valid;
        size_t next = i + (left >= 64 ? 64 : left);
        while (events) {
            unsigned at = (unsigned)__builtin_ctzll(events);
            size_t pos = i + at;
            if (!((word >> at) & 1)) {
                feed_other(s, byte_class[p[pos]]);
                events &= events - 1;
                continue;
            }
            /* the word's end: its first byte that is not a word byte */
            uint64_t rest = ~word >> at;
            size_t end;
            if (rest) {
                end = pos + (size_t)__builtin_ctzll(rest);
            } else if (at > 0) {
                /* it runs past this block: the next one starts with it */
                next = pos;
                break;
            } else {
                /* longer than a block: on, a byte at a time */
                end = i + 64;
                while (byte_class[p[end]] == C_WORD)
                    end++;
            }
            size_t len = end - pos;
            add_word(s, hash_padded(p + pos, len), p + pos, len);
            /* `save(`: a word that ends in `save` right before a parenthesis */
            if (p[end] == '(' && len >= 4 && memcmp(p + end - 4, "save", 4) == 0)
                s->calls_save = true;
            if (end >= i + 64) {
                next = end;
                break;
            }
            events &= ~(uint64_t)0 << (end - i);
        }
        i = next;
    }
}

/* A PEP 263 declaration in the first two lines naming anything but UTF-8
 * (or ASCII): the bytes are not the text the parser reads. Looser than
 * source.c's rule (any `coding[:=]` counts), which only makes more files
 * opaque. */
static bool foreign_coding(const char *head, size_t n)
{
    size_t lines = 0, end = 0;
    while (end < n && lines < 2) {
        if (head[end] == '\n')
            lines++;
        end++;
    }
    for (size_t i = 0; i + 7 <= end; i++) {
        if (memcmp(head + i, "coding", 6) != 0 || (head[i + 6] != ':' && head[i + 6] != '='))
            continue;
        size_t j = i + 7;
        while (j < end && (head[j] == ' ' || head[j] == '\t'))
            j++;
        char name[16];
        size_t k = 0;
        while (j < end && k + 1 < sizeof name &&
               ((head[j] >= 'a' && head[j] <= 'z') || (head[j] >= 'A' && head[j] <= 'Z') ||
                (head[j] >= '0' && head[j] <= '9') || head[j] == '-' || head[j] == '_' || head[j] == '.')) {
            char c = head[j++];
            name[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        name[k] = '\0';
        if (strncmp(name, "utf-8", 5) != 0 && strncmp(name, "utf_8", 5) != 0 && strncmp(name, "utf8", 4) != 0 &&
            strcmp(name, "ascii") != 0 && strcmp(name, "us-ascii") != 0)
            return true;
    }
    return false;
}

static bool contains_save(const unsigned char *hay, size_t n)
{
    const unsigned char *end = hay + n;
    for (const unsigned char *p = hay; end - p >= 5; p++) {
        p = memchr(p, 's', (size_t)(end - p) - 4);
        if (!p)
            return false;
        if (memcmp(p, "save(", 5) == 0)
            return true;
    }
    return false;
}

static bool is_notebook(const char *path)
{
    size_t n = strlen(path);
    return n >= 6 && strcmp(path + n - 6, ".ipynb") == 0;
}

ol_words *ol_words_scan(const char *path)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_classes);
    scan s;
    memset(&s, 0, sizeof(s));
    s.as_hash = ol_word_hash("as", 2);
    s.import_hash = ol_word_hash("import", 6);
    s.class_hash = ol_word_hash("class", 5);
    s.from_hash = ol_word_hash("from", 4);
    bool read_all = false;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SCAN_MAX_BYTES) {
        /* the whole file at once, padded so that a word's last eight bytes
         * can be read in one load */
        size_t cap = (size_t)st.st_size + 1, len = 0;
        unsigned char *buf = ol_xmalloc(cap + PAD);
        read_all = true;
        for (;;) {
            if (len == cap) {
                if (cap > (size_t)SCAN_MAX_BYTES) {
                    read_all = false; /* grew past what is parsed */
                    break;
                }
                cap *= 2;
                buf = ol_xrealloc(buf, cap + PAD);
            }
            ssize_t n = read(fd, buf + len, cap - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                read_all = false;
            if (n <= 0)
                break;
            len += (size_t)n;
        }
        memset(buf + len, 0, PAD);
        if (read_all) {
            size_t skip = 0;
            if (len >= 2 && ((buf[0] == 0xFF && buf[1] == 0xFE) || (buf[0] == 0xFE && buf[1] == 0xFF)))
                s.foreign = true; /* UTF-16 or UTF-32 */
            if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
                skip = 3;
            if (foreign_coding((const char *)buf + skip, len - skip))
                s.foreign = true;
            feed(&s, buf + skip, len - skip);
        } else {
            s.calls_save = contains_save(buf, len);
        }
        free(buf);
    }
    if (fd >= 0)
        close(fd);
    bool opaque = !read_all || s.foreign || is_notebook(path);
    size_t bits = 64;
    while (!opaque && bits < s.count * BITS_PER_WORD)
        bits *= 2;
    ol_words *w = ol_xcalloc(1, sizeof(*w) + (opaque ? 0 : bits / 8));
    w->calls_save = s.calls_save;
    w->relative = (unsigned char)(s.relative < 255 ? s.relative : 255);
    w->opaque = opaque;
    /* a notebook is never imported, and a file that cannot be read never
     * summarized: neither binds a name for another file */
    w->aliases_sure = !s.foreign || is_notebook(path);
    if (!w->opaque) {
        w->mask = bits - 1;
        for (size_t i = 0; i < s.cap; i++) {
            if (!s.set[i])
                continue;
            size_t probe[PROBES];
            ol_word_key_probes(ol_word_key_of(s.set[i]), bits, probe);
            for (int k = 0; k < PROBES; k++)
                w->bits[probe[k] / 64] |= (uint64_t)1 << (probe[k] % 64);
        }
        w->aliases = s.aliases.items;
        w->alias_count = s.aliases.len;
        s.aliases.items = NULL;
        ol_vec_push(&s.classes, '\0');
        w->classes = s.classes.items;
        s.classes.items = NULL;
    }
    free(s.set);
    ol_vec_free(&s.aliases);
    ol_vec_free(&s.classes);
    return w;
}

void ol_words_free(ol_words *w)
{
    if (!w)
        return;
    free(w->aliases);
    free(w->classes);
    free(w);
}

ol_word_key ol_word_key_of(uint64_t hash)
{
    if (hash == 0)
        hash = 1;
    uint64_t m = mix(hash);
    ol_word_key k = {m, (m >> 32) | 1};
    return k;
}

void ol_word_key_probes(ol_word_key key, size_t bit_count, size_t out[OL_WORD_PROBES])
{
    for (int k = 0; k < PROBES; k++)
        out[k] = (size_t)(key.m + (uint64_t)k * key.step) & (bit_count - 1);
}

static bool holds_key(const ol_words *w, ol_word_key key)
{
    size_t probe[PROBES];
    ol_word_key_probes(key, w->mask + 1, probe);
    for (int k = 0; k < PROBES; k++)
        if (!(w->bits[probe[k] / 64] & ((uint64_t)1 << (probe[k] % 64))))
            return false;
    return true;
}

size_t ol_words_filter(const ol_words *w, const uint64_t **bits)
{
    *bits = w->opaque ? NULL : w->bits;
    return w->opaque ? 0 : w->mask + 1;
}

bool ol_words_may_hold(const ol_words *w, uint64_t hash)
{
    return w->opaque || holds_key(w, ol_word_key_of(hash));
}

bool ol_words_may_hold_any(const ol_words *w, const ol_word_key *keys, size_t n)
{
    if (w->opaque)
        return true;
    for (size_t i = 0; i < n; i++)
        if (holds_key(w, keys[i]))
            return true;
    return false;
}

static bool contains_ci(const char *name, const char *part, size_t n)
{
    for (const char *s = name; strlen(s) >= n; s++) {
        size_t k = 0;
        while (k < n && tolower((unsigned char)s[k]) == tolower((unsigned char)part[k]))
            k++;
        if (k == n)
            return true;
    }
    return false;
}

bool ol_words_may_name_class(const ol_words *w, const char *part)
{
    if (w->opaque)
        return true;
    size_t n = strlen(part);
    for (const char *c = w->classes; c && *c; c += strlen(c) + 1)
        if (contains_ci(c, part, n))
            return true;
    return false;
}

bool ol_words_opaque(const ol_words *w)
{
    return w->opaque;
}

bool ol_words_aliases_sure(const ol_words *w)
{
    return w->aliases_sure;
}

unsigned ol_words_relative_level(const ol_words *w)
{
    return w->opaque ? UINT_MAX : w->relative;
}

bool ol_words_calls_save(const ol_words *w)
{
    return w->calls_save;
}

const ol_word_alias *ol_words_aliases(const ol_words *w, size_t *count)
{
    *count = w->alias_count;
    return w->aliases;
}
