/*
 * pyfloor.h - the oldest Python a project declares, and the syntax newer
 * than it.
 *
 * tree-sitter-python parses a superset of every Python 3: a fix whose text
 * parses there may still be a SyntaxError on the Python the project runs
 * (`f"{nn.MSELoss(reduction="sum")}"` needs Python 3.12). So every fix is
 * checked under the oldest grammar the project declares: `requires-python`
 * in the nearest pyproject.toml that has one, else Python 3.8. The check
 * names the constructs a fix could bring in that an older Python rejects:
 * what PEP 701 allowed in f-strings in 3.12 (the string's own quote, a
 * backslash, a comment or, in a one-line f-string, a line break inside a
 * replacement field), `match` (3.10) and parenthesised context managers
 * (3.9).
 *
 * The grammar also reads Python 2 (`print "x"`, `except E, e:`, `0777`)
 * without an error, so a Python 2 file would pass as clean Python 3:
 * ol_python2_report makes its first Python 2 construct a syntax error
 * (OOM002) that says the file is Python 2.
 */
#ifndef OL_PYFLOOR_H
#define OL_PYFLOOR_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "syntax.h"

/* Python versions as major * 100 + minor: 3.8 -> 308. */
#define OL_PYTHON_FLOOR_DEFAULT 308u

/* The oldest Python the project of the file at `path` declares: the lower
 * bound of `requires-python` in the nearest pyproject.toml that has one (in
 * its directory or above, up to the repository's root or eight levels),
 * else OL_PYTHON_FLOOR_DEFAULT. */
unsigned ol_python_floor(const char *path);
/* The same, on the text of one pyproject.toml: 0 when it declares no lower
 * bound (`requires-python = ">=3.9"` -> 309, "~=3.10" -> 310, ">3.8" -> 308,
 * ">=2.7" -> 300). */
unsigned ol_python_floor_in_text(const char *text, size_t len);

/* A construct that needs a newer Python than the floor. */
typedef struct ol_newer_syntax {
    uint32_t at, end;   /* the bytes it spans */
    unsigned needs;     /* the Python it needs (312) */
    const char *what;   /* what it is, for a message */
} ol_newer_syntax;

/* How many constructs of t the Python `floor` cannot parse; the first one
 * in the text goes to *first when first is not NULL and there is one. */
size_t ol_syntax_newer_than(const ol_tree *t, unsigned floor, ol_newer_syntax *first);

/* The Python 2 constructs of t that Python 3 rejects: print and exec
 * statements, backquotes, `<>`, `0777` and `10L`, `ur""`, `raise E, "m"`,
 * tuple parameters, and `except E, e:` where the handler uses `e` (Python
 * 3.14 reads `except KeyError, TypeError:` as two exception types). How
 * many, and the first in *first. */
size_t ol_python2_constructs(const ol_tree *t, ol_newer_syntax *first);

/* For a file with Python 2 constructs: an OOM002 finding at the first one
 * that says the file is Python 2, and the same hint on the help of its
 * other OOM002 findings. */
void ol_python2_report(const ol_tree *t, ol_diag_vec *diags);

#endif
