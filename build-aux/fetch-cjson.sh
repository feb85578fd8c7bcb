#!/bin/sh
# fetch-cjson.sh VERSION ORIG_SHA256 DEST
#
# Fetches the source of cJSON for the release build (which links it
# statically, so the release binary and the wheel need nothing but the C
# library): Debian's source package, with Debian's security patches applied,
# fetched with `apt-get source` from a private list of deb-src archives kept
# under build/apt (the system's apt configuration is not touched). apt checks
# every file against the signed archive index; this script also checks the
# upstream tarball against the pinned sha256 and the upstream version, so a
# new upstream release stops the build until the pin is updated. DEST gets
# cJSON.c, cJSON.h and LICENSE (as upstream lays them out) and the Debian
# version in DEBIAN_VERSION; DEST/.integrity records the pin,
# so a second run does nothing. Any failure leaves no DEST behind.
#
# Elsewhere (no apt): unpack cJSON VERSION yourself and point the build at it
# with `make release CJSON_SRC=/path/to/cJSON-VERSION`.
set -eu

version=$1 sha256=$2 dest=$3

if [ -f "$dest/.integrity" ] && [ "$(cat "$dest/.integrity")" = "$version $sha256" ]; then
    touch "$dest/.integrity"  # up to date: newer than the pins, so make stops asking
    exit 0
fi

# apt-get source unpacks with dpkg-source (dpkg-dev); install it when we can
if command -v apt-get >/dev/null 2>&1 && ! command -v dpkg-source >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing dpkg-dev (apt-get source needs dpkg-source)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >/dev/null; }
fi
command -v apt-get >/dev/null 2>&1 && command -v dpkg-source >/dev/null 2>&1 || {
    echo "fetch-cjson.sh: the release build takes cJSON's source from Debian with apt-get source" >&2
    echo "  (apt-get and dpkg-dev); elsewhere unpack cJSON $version and run" >&2
    echo "  make release CJSON_SRC=/path/to/cJSON-$version" >&2
    exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
apt_dir=$root/build/apt
work=$(mktemp -d "${TMPDIR:-/tmp}/oomlint-cjson.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
{
    echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian $codename main"
    echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian $codename-updates main"
    echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian-security $codename-security main"
} >"$apt_dir/sources.list"
apt_opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache -o APT::Sandbox::User=root"

echo "fetching cJSON $version (Debian source package)"
# shellcheck disable=SC2086
apt-get -q $apt_opts update >"$work/update.log" 2>&1 || {
    cat "$work/update.log" >&2
    echo "fetch-cjson.sh: apt-get update of the deb-src lists failed" >&2
    exit 1
}
# shellcheck disable=SC2086
(cd "$work" && apt-get -q $apt_opts source cjson >source.log 2>&1) || {
    cat "$work/source.log" >&2
    echo "fetch-cjson.sh: apt-get source cjson failed" >&2
    exit 1
}

orig=$work/cjson_$version.orig.tar.gz
[ -f "$orig" ] || {
    echo "fetch-cjson.sh: Debian's cjson is no longer upstream $version:" >&2
    ls "$work" >&2
    echo "  update CJSON_VERSION and CJSON_ORIG_SHA256 in grammar/pins.mk" >&2
    exit 1
}
actual=$(sha256sum "$orig" | cut -d' ' -f1)
if [ "$actual" != "$sha256" ]; then
    echo "fetch-cjson.sh: sha256 mismatch for cjson_$version.orig.tar.gz" >&2
    echo "  pinned:  $sha256" >&2
    echo "  fetched: $actual" >&2
    exit 1
fi
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "cjson-$version" | head -n 1)
[ -n "$src" ] && [ -f "$src/cJSON.c" ] || { echo "fetch-cjson.sh: no unpacked source in $work" >&2; exit 1; }

mkdir -p "$work/out"
cp "$src/cJSON.c" "$src/cJSON.h" "$src/LICENSE" "$work/out/"
sed -n 's/^Version: //p' "$work"/cjson_*.dsc | head -n 1 >"$work/out/DEBIAN_VERSION"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/out" "$dest"
printf '%s %s\n' "$version" "$sha256" >"$dest/.integrity"
