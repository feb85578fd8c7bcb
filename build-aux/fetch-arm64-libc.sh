#!/bin/sh
# fetch-arm64-libc.sh DEST - the C library of Debian's arm64 port (libc6:arm64,
# the version this machine's own libc6 has) unpacked into DEST, as the root
# qemu-aarch64 runs the arm64 build in (make test-arm64). The cross
# toolchain's libc6-arm64-cross lacks glibc's iconv modules (gconv), which
# oomlint loads to read sources in latin-1, GBK and the like; the arm64 port's
# libc6 has them. Fetched with apt-get download from a private list (build/apt-arm64;
# the system's apt configuration is not touched): apt checks the .deb against
# the signed archive index. DEST/.version records what was unpacked, so a
# second run does nothing. Any failure leaves no DEST behind.
set -eu

dest=$1
version=$(dpkg-query -W -f '${Version}' libc6)
if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$version" ]; then
    exit 0
fi

root=$(cd "$(dirname "$0")/.." && pwd)
apt_dir=$root/build/apt-arm64
work=$(mktemp -d "${TMPDIR:-/tmp}/oomlint-arm64.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
{
    echo "deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $codename main"
    echo "deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $codename-updates main"
    echo "deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian-security $codename-security main"
} >"$apt_dir/sources.list"
apt_opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache -o APT::Sandbox::User=root
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Dir::State::status=/dev/null"

echo "fetching Debian's arm64 C library (libc6 $version) for qemu"
# shellcheck disable=SC2086
apt-get -q $apt_opts update >"$work/update.log" 2>&1 || {
    cat "$work/update.log" >&2
    echo "fetch-arm64-libc.sh: apt-get update of the arm64 lists failed" >&2
    exit 1
}
# shellcheck disable=SC2086
(cd "$work" && apt-get -q $apt_opts download "libc6:arm64=$version" >download.log 2>&1) || {
    cat "$work/download.log" >&2
    echo "fetch-arm64-libc.sh: apt-get download libc6:arm64=$version failed" >&2
    exit 1
}
mkdir -p "$work/root"
dpkg-deb -x "$work"/libc6_*_arm64.deb "$work/root"
[ -d "$work/root/usr/lib/aarch64-linux-gnu/gconv" ] || {
    echo "fetch-arm64-libc.sh: no gconv modules in libc6:arm64 $version" >&2
    exit 1
}
printf '%s\n' "$version" >"$work/root/.version"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/root" "$dest"
