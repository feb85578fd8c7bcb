/*
 * OOM003 unused-noqa: suppression comments that suppress nothing, like
 * Ruff's RUF100. It is opt-in, and reported by the engine (lint.c) after
 * every other rule has run and the findings were filtered, because only then
 * is it known which suppressions were needed (analyzer/unused_noqa.c).
 *
 * What counts follows Ruff: a code is unused when no finding of it was
 * suppressed, non-enabled when its rule does not run on this file, unknown
 * when no rule has that code, duplicated when the directive names it twice.
 * Two differences, both because a `# noqa` comment is shared with the other
 * linters of a project: codes that are not oomlint's (`E501`, `F401`) are
 * theirs and never reported, and neither is a blanket `# noqa`, which may be
 * there for flake8 or Ruff. oomlint's own `# oomlint: disable` directives,
 * blanket or not, are all judged. The fix (safe: a suppression that
 * suppresses nothing changes no output) removes the unused codes, or the
 * whole directive when none is left.
 */
#include "rule.h"

const ol_rule ol_rule_oom003 = {
    .code = "OOM003",
    .name = "unused-noqa",
    .severity = OL_SEV_WARNING,
    .opt_in = true,
    .in_tests = true,
    .summary = "A `# noqa` or `# oomlint: disable` directive suppresses no finding.",
    .what = "Reports oomlint rule codes in `# noqa:` comments, and `# oomlint: disable` / `disable-file` "
            "directives, that suppressed no finding in this run: the code is unused, its rule is not "
            "enabled for the file, no rule has that code, or the directive names it twice. Codes of "
            "other linters (`E501`) and a blanket `# noqa` are left alone: they may be there for flake8 "
            "or Ruff. Opt-in: select it with `--extend-select OOM003`.",
    .why = "A suppression outlives the code it was written for. Once the finding is gone, the stale "
           "comment silently hides the next real problem on that line (a new accumulation of the loss, "
           "a new forward pass in evaluation code), which is exactly the one you want to see.",
    .example = "for x, y in loader:\n    loss = criterion(model(x), y)\n    total += loss.item()  # noqa: OOM101",
    .instead = "for x, y in loader:\n    loss = criterion(model(x), y)\n    total += loss.item()",
    .fix = "Removes the unused codes from the directive, or the whole directive when nothing else is left "
           "in it (safe).",
    .fix_safety = "Safe: a code that suppressed nothing in this run changes no finding when it is removed, "
                  "and the fix removes only oomlint's own codes and directives, never another linter's.",
    .tags = "maintainability",
    .precision = "very-high",
    .check = NULL,
};
