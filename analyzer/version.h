/*
 * version.h - oomlint's version, shown by --version, SARIF's tool.driver and
 * the language server's serverInfo. It is the one place the version is
 * written: the Makefile, build-aux/release.py (wheel, tarballs, PKG-INFO) and
 * action.yml read it from here, and a test checks that pyproject.toml, the
 * VS Code extension's package.json, CHANGELOG.md and the pins shown in the
 * README and docs agree with it. The commit `oomlint version` prints beside it
 * comes from build/gen/commit.h, which the Makefile writes.
 */
#ifndef OL_VERSION_H
#define OL_VERSION_H

#define OL_VERSION "0.2.0"

#endif
