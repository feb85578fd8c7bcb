"""`python -m oomlint ARGS`: runs the oomlint binary this wheel installed
(into the environment's scripts directory) with the same arguments, as if
`oomlint ARGS` had been typed. It replaces this process, so the exit status,
signals and standard streams are the binary's own."""
import os
import sys
import sysconfig


def find_oomlint():
    """The installed binary: the environment's scripts directory, the user
    scheme's (pip install --user), or the bin/ beside a --target install."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [sysconfig.get_path("scripts")]
    user = "posix_user" if os.name == "posix" else "nt_user"
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=user))
    except KeyError:
        pass
    dirs.append(os.path.join(os.path.dirname(here), "bin"))
    for d in dirs:
        path = os.path.join(d, "oomlint")
        if d and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("the oomlint binary is not installed beside this package (looked in: "
                            + ", ".join(d for d in dirs if d) + ")")


def main():
    try:
        binary = find_oomlint()
    except FileNotFoundError as e:
        sys.stderr.write(f"oomlint: error: {e}\n")
        return 2
    os.execv(binary, [binary, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
