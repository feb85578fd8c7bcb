/*
 * source.h - the declarations of this part of the engine that only the
 * engine uses: building a source from bytes (decoding, line index),
 * encoding it back, positions and notebook cells. What rules may use of
 * it is declared in public/source.h, included here, so each thing is
 * declared once and rules, whose include path holds only
 * analyzer/public/, see only their half (docs/how-it-works.md).
 */
#ifndef OL_SOURCE_H
#define OL_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#include "public/source.h"

/*
 * Decodes bytes (ownership taken; freed here) into src. On failure returns
 * false with a one-line reason in err (no path in it) and leaves src with path
 * set and empty text.
 */
bool ol_source_init(ol_source *src, const char *path, char *bytes, size_t n, ol_buf *err);

/* Builds a source directly from UTF-8 text that is already known valid. */
void ol_source_init_text(ol_source *src, const char *path, char *text, size_t n);
void ol_source_free(ol_source *src);

/* Recomputes the line index after text was replaced. */
void ol_source_index_lines(ol_source *src);
ol_pos ol_source_pos(const ol_source *src, uint32_t byte);

/* Byte offset of 1-based (line, col in code points); clamps to the line end. */
uint32_t ol_source_offset(const ol_source *src, uint32_t line, uint32_t col);

/* For notebooks: the cell holding 0-based joined-text line i, or NULL. */
const ol_cell *ol_source_cell(const ol_source *src, uint32_t line0);

/* UTF-8 helpers shared by decoders and emitters. */
/* Length of the valid UTF-8 sequence at s (n bytes available), or 0. */
int ol_utf8_seq_len(const unsigned char *s, size_t n);

/* Offset of the first invalid byte, or n when all of s is valid UTF-8. */
size_t ol_utf8_validate(const char *s, size_t n);

/* The iconv name of the codec a PEP 263 declaration names, as Python
 * resolves it (its tokenizer's UTF-8/Latin-1 folding, then codecs.lookup's
 * normalisation and alias table); "UTF-8" for UTF-8; NULL when Python would
 * not accept the name in a source file or iconv has no such converter. */
const char *ol_codec_iconv_name(const char *declared);

/* A span of the text as read [old_start, old_end) that became the span
 * [new_start, new_end) of the new text (byte offsets of each). */
typedef struct ol_text_change {
    uint32_t old_start, old_end, new_start, new_end;
} ol_text_change;

/* The bytes of src's file with its text changed into new_text by changes
 * (in order, not overlapping; offsets in src's text as read): each changed span is encoded in the file's encoding
 * and line ending and spliced into the original bytes, so every byte outside
 * the edits stays as it was (a re-encoding of the whole text could change
 * bytes that decode to the same characters, as CP932's duplicate codes do).
 * The result is decoded again and must give new_text. Returns false with a
 * reason in err when a change cannot be written in the file's encoding. */
bool ol_source_encode(const ol_source *src, const char *new_text, size_t new_len, const ol_text_change *changes,
                      size_t count, ol_buf *out, ol_buf *err);

#endif
