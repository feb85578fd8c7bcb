/*
 * notebook.h - Jupyter notebooks as sources.
 *
 * The code cells of an .ipynb (nbformat 4, and 3's worksheets) are joined in
 * order into one Python text; IPython magics and shell escapes (lines that
 * start with %, ! or ?) become `pass` so the rest parses, and a cell that is
 * a cell magic such as %%bash is blanked whole (%%time and friends keep their
 * Python). The source's cell map turns joined-text lines back into
 * (cell, line in cell) and into lines of the .ipynb file itself.
 */
#ifndef OL_NOTEBOOK_H
#define OL_NOTEBOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"
#include "util.h"

bool ol_is_notebook_path(const char *path);

/* Builds src from notebook JSON bytes (ownership taken). On failure returns
 * false with the reason in err. */
bool ol_notebook_load(ol_source *src, const char *path, char *bytes, size_t n, ol_buf *err);

/* Builds src from code cells held in memory (a language client's notebook
 * document): texts[i] of lens[i] bytes, joined and with IPython syntax
 * blanked as ol_notebook_load does; indexes[i] is the cell's 1-based number
 * among all cells (NULL: 1, 2, ...). There is no .ipynb text behind it. */
void ol_notebook_from_cells(ol_source *src, const char *path, const char *const *texts, const size_t *lens,
                            const uint32_t *indexes, size_t count);

/* Writes the joined text `text` back into the notebook JSON of src (its
 * cells' sources), producing the new .ipynb text in out. Magic lines are
 * restored from the original. Returns false with a reason if the cell
 * layout changed (a fix added or removed lines across cells). */
bool ol_notebook_render(const ol_source *src, const char *text, size_t len, ol_buf *out, ol_buf *err);

#endif
