#!/bin/sh
# need-debs.sh WHAT:PACKAGE ... - installs each Debian PACKAGE whose WHAT (a
# command on the PATH, or an absolute path) is missing, when we are root and
# have apt-get; otherwise says which packages to install and fails.
set -eu
missing=""
for pair in "$@"; do
    what=${pair%%:*} pkg=${pair#*:}
    case $what in
        /*) [ -e "$what" ] && continue ;;
        *) command -v "$what" >/dev/null 2>&1 && continue ;;
    esac
    missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing; }
else
    echo "this needs$missing: run  sudo apt-get install -y$missing" >&2
    exit 1
fi
