"""The fixture harness: every fixture's findings must match its `# expect:`
markers exactly, and every `.fixed.py` must be what --fix makes of its
fixture. A directory named `project_*` is one project: its files are linted
in one run and their markers checked together. Adding fixtures needs no
change here."""
import os
import shutil

import harness
from harness import FIXTURES, Workspace, expected_markers, reported, run, test

RULE_DIR = __import__("re").compile(r"^OOM\d{3}$")


def is_project(dirpath):
    """A directory `project_*` holds the files of one project, linted as one run."""
    return os.path.basename(dirpath).startswith("project_")


def fixture_files():
    for dirpath, dirnames, filenames in os.walk(FIXTURES):
        dirnames.sort()
        if is_project(dirpath):
            dirnames[:] = []
            continue
        for name in sorted(filenames):
            if name.endswith(".fixed.py") or name.endswith(".unsafe-fixed.py"):
                continue
            if name.endswith(".py") or name.endswith(".ipynb"):
                yield os.path.join(dirpath, name)


def select_args(path):
    """Every default rule runs on every fixture; a rule directory also turns
    on its own rule, so opt-in rules have fixtures too."""
    rule = os.path.basename(os.path.dirname(path))
    # --isolated: a fixture's verdict must not depend on a pyproject.toml around it
    args = ["--isolated", "--format", "json"]
    if RULE_DIR.match(rule):
        args += ["--extend-select", rule]
    return args


def make_fixture_test(path):
    rel = os.path.relpath(path, FIXTURES)

    def check():
        result = run(*select_args(path), path)
        findings = result.json()
        notebook = path.endswith(".ipynb")
        got = reported(findings, notebook)
        want = expected_markers(path)
        missing = sorted(want - got)
        extra = sorted(got - want)
        if missing or extra:
            lines = []
            for item in missing:
                lines.append(f"  missing {item}")
            for item in extra:
                msg = next((f["message"] for f in findings
                            if (f["code"], f["line"]) == (item[0], item[-1])), "")
                lines.append(f"  extra   {item}: {msg}")
            raise AssertionError(f"{rel}:\n" + "\n".join(lines))
        # info findings are shown but do not fail the run (--fail-on warning)
        assert result.code == (1 if harness.failing(findings) else 0), f"exit code {result.code} for {rel}"

    test(f"fixture: {rel}")(check)


def project_dirs():
    for dirpath, dirnames, _ in os.walk(FIXTURES):
        dirnames.sort()
        if is_project(dirpath):
            dirnames[:] = []
            yield dirpath


def make_project_test(root):
    """Lints the whole directory in one run (so files see each other's
    functions) and checks every file's markers together, with any number of
    threads."""
    rel = os.path.relpath(root, FIXTURES)
    rule = os.path.basename(os.path.dirname(root))
    files = sorted(os.path.relpath(os.path.join(d, f), root)
                   for d, _, names in os.walk(root) for f in names if f.endswith(".py"))

    def check():
        args = ["--isolated", "--format", "json"]
        if RULE_DIR.match(rule):
            args += ["--extend-select", rule]
        result = run(*args, ".", cwd=root)
        findings = result.json()
        got = {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in findings}
        want = set()
        for name in files:
            for code, line in expected_markers(os.path.join(root, name)):
                want.add((os.path.normpath(name), code, line))
        missing = sorted(want - got)
        extra = sorted(got - want)
        if missing or extra:
            lines = [f"  missing {item}" for item in missing]
            for item in extra:
                msg = next((f["message"] for f in findings
                            if (os.path.normpath(f["path"]), f["code"], f["line"]) == item), "")
                lines.append(f"  extra   {item}: {msg}")
            raise AssertionError(f"{rel}:\n" + "\n".join(lines))
        assert result.code == (1 if want else 0), f"exit code {result.code} for {rel}"
        # the verdicts do not depend on how many threads share the work
        for threads in ("1", "3"):
            again = run(*args, "--threads", threads, ".", cwd=root)
            assert {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in again.json()} == got, \
                f"{rel}: findings differ with --threads {threads}"
        # nor on the memory kept for summaries: with a budget of 1 KB every
        # summary is dropped when the next one comes, and built again from
        # its file when it is asked for
        for threads in ("1", "2"):
            tight = run(*args, "--threads", threads, "--timings", ".", cwd=root,
                        env={"OOMLINT_SUMMARY_BUDGET_KB": "1"})
            assert {(os.path.normpath(f["path"]), f["code"], f["line"]) for f in tight.json()} == got, \
                f"{rel}: findings differ with summaries dropped for the budget (--threads {threads})"
            assert "dropped for the budget" in tight.err, tight.err

    test(f"fixture: {rel}/")(check)


def make_fix_test(path, fixed_path, unsafe):
    rel = os.path.relpath(fixed_path, FIXTURES)

    def check():
        with Workspace() as ws:
            name = os.path.basename(path)
            target = os.path.join(ws.path, name)
            shutil.copyfile(path, target)
            # the project's declared dependencies travel with it: OOM502 reads
            # the torch floor from them (fixtures/OOM502/requirements.txt)
            for dep in ("requirements.txt", "pyproject.toml", "setup.cfg"):
                if os.path.exists(os.path.join(os.path.dirname(path), dep)):
                    shutil.copyfile(os.path.join(os.path.dirname(path), dep), os.path.join(ws.path, dep))
            rule = os.path.basename(os.path.dirname(path))
            args = ["--isolated", "--fix"] + (["--extend-select", rule] if RULE_DIR.match(rule) else [])
            if unsafe:
                args.append("--unsafe-fixes")
            first = run(*args, target)
            with open(target, "rb") as f:
                got = f.read()
            with open(fixed_path, "rb") as f:
                want = f.read()
            if got != want:
                import difflib
                diff = "".join(difflib.unified_diff(
                    want.decode("utf-8", "replace").splitlines(True),
                    got.decode("utf-8", "replace").splitlines(True), "expected", "got"))
                raise AssertionError(f"{rel}: --fix result differs:\n{diff}\n{first}")
            # a second run finds nothing more to fix
            run(*args, target)
            with open(target, "rb") as f:
                again = f.read()
            assert again == got, f"{rel}: a second --fix changed the file again"

    test(f"fix: {rel}")(check)


for fixture in fixture_files():
    make_fixture_test(fixture)
    stem = fixture[:-3] if fixture.endswith(".py") else None
    if stem:
        for suffix, unsafe in ((".fixed.py", False), (".unsafe-fixed.py", True)):
            if os.path.exists(stem + suffix):
                make_fix_test(fixture, stem + suffix, unsafe)

for project in project_dirs():
    make_project_test(project)
