/*
 * project.h - the files of one run (or of an editor's workspace) and the
 * summaries of their functions, shared between threads.
 *
 * A project knows each file by its path and resolves the module names that
 * imports use to those files. Summaries (summary.h) are published per file
 * and read by the files that import it, on any thread; a summary is
 * immutable and reference-counted, so a file's summary can be replaced (an
 * editor saved it) while another thread still reads the old one.
 *
 * Module names resolve against the run's files only, never against the disk:
 * a dotted name `a.b.c` names `<base>/a/b/c.py` or `<base>/a/b/c/__init__.py`
 * (the longest prefix that names a file; the rest are attributes in it), for
 * these bases, tried in order:
 *   1. relative imports (`from .utils import f`, `from .. import x`): the
 *      importing file's directory, one level up per extra dot; nothing else;
 *   2. absolute imports: the directory above the importing file's
 *      top-level package (walking up through directories whose __init__.py
 *      is part of the run), when it is in one, then its own directory (how a
 *      script's siblings are found), then the run's common directory and
 *      each directory above it.
 * A name that matches no file is not part of the project (a library, or a
 * file outside the run), and what it does stays unknown.
 *
 * The store may be given a budget: past it, the summaries asked for least
 * recently are dropped, and a file whose summary was dropped is summarized
 * again (parsed anew, its rules not run) when someone asks for it. That
 * second summary is kept for the rest of the run, outside the budget: a
 * summary needed after it was dropped is one the budget cannot keep between
 * its readers (larger than the budget itself, or imported from far apart),
 * and building it again for every importer would parse a large module once
 * per importer. So each file is parsed at most twice, every acquire finds
 * the summary it asked for (the answers never depend on which thread
 * dropped what when), and a run's memory is the budget plus the summaries
 * that were needed again.
 *
 * While a run lints its files in parallel, a thread that needs the summary
 * of a file nobody has started yet claims it and processes it first (through
 * the processor callback); one that someone else has claimed it waits for the
 * summary. Publishing happens before a file's rules run, and building a
 * summary never waits, so waits always end.
 */
#ifndef OL_PROJECT_H
#define OL_PROJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "summary.h"

typedef struct ol_project ol_project;

/* Processes file `file` of the project on the calling thread (`worker` is
 * what the caller passed to ol_project_acquire): claims it and lints it, or,
 * when it cannot, at least publishes its summary or returns knowing another
 * thread will. */
typedef void (*ol_project_processor)(void *job, void *worker, size_t file);

ol_project *ol_project_new(void);
void ol_project_free(ol_project *p);

/* Adds a file (before lookups start, or between them on one thread); returns
 * its index. Paths are compared after making them absolute and resolving
 * symbolic links where the file exists. Adding a path twice returns the
 * first index. */
size_t ol_project_add(ol_project *p, const char *path);
size_t ol_project_count(const ol_project *p);
/* The path of file `file` (absolute, symbolic links resolved where the file
 * exists); lives as long as the project. */
const char *ol_project_path(const ol_project *p, size_t file);
/* The index of a path added before, or (size_t)-1. */
size_t ol_project_find(const ol_project *p, const char *path);
/* Recomputes what resolution needs (the common directory, packages) after
 * files were added. */
void ol_project_index(ol_project *p);
void ol_project_set_processor(ol_project *p, ol_project_processor fn, void *job);

/* The file a dotted import name refers to, seen from file `from`: true with
 * *file and *rest (the attributes after the module's name, "" for the module
 * itself; a pointer into qual) when some file of the project matches. */
bool ol_project_resolve(const ol_project *p, size_t from, const char *qual, size_t *file, const char **rest);

/* The time this thread has spent reading other files' words for questions
 * (the first question of a run reads every file's), counted only while
 * ol_project_time_words(true) holds on the thread: --timings shows it as a
 * phase of its own instead of in the rule that happened to ask first. A
 * caller that times a stretch of work itself winds the count back over it
 * (ol_project_words_rewind), so that no reading is counted twice. */
void ol_project_time_words(bool on);
uint64_t ol_project_words_ns(void);
void ol_project_words_rewind(uint64_t to);

/* True for exactly one caller per file: the one that lints it. */
bool ol_project_claim(ol_project *p, size_t file);
bool ol_project_claimed(ol_project *p, size_t file);
/* Publishes a file's summary (takes a new reference). The first summary of a
 * file wins; ol_project_replace swaps it (an editor's save). */
void ol_project_publish(ol_project *p, size_t file, ol_file_summary *s);
void ol_project_replace(ol_project *p, size_t file, ol_file_summary *s);
/* Publishes an empty summary when none was published (the file could not be
 * read or parsed), so that nobody waits for it. */
void ol_project_publish_missing(ol_project *p, size_t file);
/* Drops a file's summary and claim, so the next acquire processes it again
 * (an editor changed the file). Only while no other thread uses the project:
 * a thread waiting for the summary would wait for the next publish. */
void ol_project_forget(ol_project *p, size_t file);
/* The summary of a file, retained for the caller (release it with
 * ol_file_summary_release). Processes or waits for the file when it has no
 * summary yet and a processor is set; else returns NULL. */
ol_file_summary *ol_project_acquire(ol_project *p, size_t file, void *worker);
/* The summary the store holds for file, retained for the caller, or NULL:
 * nothing is built, and the summary is not counted as asked for. */
ol_file_summary *ol_project_held(ol_project *p, size_t file);

/* Calls fn with each save recorded by every file of the project but
 * `self` whose text calls a `save(` (read from the disk once per file, a
 * cheap filter): files without a summary yet are processed first, as by
 * ol_project_acquire. The saves outlive a summary dropped for the budget.
 * fn runs with the store locked: it must not call into the project. */
typedef void (*ol_project_save_visitor)(void *ctx, const ol_sum_save *save);
void ol_project_visit_saves(ol_project *p, size_t self, void *worker, ol_project_save_visitor fn, void *ctx);

/* May any file of the run spell one of the n words (identifiers)? Read
 * from each file's words (words.h), so a few files that do not are
 * counted too; a notebook's raw text is searched instead (its code is in
 * JSON strings, where an identifier is the same bytes). A file whose words
 * cannot be read (another encoding, text from standard input) counts. */
bool ol_project_spells_any(ol_project *p, const char *const *words, size_t n);

/* Calls fn with each call record (summary.h) of every file of the project
 * but `file` that names function or method `rest` of `file`: its dotted
 * name resolves, from the file that makes it, to that file and rest, also
 * through names a package re-exports (`from .general import KEModel` in
 * models/__init__.py), followed up to four files deep; in the order of the
 * files, then of each file's records. Files without a summary yet whose
 * text can spell such a call (words.h) are processed first, as by
 * ol_project_acquire, and so are the packages such a call's name passes
 * through; the others are not parsed for it. Each record is resolved once
 * per run (an index of (file, name) -> calls), so the question costs what
 * its answer holds. fn runs with the store locked: it must not call into
 * the project. */
typedef void (*ol_project_call_visitor)(void *ctx, size_t file, const ol_sum_call *call);
void ol_project_visit_callers(ol_project *p, size_t file, const char *rest, void *worker, ol_project_call_visitor fn,
                              void *ctx);

/* Calls fn with each record of the other files of the run that calls a
 * method named `method` on a value whose class its file cannot tell
 * (OL_ANY_CALL records), in the order of the files and their records.
 * Files without a summary yet whose text spells the name are processed
 * first. fn runs with the store locked. */
void ol_project_visit_any_calls(ol_project *p, size_t self, const char *method, void *worker,
                                ol_project_call_visitor fn, void *ctx);

/* Calls fn with each record of file `file` itself whose qual is `qual`
 * exactly (a method's calls of its own object, `self:Cls.method`, which the
 * index above does not file: they name their own file), processing the
 * file first when it has no summary yet. The records are sorted by qual,
 * so the question costs a search in one file's records. fn runs with the
 * store locked. */
void ol_project_visit_own_calls(ol_project *p, size_t file, const char *qual, void *worker,
                                ol_project_call_visitor fn, void *ctx);

/* The files but `self` that may define a class whose name contains `part`
 * (case aside) and a method `method`, in their order: their indexes, *count
 * of them (free the array). Read from their words (words.h, once per file);
 * a file is left out only when its text shows it cannot. */
size_t *ol_project_may_define_files(ol_project *p, size_t self, const char *part, const char *method,
                                    size_t *count);

/* The text of file `file` is not what its path holds on the disk (it is
 * read from standard input): it may call anything. */
void ol_project_text_elsewhere(ol_project *p, size_t file);

/* Bounds the bytes of summaries held (0, the default: no bound). */
void ol_project_set_budget(ol_project *p, size_t bytes);
/* Whether file's summary was dropped for the budget and not built again:
 * the processor then summarizes it although it was claimed. */
bool ol_project_evicted(ol_project *p, size_t file);

typedef struct ol_project_usage {
    size_t most_held;  /* bytes of summaries held at once, at most */
    size_t evictions;  /* summaries dropped for the budget */
    size_t rebuilds;   /* dropped summaries built again */
} ol_project_usage;
void ol_project_stats(ol_project *p, ol_project_usage *u);

#endif
