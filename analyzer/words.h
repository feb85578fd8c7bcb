/*
 * words.h - the words of a file's text, read without parsing it.
 *
 * "Which files of the run call function `fit` of models/trainer.py?" is
 * answered from the summaries of the files that make such calls, and a
 * summary costs a parse. A call record's dotted name is made from its own
 * file's text (summary.c builds it before any other file's summary can
 * answer), so a file can only call `Trainer.fit` when its text holds the
 * word `fit` (or a name an import binds to it: `from .trainer import fit as
 * go`) and the word `Trainer` (or such a name for it). A lexical pass over
 * the bytes finds every word (code, strings and comments alike, so nothing
 * named in it is missed) and every `a.b as c` an import may bind; the
 * project (project.c) then parses for a question only the files whose words
 * can answer it, and the others wait for their own turn to be linted.
 *
 * The words are kept in a Bloom filter: a false "may hold it" costs a parse
 * a file needed anyway later, a false "does not" cannot happen. A file
 * whose bytes do not show its words as the parser sees them (a declared
 * encoding other than UTF-8, NUL bytes, a notebook's JSON, a file that
 * cannot be read) is opaque: it may hold any word.
 */
#ifndef OL_WORDS_H
#define OL_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ol_words ol_words;

/* `name as bound` (also each part of a dotted name before `as`), as
 * hashes of the two words; last: name is the part right before `as`, the
 * module or object the bound name stands for. */
typedef struct ol_word_alias {
    uint64_t name, bound;
    bool last;
} ol_word_alias;

/* Reads and scans the file at path (a regular file up to 64 MB, never
 * waiting on a FIFO or a device); never NULL. */
ol_words *ol_words_scan(const char *path);
void ol_words_free(ol_words *w);

/* The hash the scan files a word under. */
uint64_t ol_word_hash(const char *s, size_t n);

/* May the text hold the word with this hash? Always true when opaque. */
bool ol_words_may_hold(const ol_words *w, uint64_t hash);
/* A word's hash made ready to be looked up in many files' words: what the
 * filter's probes need is computed once, not once per file. */
typedef struct ol_word_key {
    uint64_t m, step;
} ol_word_key;
ol_word_key ol_word_key_of(uint64_t hash);
/* May the text hold any of the n words? Always true when opaque. */
bool ol_words_may_hold_any(const ol_words *w, const ol_word_key *keys, size_t n);
/* The filter itself, for looking at many files' at once (project.c): its
 * bit count, a power of two (0 when opaque: no filter), and its bits. A
 * word may be held when each of its probes' bits is set. */
#define OL_WORD_PROBES 3
size_t ol_words_filter(const ol_words *w, const uint64_t **bits);
void ol_word_key_probes(ol_word_key key, size_t bit_count, size_t out[OL_WORD_PROBES]);
/* May the text define a class whose name contains `part`, case aside?
 * (The names after the word `class`.) Always true when opaque. */
bool ol_words_may_name_class(const ol_words *w, const char *part);
bool ol_words_opaque(const ol_words *w);
/* False when the file may bind names its bytes do not show (a declared
 * encoding, NUL bytes): its pairs, and so every file's words, cannot be
 * trusted to follow a name through imports. */
bool ol_words_aliases_sure(const ol_words *w);
/* The most dots of a relative import (`from ..model import Net`: 2) the
 * text may hold; 0 when none, UINT_MAX when opaque. */
unsigned ol_words_relative_level(const ol_words *w);
/* Does the text contain `save(` anywhere (a torch.save call, cheaply)? */
bool ol_words_calls_save(const ol_words *w);
/* Its `a as b` pairs. */
const ol_word_alias *ol_words_aliases(const ol_words *w, size_t *count);

#endif
