# oomlint build.
#
#   make            build build/oomlint (fetches pinned sources on first run);
#                   one short line per step, `make V=1` shows the full commands
#   make demo       build, then lint the bundled example training script
#   make test       build, then run the fast suite, the one to run after every change
#                   (unit, fixtures, fixes, CLI, configuration, robustness, safety, the
#                   language server's protocol, SARIF and GitHub consumers; a few
#                   minutes, two tests at a time: TEST_JOBS=N); the tools it needs are
#                   installed first (tests/tools.mk)
#   make check      the slow suite (pathological sizes, scaling, the probe's PyTorch
#                   runs, install paths, pre-commit, real editors), then every test
#                   against an ASan+UBSan build (build/san/) and the language server's
#                   tests on a clang one, the CLI under valgrind, and both fuzzers for
#                   FUZZ_SECONDS (60); CI runs `make test` then `make check`
#   make test SANITIZE=1   the fast suite against the ASan+UBSan build
#   make PGO=1      build with the parser optimised from a profile (clang; see
#                   grammar/pgo.mk: the default, PGO=auto, does so when clang is there)
#   make bench      build, then print throughput and latency next to a bare parse
#                   and ast-grep, on Debian's python3-torch and CPython's stdlib
#                   (fetched with apt-get download; see bench/run.py)
#   make install    install the binary and its man page: PREFIX=/usr/local,
#                   DESTDIR= for staging (make uninstall removes them)
#   make release    build/release/oomlint: optimised, stripped, cJSON linked in,
#                   so it needs nothing but the C library (glibc)
#   make wheel      dist/oomlint-VERSION-py3-none-PLATFORM.whl from the release
#                   binary (pip install it anywhere with that glibc or newer)
#   make dist       dist/: the source tarball, the release binary as a tarball,
#                   the wheel, and SHA256SUMS
#   make editors    package the VS Code extension (build/oomlint-vscode.vsix);
#                   editors/ has the Neovim, Emacs, Vim and Helix setups
#   make vsix-platform VSIX_TARGET=linux-x64 VSIX_BIN=FILE   the same with that binary
#                   inside (build/oomlint-vscode-linux-x64.vsix), for one platform:
#                   linux-x64/arm64, alpine-x64/arm64, darwin-x64/arm64; VSIX_FROM=dist
#                   takes it from a release tarball instead (docs/install.md)
#   make cross      macOS x86_64 and arm64 binaries with zig cc (build/cross/TARGET/)
#   make test-arm64 the Linux arm64 build (Debian's cross gcc), tested under qemu-user
#   make test-musl  the fully static musl build, tested
#   make test-portable  the macOS code paths built and tested on Linux
#   make dist-target TARGET=...  the wheel and tarball of one of those builds
#                   (docs/platforms.md says what each proves)
#   make fuzz       build the libFuzzer targets and run each for FUZZ_SECONDS (fuzz/fuzz.mk)
#   make valgrind   the command line over every fixture under valgrind memcheck (tests/valgrind.py)
#   make docs       docs/rules/ and the README's rule table, from the rules in the binary
#   make snapshots  rewrite fixtures/**/*.snap, what oomlint reports on each fixture
#                   (tests/snapshots.py; review the change as a diff)
#   make rule CODE=OOM706 NAME=some-rule-name [SEVERITY=warning] [SUMMARY=...]
#                   the skeleton of a new rule, its fixtures and its line in
#                   rules/rules.def, built and documented (scripts/add_rule.py)
#   make clean      remove build outputs but keep fetched sources
#   make distclean  remove build/ and dist/ entirely
#
# Third-party sources (the tree-sitter runtime and grammars) are fetched with
# `npm pack`, checked against the pins in grammar/pins.mk and cached under
# build/deps. cJSON comes from Debian's libcjson-dev, installed here when it is
# missing and we are root; the release build compiles cJSON in instead, from
# Debian's source package (build-aux/fetch-cjson.sh, pinned in grammar/pins.mk).

include grammar/pins.mk

# Quiet by default, like the kernel's build: one short line per step
# (`  CC      analyzer/lint.c`); V=1 prints every command in full instead.
V ?= 0
ifeq ($(V),1)
Q :=
say = @:
else
Q := @
say = @printf '  %-7s %s\n' '$(1)' '$(2)'
endif
# BUILD_QUIET=1 (used by `make demo`): not even the short lines.
ifeq ($(BUILD_QUIET),1)
say = @:
endif

BUILD := build
DEPS  := $(BUILD)/deps

ifeq ($(SANITIZE),1)
# clang's UBSan checks what GCC's does not (a null pointer plus zero, a
# float converted past an integer's range): `make test SANITIZE=1` also runs
# the server's tests on a clang build (build/san/clang/, test-server-clang)
ifneq ($(findstring clang,$(notdir $(CC))),)
OUT      := $(BUILD)/san/clang
else
OUT      := $(BUILD)/san
endif
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# a read of a node the tree does not have aborts here instead of being absorbed (syntax.h)
STRICT   := -DOL_STRICT_NODES
else
OUT      := $(BUILD)
SANFLAGS :=
STRICT   :=
endif
# The release build (make release): objects of its own, cJSON compiled in,
# the binary stripped. It links the C library dynamically on purpose: a
# fully static glibc binary still loads the C library's iconv modules at run
# time (PEP 263 source encodings such as cp1252 or euc-kr), and those must
# come from the very glibc it was built with.
ifeq ($(RELEASE),1)
OUT      := $(BUILD)/release
SANFLAGS :=
endif

CC ?= cc
OPT ?= -O2 -g

# Builds for other platforms (make cross, test-arm64, test-musl, test-portable):
# TARGET names one, its objects and binaries go to build/cross/TARGET/, cJSON
# is compiled in as in the release build, and any warning is an error.
#   x86_64-macos, aarch64-macos   zig cc (pinned in grammar/pins.mk) against the
#                                 macOS headers and libSystem stubs Zig bundles
#   aarch64-linux-gnu             Debian's cross gcc; run under qemu-user
#   x86_64-linux-musl             musl-gcc (musl-tools), linked fully static
#   x86_64-linux-portable         this machine's cc with OL_PORTABLE_PATHS: the
#                                 macOS code paths (self-pipe, parent-death
#                                 pipe) built and run on Linux
ZIG_DIR := $(BUILD)/tools/zig-$(ZIG_VERSION)
ZIG     := $(ZIG_DIR)/zig
TARGET_WARN :=
ifneq ($(TARGET),)
OUT          := $(BUILD)/cross/$(TARGET)
override PGO := 0
SANFLAGS     :=
STRICT       :=
TARGET_WARN  := -Werror
ifneq ($(filter %-macos,$(TARGET)),)
# the oldest macOS they run on, the oldest Zig 0.11 has headers for (the
# wheel's macosx_X_Y tag is read back off the binary)
MACOS_MIN    := 11.0
override CC  := $(ZIG) cc -target $(TARGET).$(MACOS_MIN)
TARGET_CFLAGS := -D_DARWIN_C_SOURCE
TARGET_LIBS  := -Lbuild-aux/macos -liconv
TARGET_DEP   := $(ZIG_DIR)/.integrity
else ifeq ($(TARGET),aarch64-linux-gnu)
override CC  := aarch64-linux-gnu-gcc
TARGET_LINK  := -s -Wl,--as-needed
else ifneq ($(filter %-linux-musl,$(TARGET)),)
override CC  := musl-gcc
TARGET_LINK  := -static -s
else ifeq ($(TARGET),x86_64-linux-portable)
TARGET_CFLAGS := -DOL_PORTABLE_PATHS
else
$(error unknown TARGET '$(TARGET)': x86_64-macos, aarch64-macos, aarch64-linux-gnu, x86_64-linux-musl, aarch64-linux-musl, x86_64-linux-portable)
endif
endif
# Built natively on a Mac (the release workflow's macOS jobs): the same
# switches as the cross build, with the system's compiler and libiconv.
ifeq ($(TARGET)$(shell uname -s),Darwin)
TARGET_CFLAGS := -D_DARWIN_C_SOURCE
TARGET_LIBS   := -liconv
endif

TS_DIR   := $(DEPS)/tree-sitter-$(TS_RUNTIME_VERSION)
PY_DIR   := $(DEPS)/tree-sitter-python-$(TS_PYTHON_VERSION)
TOML_DIR := $(DEPS)/tree-sitter-toml-$(TS_TOML_VERSION)
TS_STAMP   := $(TS_DIR)/.integrity
PY_STAMP   := $(PY_DIR)/.integrity
TOML_STAMP := $(TOML_DIR)/.integrity
STAMPS := $(TS_STAMP) $(PY_STAMP) $(TOML_STAMP)

SYSTEM_CJSON_H := /usr/include/cjson/cJSON.h
CJSON_SRC ?= $(DEPS)/cjson-$(CJSON_VERSION)
ifneq ($(RELEASE)$(TARGET),)
CJSON_H      := $(OUT)/include/cjson/cJSON.h
CJSON_OBJ    := $(OUT)/obj/vendor/cjson.o
CJSON_LIBS   :=
CJSON_CFLAGS := -I$(OUT)/include
LINKFLAGS    := $(if $(TARGET),$(TARGET_LINK),-s $(if $(filter Darwin,$(shell uname -s)),,-Wl,--as-needed))
else
CJSON_H      := $(SYSTEM_CJSON_H)
CJSON_OBJ    :=
CJSON_LIBS   := -lcjson
CJSON_CFLAGS :=
LINKFLAGS    :=
endif
VERSION := $(shell sed -n 's/^\#define OL_VERSION "\(.*\)"/\1/p' analyzer/version.h)
# The commit `oomlint version` prints beside the version: in a git checkout
# its short hash, with -dirty when the tree has changes; in an unpacked source
# tarball the one build-aux/release.py stamped into its COMMIT file; else
# "unknown" (OOMLINT_COMMIT=... names it where the checkout has no .git, as in
# the release workflow's containers). Written to $(GEN)/commit.h only when it
# changes, so a rebuild recompiles main.c alone, and only then.
OOMLINT_COMMIT ?= $(or $(shell { test -e .git && git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null; } \
	|| head -n 1 COMMIT 2>/dev/null | tr -cd 'A-Za-z0-9._-'),unknown)

WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 $(TARGET_WARN)
CFLAGS_OURS := -std=c11 $(OPT) $(WARN) $(SANFLAGS) $(STRICT) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(TARGET_CFLAGS) \
	-I$(TS_DIR)/vendor/tree-sitter/lib/include $(CJSON_CFLAGS) -MMD -MP
# What each folder may include: the architecture, held by the include path.
# The linter (analyzer/) sees its rules' registry; the rules see rule.h and
# the engine's public headers alone (analyzer/public/: the door and the
# rule-facing half of each header rule.h reaches, which the engine's header
# of the same name in analyzer/ includes; the others find the private one
# first); the tools built on the linter (the language server, the probe,
# explain) see the linter and themselves; the program's entry (cli/) sees
# them all. Nothing in analyzer/ or rules/ can include a tool's header.
INC_analyzer = -Ianalyzer -Ianalyzer/public -Irules
INC_rules = -Irules -Ianalyzer/public
INC_server = -Iserver -Ianalyzer -Ianalyzer/public -Irules
INC_probe = -Iprobe -Ianalyzer -Ianalyzer/public -Irules
INC_explain = -Iexplain -Ianalyzer -Ianalyzer/public -Irules
INC_cli = -Icli -Ianalyzer -Ianalyzer/public -Irules -Iserver -Iprobe -Iexplain -I$(GEN)
INC_tests = -Ianalyzer -Ianalyzer/public -Irules -Iserver -Iprobe -Iexplain
INC_fuzz = -Ifuzz -Ianalyzer -Ianalyzer/public -Irules -Iexplain
INC_build = -Ianalyzer -Iprobe
dir_inc = $(INC_$(firstword $(subst /, ,$(1))))
# A rule that calls an engine function no public header declares does not build.
$(OUT)/obj/rules/%.o: CFLAGS_OURS += -Werror=implicit-function-declaration
# Third-party code is built with its own expectations, not our warning set.
CFLAGS_VENDOR := -std=gnu11 $(OPT) $(SANFLAGS) -w -D_DEFAULT_SOURCE $(TARGET_CFLAGS)
LDLIBS := $(CJSON_LIBS) -lpthread $(if $(filter %-macos,$(TARGET)),,-ldl) -lm $(TARGET_LIBS)

# One object list per folder; cli/main.c is the program, the rest is linked
# into it and into the unit tests.
ANALYZER_SRC := $(sort $(wildcard analyzer/*.c))
RULES_SRC    := $(sort $(wildcard rules/*.c))
SERVER_SRC   := $(sort $(wildcard server/*.c))
PROBE_SRC    := $(sort $(wildcard probe/*.c))
EXPLAIN_SRC  := $(sort $(wildcard explain/*.c))
LIB_SRC      := $(ANALYZER_SRC) $(RULES_SRC) $(SERVER_SRC) $(PROBE_SRC) $(EXPLAIN_SRC)
# The probe's Python files and committed measurements are compiled in as
# generated C (build/gen/); see scripts/probe_gen.py.
GEN           := $(BUILD)/gen
PYTHON        ?= python3
PROBE_PY      := $(sort $(wildcard probe/*.py probe/scenarios/*.py))
PROBE_RESULTS := $(sort $(wildcard probe/results/*.json))
GEN_OBJ       := $(OUT)/obj/gen/probe_embed.o $(OUT)/obj/gen/probe_results.o
LIB_OBJ      := $(LIB_SRC:%.c=$(OUT)/obj/%.o) $(GEN_OBJ)
MAIN_OBJ     := $(OUT)/obj/cli/main.o
UNIT_OBJ     := $(OUT)/obj/tests/unit.o
VENDOR_OBJ   := $(OUT)/obj/vendor/parser.o $(OUT)/obj/vendor/toml_parser.o $(OUT)/obj/vendor/toml_scanner.o

.PHONY: all demo test bench docs golden clean distclean fetch man install uninstall release wheel dist fuzz valgrind \
	FORCE
.DELETE_ON_ERROR:

all: $(OUT)/oomlint

fetch: $(STAMPS)

# The runtime and the Python grammar, one translation unit (grammar/parser_unity.c),
# with the runtime's parser.c as grammar/edit_runtime.py writes it (one edit)
PARSER_SRC := grammar/parser_unity.c
PARSER_INC := -I$(TS_DIR)/vendor/tree-sitter/lib/include -I$(TS_DIR)/vendor/tree-sitter/lib/src -I$(PY_DIR) -I$(GEN)
TS_PARSER_EDITED := $(GEN)/ts_parser.c

# The grammar's external scanner allocates through tree-sitter's allocator
# (ts_set_allocator: the per-file arena, analyzer/parse_arena.c) instead of
# malloc: it resizes its indent stack at every token it deserializes.
SCANNER_ALLOC := -DTREE_SITTER_REUSE_ALLOCATOR

# PARSER_CC, PARSER_PGO_FLAGS, PARSER_PROFILE, PARSER_MODE: how the runtime and
# the Python grammar are compiled (profile-guided with clang when PGO allows)
include grammar/pgo.mk

$(OUT)/oomlint: $(MAIN_OBJ) $(LIB_OBJ) $(VENDOR_OBJ) $(CJSON_OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LINKFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/oomlint-unit: $(UNIT_OBJ) $(LIB_OBJ) $(VENDOR_OBJ) $(CJSON_OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS)

# syntax.c reads the pinned runtime's subtrees directly (see flatten there)
$(OUT)/obj/analyzer/syntax.o: CFLAGS_OURS += -I$(TS_DIR)/vendor/tree-sitter/lib/src
$(UNIT_OBJ): CFLAGS_OURS += -I$(TS_DIR)/vendor/tree-sitter/lib/src

$(MAIN_OBJ): $(GEN)/commit.h

$(OUT)/obj/%.o: %.c | $(STAMPS) $(CJSON_H) $(TARGET_DEP)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_OURS) $(call dir_inc,$<) -c $< -o $@

# Regenerated on every build (FORCE) so that an added or removed file counts;
# the script rewrites its output only when the text changes.
$(GEN)/probe_embed.c: FORCE
	@$(PYTHON) scripts/probe_gen.py embed $@ probe $(PROBE_PY)

$(GEN)/probe_results.c: FORCE
	@$(PYTHON) scripts/probe_gen.py results $@ $(PROBE_RESULTS)

$(OUT)/obj/gen/%.o: $(GEN)/%.c | $(STAMPS) $(CJSON_H) $(TARGET_DEP)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_OURS) $(INC_build) -c $< -o $@

$(GEN)/commit.h: FORCE
	@mkdir -p $(GEN)
	@printf '#define OL_COMMIT "%s"\n' '$(OOMLINT_COMMIT)' > $@.$$$$.tmp && \
		{ cmp -s $@.$$$$.tmp $@ && rm -f $@.$$$$.tmp || mv -f $@.$$$$.tmp $@; }

FORCE:

$(TS_PARSER_EDITED): grammar/edit_runtime.py $(TS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) grammar/edit_runtime.py $(TS_DIR)/vendor/tree-sitter/lib/src $@

$(OUT)/obj/vendor/parser.o: $(PARSER_SRC) $(TS_PARSER_EDITED) $(TS_STAMP) $(PY_STAMP) $(PARSER_PROFILE) $(PARSER_MODE)
	@mkdir -p $(dir $@)
	$(call say,CC,tree-sitter runtime and tree-sitter-python)
	$(Q)$(PARSER_CC) $(CFLAGS_VENDOR) $(SCANNER_ALLOC) $(PARSER_PGO_FLAGS) $(PARSER_INC) -c $(PARSER_SRC) -o $@

$(OUT)/obj/vendor/toml_parser.o: $(TOML_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CC,tree-sitter-toml parser)
	$(Q)$(CC) $(CFLAGS_VENDOR) -I$(TOML_DIR)/src -c $(TOML_DIR)/src/parser.c -o $@

$(OUT)/obj/vendor/toml_scanner.o: $(TOML_STAMP)
	@mkdir -p $(dir $@)
	$(call say,CC,tree-sitter-toml scanner)
	$(Q)$(CC) $(CFLAGS_VENDOR) -I$(TOML_DIR)/src -c $(TOML_DIR)/src/scanner.c -o $@

$(TS_STAMP): grammar/pins.mk grammar/fetch.sh
	$(Q)sh grammar/fetch.sh '$(TS_RUNTIME_PKG)' '$(TS_RUNTIME_VERSION)' '$(TS_RUNTIME_INTEGRITY)' $(TS_DIR)

$(PY_STAMP): grammar/pins.mk grammar/fetch.sh
	$(Q)sh grammar/fetch.sh '$(TS_PYTHON_PKG)' '$(TS_PYTHON_VERSION)' '$(TS_PYTHON_INTEGRITY)' $(PY_DIR)

$(TOML_STAMP): grammar/pins.mk grammar/fetch.sh
	$(Q)sh grammar/fetch.sh '$(TS_TOML_PKG)' '$(TS_TOML_VERSION)' '$(TS_TOML_INTEGRITY)' $(TOML_DIR)

# cJSON is a system library. Install it when we can; otherwise say exactly how.
$(SYSTEM_CJSON_H):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing libcjson-dev"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q libcjson-dev >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libcjson-dev; }; \
	else \
		echo "oomlint needs cJSON: as root, run  apt-get install -y libcjson-dev" >&2; exit 1; \
	fi
	@test -f $@

# The demo shows findings, not a build: the build runs silently (one line
# says it is happening; errors and warnings still show).
demo:
	@$(MAKE) --no-print-directory -q $(OUT)/oomlint 2>/dev/null || \
		echo "building $(OUT)/oomlint (the first build fetches the pinned tree-sitter sources; about a minute)"
	@$(MAKE) --no-print-directory -s $(OUT)/oomlint BUILD_QUIET=1
	@echo "+ $(OUT)/oomlint examples/"
	@$(OUT)/oomlint examples/; status=$$?; \
	 if [ $$status -eq 1 ]; then echo "(exit 1: findings reported, as expected for this example)"; exit 0; fi; \
	 exit $$status

include fuzz/fuzz.mk
# The release build's cJSON: Debian's source package (security patches
# applied), or CJSON_SRC=DIR holding cJSON.c and cJSON.h of that version.
$(DEPS)/cjson-$(CJSON_VERSION)/.integrity: grammar/pins.mk build-aux/fetch-cjson.sh
	sh build-aux/fetch-cjson.sh '$(CJSON_VERSION)' '$(CJSON_ORIG_SHA256)' $(DEPS)/cjson-$(CJSON_VERSION)

$(ZIG_DIR)/.integrity: grammar/pins.mk grammar/fetch.sh
	$(Q)sh grammar/fetch.sh '$(ZIG_PKG)' '$(ZIG_VERSION)' '$(ZIG_INTEGRITY)' $(ZIG_DIR)

$(OUT)/include/cjson/cJSON.h: $(if $(filter $(DEPS)/cjson-$(CJSON_VERSION),$(CJSON_SRC)),$(DEPS)/cjson-$(CJSON_VERSION)/.integrity)
	@mkdir -p $(dir $@)
	cp $(CJSON_SRC)/cJSON.h $@

$(OUT)/obj/vendor/cjson.o: $(OUT)/include/cjson/cJSON.h
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS_VENDOR) -c $(CJSON_SRC)/cJSON.c -o $@

# ---- man page, install ------------------------------------------------------------

# oomlint(1), generated from --help and the rule docs of the binary itself.
man: $(OUT)/oomlint.1

$(OUT)/oomlint.1: $(OUT)/oomlint build-aux/manpage.py
	$(call say,GEN,$@)
	$(Q)python3 build-aux/manpage.py --bin $(OUT)/oomlint > $@.tmp && mv $@.tmp $@

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
INSTALL ?= install

install: $(OUT)/oomlint $(OUT)/oomlint.1
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 755 $(OUT)/oomlint $(DESTDIR)$(BINDIR)/oomlint
	$(INSTALL) -m 644 $(OUT)/oomlint.1 $(DESTDIR)$(MANDIR)/man1/oomlint.1

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/oomlint $(DESTDIR)$(MANDIR)/man1/oomlint.1

# ---- release files ----------------------------------------------------------------

RELEASE_BIN := $(BUILD)/release/oomlint
RELEASE_MAN := $(BUILD)/release/oomlint.1
# third-party code inside the release binary, whose licenses ship with it
LICENSES := --license tree-sitter.LICENSE=$(TS_DIR)/LICENSE \
	--license tree-sitter-python.LICENSE=$(PY_DIR)/LICENSE \
	--license tree-sitter-toml.LICENSE=$(TOML_DIR)/LICENSE \
	--license cJSON.LICENSE=$(CJSON_SRC)/LICENSE

release:
	$(MAKE) RELEASE=1 SANITIZE= $(RELEASE_BIN) $(RELEASE_MAN)
	@python3 build-aux/release.py tag --bin $(RELEASE_BIN)

wheel: release
	python3 build-aux/release.py wheel --bin $(RELEASE_BIN) --man $(RELEASE_MAN) $(LICENSES) --out dist

dist: wheel
	python3 build-aux/release.py sdist --commit '$(OOMLINT_COMMIT)' --out dist
	python3 build-aux/release.py bindist --bin $(RELEASE_BIN) --man $(RELEASE_MAN) $(LICENSES) --out dist
	cd dist && rm -f SHA256SUMS && sha256sum oomlint-$(VERSION)* > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS
	@echo "dist/ holds:"; ls -l dist

# ---- other platforms ---------------------------------------------------------------
# Each builds with TARGET set (see the top of this file) in a make of its own.

CROSS_MACOS := x86_64-macos aarch64-macos
# the test groups that run under emulation: the unit tests, every fixture,
# fixes, the CLI, robustness, the supervisor, config, the server and safety
# (timing-bound, tool-bound and torch-bound groups stay on the native run)
CROSS_TEST_GROUPS ?= unit,fixture,fix,cli,robust,supervise,config,server,safety
# an LD_PRELOAD shim of this machine's libc cannot reach into a static or an
# emulated binary: the one test that edits a file through it stays native
CROSS_TEST_EXCLUDE := --exclude 'changed on disk after it was read'
XDIR = $(BUILD)/cross/$(1)
cross_build = $(MAKE) --no-print-directory TARGET=$(1) $(call XDIR,$(1))/oomlint $(call XDIR,$(1))/oomlint-unit

.PHONY: cross test-arm64 test-musl test-portable cross-debs dist-target

# macOS x86_64 and arm64 with zig cc: compiled with -Werror and linked; each
# binary's headers are checked (CPU, executable, only libSystem and libiconv).
# Running them needs a Mac (the release workflow's test step).
cross: $(ZIG_DIR)/.integrity
	$(Q)for t in $(CROSS_MACOS); do $(call cross_build,$$t) || exit 1; \
		python3 build-aux/binfmt.py $(call XDIR,$$t)/oomlint $$t || exit 1; \
		python3 build-aux/binfmt.py $(call XDIR,$$t)/oomlint-unit $$t >/dev/null || exit 1; done

# Debian's cross compilers, emulator and musl, installed when missing and we are root
cross-debs:
	$(Q)sh build-aux/need-debs.sh $(CROSS_DEBS)

# Linux arm64: Debian's cross gcc, the tests under qemu-user (binfmt is not
# needed: the binaries under test are small scripts that exec qemu-aarch64),
# in a root holding Debian's arm64 C library with its iconv modules
# (build-aux/fetch-arm64-libc.sh; the cross toolchain's copy has none).
ARM64_ROOT := $(BUILD)/cross/arm64-root
test-arm64: CROSS_DEBS := aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu \
	/usr/aarch64-linux-gnu/include/stdio.h:libc6-dev-arm64-cross qemu-aarch64:qemu-user
test-arm64: cross-debs
	$(Q)$(call cross_build,aarch64-linux-gnu)
	$(Q)python3 build-aux/binfmt.py $(call XDIR,aarch64-linux-gnu)/oomlint aarch64-linux-gnu
	$(Q)sh build-aux/fetch-arm64-libc.sh $(ARM64_ROOT)
	$(Q)for b in oomlint oomlint-unit; do \
		printf '#!/bin/sh\nexec qemu-aarch64 -L %s %s "$$@"\n' "$(abspath $(ARM64_ROOT))" \
			"$(abspath $(call XDIR,aarch64-linux-gnu))/$$b" > $(call XDIR,aarch64-linux-gnu)/qemu-$$b; \
		chmod +x $(call XDIR,aarch64-linux-gnu)/qemu-$$b; done
	$(call say,TEST,tests/run.py under qemu-aarch64)
	$(Q)python3 tests/run.py --bin $(call XDIR,aarch64-linux-gnu)/qemu-oomlint \
		--unit $(call XDIR,aarch64-linux-gnu)/qemu-oomlint-unit --groups $(CROSS_TEST_GROUPS) $(CROSS_TEST_EXCLUDE)

# musl: musl-gcc, fully static (no interpreter, no shared library), tested natively.
MUSL := $(shell uname -m)-linux-musl
# natively, the probe too (it needs python3-torch)
MUSL_TEST_GROUPS ?= $(CROSS_TEST_GROUPS),probe
test-musl: CROSS_DEBS := musl-gcc:musl-tools
test-musl: cross-debs
	$(Q)$(call cross_build,$(MUSL))
	$(Q)python3 build-aux/binfmt.py $(call XDIR,$(MUSL))/oomlint $(MUSL)
	$(call say,TEST,tests/run.py on the static musl build)
	$(Q)python3 tests/run.py --bin $(call XDIR,$(MUSL))/oomlint \
		--unit $(call XDIR,$(MUSL))/oomlint-unit --groups $(MUSL_TEST_GROUPS) $(CROSS_TEST_EXCLUDE)

# The wheel and tarball of one TARGET's binary (built as above), with the
# release build's man page (the same text on every platform):
#   make dist-target TARGET=aarch64-macos   -> dist/oomlint-VERSION-py3-none-macosx_11_0_arm64.whl
#                                              dist/oomlint-VERSION-aarch64-macos.tar.gz
dist-target:
	@test -n "$(TARGET)" || { echo "make dist-target needs TARGET=..." >&2; exit 1; }
	$(MAKE) --no-print-directory TARGET=$(TARGET) $(OUT)/oomlint
	$(MAKE) --no-print-directory TARGET= RELEASE=1 SANITIZE= $(RELEASE_MAN)
	python3 build-aux/release.py wheel --bin $(OUT)/oomlint --man $(RELEASE_MAN) $(LICENSES) --out dist
	python3 build-aux/release.py bindist --bin $(OUT)/oomlint --man $(RELEASE_MAN) $(LICENSES) --out dist

# The code paths macOS takes (self-pipe signals, parent-death pipe), built
# on Linux with OL_PORTABLE_PATHS and run through the tests that reach them.
test-portable:
	$(Q)$(call cross_build,x86_64-linux-portable)
	$(call say,TEST,tests/run.py on the OL_PORTABLE_PATHS build)
	$(Q)python3 tests/run.py --bin $(call XDIR,x86_64-linux-portable)/oomlint \
		--unit $(call XDIR,x86_64-linux-portable)/oomlint-unit --groups unit,supervise,probe,safety

include tests/tools.mk
include tests/editors.mk

# The fast suite runs two tests at a time (each starts its own processes);
# the slow one runs them in turn, since several of its tests bound memory.
TEST_JOBS ?= 2
SUITE ?= fast

.PHONY: check test-suite
test: $(OUT)/oomlint $(OUT)/oomlint-unit fast-test-tools
	$(call say,TEST,tests/run.py --suite fast)
	$(Q)python3 tests/run.py --suite fast -j $(TEST_JOBS) --bin $(OUT)/oomlint --unit $(OUT)/oomlint-unit

# One suite (SUITE=fast|slow|all) on this build; `make check` runs it with
# SUITE=slow here and SUITE=all on the sanitizer build.
test-suite: $(OUT)/oomlint $(OUT)/oomlint-unit test-tools editor-tools
	$(call say,TEST,tests/run.py --suite $(SUITE))
	$(Q)python3 tests/run.py --suite $(SUITE) -j $(if $(filter fast,$(SUITE)),$(TEST_JOBS),1) \
		--bin $(OUT)/oomlint --unit $(OUT)/oomlint-unit
ifeq ($(OUT),$(BUILD)/san)
	$(Q)$(MAKE) --no-print-directory test-server-clang
endif

FUZZ_SECONDS_CHECK ?= 60
check:
	$(Q)$(MAKE) --no-print-directory test-suite SUITE=slow
	$(Q)$(MAKE) --no-print-directory test-suite SUITE=all SANITIZE=1
	$(Q)$(MAKE) --no-print-directory valgrind
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SECONDS_CHECK)

# `make test SANITIZE=1` runs the language server's wire tests on a clang
# build too (build/san/clang/): clang's UBSan checks what GCC's does not (a
# null pointer plus zero, for one). clang comes from Debian, installed
# with the fuzzers' (fuzz/fuzz.mk) when missing and we are root.
CLANG_SAN_BIN := $(BUILD)/san/clang/oomlint
.PHONY: test-server-clang
test-server-clang: $(FUZZ_CLANG_STAMP)
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 CC=$(FUZZ_CC) $(CLANG_SAN_BIN)
	$(call say,TEST,tests/run.py -k server: on $(CLANG_SAN_BIN))
	$(Q)python3 tests/run.py --bin $(CLANG_SAN_BIN) -k "server:"

# Memory errors and definite leaks in the CLI, over every fixture (any
# error fails). valgrind is installed when missing and we are root.
valgrind: $(OUT)/oomlint
	@command -v valgrind >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing valgrind"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null 2>&1 || \
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind; }; \
		else \
			echo "make valgrind needs valgrind: as root, run  apt-get install -y valgrind" >&2; exit 1; \
		fi; }
	python3 tests/valgrind.py --bin $(OUT)/oomlint

# Regenerate the rule pages in docs/rules/ and the README's rule table from
# the docs compiled into the binary (a test fails when they drift apart).
docs: $(OUT)/oomlint
	@mkdir -p docs/rules
	@for code in $$($(OUT)/oomlint rules --format json | python3 -c 'import json,sys; print(" ".join(r["code"] for r in json.load(sys.stdin)))'); do \
		$(OUT)/oomlint rule $$code --markdown > docs/rules/$$code.md; done
	@echo "docs/rules/ regenerated"
	@python3 scripts/rule_table.py --bin $(OUT)/oomlint

.PHONY: snapshots rule
# Every fixture's snapshot (fixtures/**/*.snap): rewritten from what this
# build reports, the ones whose fixture is gone removed; says how many changed.
snapshots: $(OUT)/oomlint
	$(Q)python3 tests/snapshots.py --bin $(OUT)/oomlint

# A new rule's skeleton (scripts/add_rule.py says what it writes). Each value
# reaches the script as one word, whatever quotes it holds.
shell_word = '$(subst ','\'',$(1))'
rule:
	@test -n "$(CODE)" && test -n "$(NAME)" || \
		{ echo "usage: make rule CODE=OOM706 NAME=some-rule-name [SEVERITY=warning] [SUMMARY='...'] [PATTERN=fn]" >&2; exit 2; }
	$(Q)python3 scripts/add_rule.py $(call shell_word,$(CODE)) $(call shell_word,$(NAME)) \
		$(if $(SEVERITY),--severity $(call shell_word,$(SEVERITY))) \
		$(if $(SUMMARY),--summary $(call shell_word,$(SUMMARY))) $(if $(PATTERN),--pattern $(call shell_word,$(PATTERN)))

golden: $(OUT)/oomlint
	@mkdir -p tests/golden
	@$(OUT)/oomlint --color never examples/train.py > tests/golden/demo.txt; test $$? -le 1
	@echo "tests/golden/demo.txt regenerated"

# The benchmark's baseline: bench/parse.c linked with the runtime and grammar
# compiled plain (OPT alone: no profile feedback, tree-sitter's own malloc),
# whatever the oomlint build uses. ast-grep, the comparison, is pinned by
# bench/tools/package.json and its lockfile (integrity hashes included) and
# installed with `npm ci`, scripts off: its platform package ships the binary.
BENCH_DIR    := $(BUILD)/bench
BENCH_TOOLS  := $(BENCH_DIR)/tools
BENCH_PINS   := bench/tools/package.json bench/tools/package-lock.json
BENCH_PARSE_SRC := bench/parse.c $(TS_DIR)/vendor/tree-sitter/lib/src/lib.c $(PY_DIR)/src/parser.c $(PY_DIR)/src/scanner.c

$(BENCH_DIR)/parse: $(BENCH_PARSE_SRC) | $(STAMPS)
	@mkdir -p $(BENCH_DIR)/obj
	$(call say,CC,bench/parse.c and the plain parser)
	$(Q)$(CC) $(CFLAGS_OURS) -Ianalyzer -c bench/parse.c -o $(BENCH_DIR)/obj/parse.o
	$(Q)$(CC) $(CFLAGS_VENDOR) -I$(TS_DIR)/vendor/tree-sitter/lib/include -I$(TS_DIR)/vendor/tree-sitter/lib/src \
		-c $(TS_DIR)/vendor/tree-sitter/lib/src/lib.c -o $(BENCH_DIR)/obj/tree_sitter.o
	$(Q)$(CC) $(CFLAGS_VENDOR) -I$(PY_DIR)/src -c $(PY_DIR)/src/parser.c -o $(BENCH_DIR)/obj/python_parser.o
	$(Q)$(CC) $(CFLAGS_VENDOR) -I$(PY_DIR)/src -c $(PY_DIR)/src/scanner.c -o $(BENCH_DIR)/obj/python_scanner.o
	$(Q)$(CC) -o $@ $(BENCH_DIR)/obj/parse.o $(BENCH_DIR)/obj/tree_sitter.o $(BENCH_DIR)/obj/python_parser.o \
		$(BENCH_DIR)/obj/python_scanner.o -lpthread

# The same program on oomlint's own parser objects (profile-guided when PGO
# is on): tells the parser's build apart from everything else oomlint does.
$(BENCH_DIR)/parse-oomlint: $(BENCH_DIR)/parse $(OUT)/obj/vendor/parser.o
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $(BENCH_DIR)/obj/parse.o $(OUT)/obj/vendor/parser.o -lpthread

$(BENCH_TOOLS)/.installed: $(BENCH_PINS)
	@mkdir -p $(BENCH_TOOLS)
	@command -v npm >/dev/null 2>&1 || { echo "make bench needs npm (apt-get install npm)" >&2; exit 1; }
	$(Q)cp $(BENCH_PINS) $(BENCH_TOOLS)/
	$(Q)cd $(BENCH_TOOLS) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

bench: $(OUT)/oomlint $(BENCH_DIR)/parse $(BENCH_DIR)/parse-oomlint $(BENCH_TOOLS)/.installed
	$(Q)python3 bench/run.py --bin $(OUT)/oomlint --parse $(BENCH_DIR)/parse \
		--parse-oomlint $(BENCH_DIR)/parse-oomlint --parser-build '$(PARSER_CC) $(PARSER_PGO_FLAGS)' $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/san $(BUILD)/release $(BUILD)/oomlint $(BUILD)/oomlint-unit $(BUILD)/oomlint.1

distclean:
	rm -rf $(BUILD) dist

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
