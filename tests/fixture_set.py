"""Which files under fixtures/ are fixtures, and how oomlint is run on each:
the one definition that the fixture harness (fixture_tests.py), the
snapshots (snapshots.py) and the SARIF and habits tests share, so that a
snapshot shows exactly the selection whose markers the harness checks.

A fixture is a .py or .ipynb file (not a `.fixed.py` / `.unsafe-fixed.py`
expectation), or a directory `project_*`, which is one project linted in one
run. Inside a rule directory (fixtures/OOM101/) the rule is selected on top
of the default set, so that opt-in rules have fixtures too."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")
RULE_DIR = re.compile(r"^OOM\d{3}$")


def is_project(dirpath):
    """A directory `project_*` holds the files of one project, linted as one run."""
    return os.path.basename(dirpath).startswith("project_")


def fixture_files(root=FIXTURES):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if is_project(dirpath):
            dirnames[:] = []
            continue
        for name in sorted(filenames):
            if name.endswith(".fixed.py") or name.endswith(".unsafe-fixed.py"):
                continue
            if name.endswith(".py") or name.endswith(".ipynb"):
                yield os.path.join(dirpath, name)


def project_dirs(root=FIXTURES):
    for dirpath, dirnames, _ in os.walk(root):
        dirnames.sort()
        if is_project(dirpath):
            dirnames[:] = []
            yield dirpath


def project_files(project):
    """The Python files of a project directory, relative to it, sorted."""
    return sorted(os.path.relpath(os.path.join(d, f), project)
                  for d, _, names in os.walk(project) for f in names if f.endswith(".py"))


def rule_args(rule_dir):
    # --isolated: a fixture's verdict must not depend on a pyproject.toml around it
    args = ["--isolated", "--format", "json"]
    if RULE_DIR.match(os.path.basename(rule_dir)):
        args += ["--extend-select", os.path.basename(rule_dir)]
    return args


def select_args(path):
    """Every default rule runs on every fixture; a rule directory also turns
    on its own rule, so opt-in rules have fixtures too."""
    return rule_args(os.path.dirname(path))


def project_args(project):
    """The same for a project directory: the rule directory it sits in."""
    return rule_args(os.path.dirname(os.path.normpath(project)))


def invocation(target, root=FIXTURES):
    """How the harness runs oomlint on a fixture under root: (arguments,
    working directory, path argument). A file is linted from the directory
    above root (the repository) by its path from there: the default
    per-file-ignores match `**/tests/**` against the path from the working
    directory, so where the tests are started must not change a verdict. A
    project is linted from its own directory, as `.`."""
    target = os.path.normpath(os.path.abspath(target))
    if os.path.isdir(target):
        return project_args(target), target, "."
    top = os.path.dirname(os.path.normpath(os.path.abspath(root)))
    return select_args(target), top, os.path.relpath(target, top)
