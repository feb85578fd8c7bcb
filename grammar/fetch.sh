#!/bin/sh
# fetch.sh PACKAGE VERSION INTEGRITY DEST
#
# Fetches one pinned npm package with `npm pack`, checks the tarball against the
# pinned sha512 integrity string, and unpacks it into DEST (the package's files
# end up directly under DEST). DEST/.integrity records what was unpacked, so a
# second run with the same pin does nothing. Any failure leaves no DEST behind.
set -eu

pkg=$1 version=$2 integrity=$3 dest=$4

if [ -f "$dest/.integrity" ] && [ "$(cat "$dest/.integrity")" = "$integrity" ]; then
    touch "$dest/.integrity"  # up to date: newer than the pins, so make stops asking
    exit 0
fi

command -v npm >/dev/null 2>&1 || {
    echo "fetch.sh: npm is needed to fetch $pkg@$version (apt-get install npm)" >&2
    exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/oomlint-fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "fetching $pkg@$version"
# --ignore-scripts: a pack of a registry spec runs nothing, but say so anyway.
# --loglevel=error, not --silent: when it fails, its error says why.
(cd "$work" && npm pack --loglevel=error --ignore-scripts "$pkg@$version" >npm-pack.out 2>npm-pack.err) || {
    cat "$work/npm-pack.err" >&2
    echo "fetch.sh: npm pack $pkg@$version failed" >&2
    exit 1
}
tarball=$(ls "$work"/*.tgz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "fetch.sh: npm pack produced no tarball for $pkg@$version" >&2; exit 1; }

actual=$(python3 -c 'import base64, hashlib, sys
with open(sys.argv[1], "rb") as f:
    print("sha512-" + base64.b64encode(hashlib.sha512(f.read()).digest()).decode())' "$tarball")
if [ "$actual" != "$integrity" ]; then
    echo "fetch.sh: integrity mismatch for $pkg@$version" >&2
    echo "  pinned:  $integrity" >&2
    echo "  fetched: $actual" >&2
    exit 1
fi

mkdir -p "$work/unpack"
tar -xzf "$tarball" -C "$work/unpack"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/unpack/package" "$dest"
printf '%s\n' "$integrity" >"$dest/.integrity"
