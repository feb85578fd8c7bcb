# oomlint build.
#
#   make            build build/oomlint (fetches pinned sources on first run)
#   make demo       build, then lint the bundled example training script
#   make test       build, then run every test (unit, fixtures, CLI, robustness, and
#                   the CI consumers: SARIF validators, pre-commit, the Action; the
#                   tools they need are installed first, see tests/tools.mk)
#   make test SANITIZE=1   the same suite against an ASan+UBSan build (build/san/)
#   make PGO=1      build with the parser optimised from a profile (clang; see
#                   grammar/pgo.mk: the default, PGO=auto, does so when clang is there)
#   make bench      build, then print throughput and latency next to a bare parse
#                   and ast-grep, on Debian's python3-torch and CPython's stdlib
#                   (fetched with apt-get download; see bench/run.py)
#   make clean      remove build outputs but keep fetched sources
#   make distclean  remove build/ entirely
#
# Third-party sources (the tree-sitter runtime and grammars) are fetched with
# `npm pack`, checked against the pins in grammar/pins.mk and cached under
# build/deps. cJSON comes from Debian's libcjson-dev, installed here when it is
# missing and we are root.

include grammar/pins.mk

BUILD := build
DEPS  := $(BUILD)/deps

ifeq ($(SANITIZE),1)
OUT      := $(BUILD)/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUT      := $(BUILD)
SANFLAGS :=
endif

CC ?= cc
OPT ?= -O2 -g

TS_DIR   := $(DEPS)/tree-sitter-$(TS_RUNTIME_VERSION)
PY_DIR   := $(DEPS)/tree-sitter-python-$(TS_PYTHON_VERSION)
TOML_DIR := $(DEPS)/tree-sitter-toml-$(TS_TOML_VERSION)
TS_STAMP   := $(TS_DIR)/.integrity
PY_STAMP   := $(PY_DIR)/.integrity
TOML_STAMP := $(TOML_DIR)/.integrity
STAMPS := $(TS_STAMP) $(PY_STAMP) $(TOML_STAMP)

CJSON_H := /usr/include/cjson/cJSON.h

WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CFLAGS_OURS := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-Ianalyzer -Irules -I$(TS_DIR)/vendor/tree-sitter/lib/include -MMD -MP
# Third-party code is built with its own expectations, not our warning set.
CFLAGS_VENDOR := -std=gnu11 $(OPT) $(SANFLAGS) -w -D_DEFAULT_SOURCE
LDLIBS := -lcjson -lpthread

ANALYZER_SRC := $(sort $(wildcard analyzer/*.c))
RULES_SRC    := $(sort $(wildcard rules/*.c))
LIB_SRC      := $(filter-out analyzer/main.c,$(ANALYZER_SRC)) $(RULES_SRC)
LIB_OBJ      := $(LIB_SRC:%.c=$(OUT)/obj/%.o)
MAIN_OBJ     := $(OUT)/obj/analyzer/main.o
UNIT_OBJ     := $(OUT)/obj/tests/unit.o
VENDOR_OBJ   := $(OUT)/obj/vendor/tree_sitter.o $(OUT)/obj/vendor/python_parser.o \
	$(OUT)/obj/vendor/python_scanner.o $(OUT)/obj/vendor/toml_parser.o $(OUT)/obj/vendor/toml_scanner.o

.PHONY: all demo test bench docs golden clean distclean fetch
.DELETE_ON_ERROR:

all: $(OUT)/oomlint

fetch: $(STAMPS)

# PARSER_CC, PARSER_PGO_FLAGS, PARSER_PROFILE, PARSER_MODE: how the runtime and
# the Python grammar are compiled (profile-guided with clang when PGO allows)
include grammar/pgo.mk

$(OUT)/oomlint: $(MAIN_OBJ) $(LIB_OBJ) $(VENDOR_OBJ)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/oomlint-unit: $(UNIT_OBJ) $(LIB_OBJ) $(VENDOR_OBJ)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS)

# syntax.c reads the pinned runtime's subtrees directly (see flatten there)
$(OUT)/obj/analyzer/syntax.o: CFLAGS_OURS += -I$(TS_DIR)/vendor/tree-sitter/lib/src

$(OUT)/obj/%.o: %.c | $(STAMPS) $(CJSON_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_OURS) -c $< -o $@

$(OUT)/obj/vendor/tree_sitter.o: $(TS_STAMP) $(PARSER_PROFILE) $(PARSER_MODE)
	@mkdir -p $(dir $@)
	$(PARSER_CC) $(CFLAGS_VENDOR) $(PARSER_PGO_FLAGS) -I$(TS_DIR)/vendor/tree-sitter/lib/include \
		-I$(TS_DIR)/vendor/tree-sitter/lib/src -c $(TS_DIR)/vendor/tree-sitter/lib/src/lib.c -o $@

$(OUT)/obj/vendor/python_parser.o: $(PY_STAMP) $(PARSER_PROFILE) $(PARSER_MODE)
	@mkdir -p $(dir $@)
	$(PARSER_CC) $(CFLAGS_VENDOR) $(PARSER_PGO_FLAGS) -I$(PY_DIR)/src -c $(PY_DIR)/src/parser.c -o $@

$(OUT)/obj/vendor/python_scanner.o: $(PY_STAMP) $(PARSER_PROFILE) $(PARSER_MODE)
	@mkdir -p $(dir $@)
	$(PARSER_CC) $(CFLAGS_VENDOR) $(PARSER_PGO_FLAGS) -I$(PY_DIR)/src -c $(PY_DIR)/src/scanner.c -o $@

$(OUT)/obj/vendor/toml_parser.o: $(TOML_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_VENDOR) -I$(TOML_DIR)/src -c $(TOML_DIR)/src/parser.c -o $@

$(OUT)/obj/vendor/toml_scanner.o: $(TOML_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_VENDOR) -I$(TOML_DIR)/src -c $(TOML_DIR)/src/scanner.c -o $@

$(TS_STAMP): grammar/pins.mk grammar/fetch.sh
	sh grammar/fetch.sh '$(TS_RUNTIME_PKG)' '$(TS_RUNTIME_VERSION)' '$(TS_RUNTIME_INTEGRITY)' $(TS_DIR)

$(PY_STAMP): grammar/pins.mk grammar/fetch.sh
	sh grammar/fetch.sh '$(TS_PYTHON_PKG)' '$(TS_PYTHON_VERSION)' '$(TS_PYTHON_INTEGRITY)' $(PY_DIR)

$(TOML_STAMP): grammar/pins.mk grammar/fetch.sh
	sh grammar/fetch.sh '$(TS_TOML_PKG)' '$(TS_TOML_VERSION)' '$(TS_TOML_INTEGRITY)' $(TOML_DIR)

# cJSON is a system library. Install it when we can; otherwise say exactly how.
$(CJSON_H):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing libcjson-dev"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q libcjson-dev >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libcjson-dev; }; \
	else \
		echo "oomlint needs cJSON: run  sudo apt-get install -y libcjson-dev" >&2; exit 1; \
	fi
	@test -f $@

demo: $(OUT)/oomlint
	@echo "+ $(OUT)/oomlint examples/"
	@$(OUT)/oomlint examples/; status=$$?; \
	 if [ $$status -eq 1 ]; then echo "(exit 1: findings reported, as expected for this example)"; exit 0; fi; \
	 exit $$status

include tests/tools.mk

test: $(OUT)/oomlint $(OUT)/oomlint-unit test-tools
	python3 tests/run.py --bin $(OUT)/oomlint --unit $(OUT)/oomlint-unit

# Regenerate the rule pages in docs/rules/ from the docs compiled into the binary
# (a test fails when they drift apart), and the text-output snapshot.
docs: $(OUT)/oomlint
	@mkdir -p docs/rules
	@for code in $$($(OUT)/oomlint rules --format json | python3 -c 'import json,sys; print(" ".join(r["code"] for r in json.load(sys.stdin)))'); do \
		$(OUT)/oomlint rule $$code --markdown > docs/rules/$$code.md; done
	@echo "docs/rules/ regenerated"

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
	$(CC) $(CFLAGS_OURS) -c bench/parse.c -o $(BENCH_DIR)/obj/parse.o
	$(CC) $(CFLAGS_VENDOR) -I$(TS_DIR)/vendor/tree-sitter/lib/include -I$(TS_DIR)/vendor/tree-sitter/lib/src \
		-c $(TS_DIR)/vendor/tree-sitter/lib/src/lib.c -o $(BENCH_DIR)/obj/tree_sitter.o
	$(CC) $(CFLAGS_VENDOR) -I$(PY_DIR)/src -c $(PY_DIR)/src/parser.c -o $(BENCH_DIR)/obj/python_parser.o
	$(CC) $(CFLAGS_VENDOR) -I$(PY_DIR)/src -c $(PY_DIR)/src/scanner.c -o $(BENCH_DIR)/obj/python_scanner.o
	$(CC) -o $@ $(BENCH_DIR)/obj/parse.o $(BENCH_DIR)/obj/tree_sitter.o $(BENCH_DIR)/obj/python_parser.o \
		$(BENCH_DIR)/obj/python_scanner.o -lpthread

# The same program on oomlint's own parser objects (profile-guided when PGO
# is on): tells the parser's build apart from everything else oomlint does.
$(BENCH_DIR)/parse-oomlint: $(BENCH_DIR)/parse $(OUT)/obj/vendor/tree_sitter.o $(OUT)/obj/vendor/python_parser.o \
		$(OUT)/obj/vendor/python_scanner.o
	$(CC) -o $@ $(BENCH_DIR)/obj/parse.o $(OUT)/obj/vendor/tree_sitter.o $(OUT)/obj/vendor/python_parser.o \
		$(OUT)/obj/vendor/python_scanner.o -lpthread

$(BENCH_TOOLS)/.installed: $(BENCH_PINS)
	@mkdir -p $(BENCH_TOOLS)
	@command -v npm >/dev/null 2>&1 || { echo "make bench needs npm (apt-get install npm)" >&2; exit 1; }
	cp $(BENCH_PINS) $(BENCH_TOOLS)/
	cd $(BENCH_TOOLS) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

bench: $(OUT)/oomlint $(BENCH_DIR)/parse $(BENCH_DIR)/parse-oomlint $(BENCH_TOOLS)/.installed
	python3 bench/run.py --bin $(OUT)/oomlint --parse $(BENCH_DIR)/parse \
		--parse-oomlint $(BENCH_DIR)/parse-oomlint --parser-build '$(PARSER_CC) $(PARSER_PGO_FLAGS)' $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)/obj $(BUILD)/san $(BUILD)/oomlint $(BUILD)/oomlint-unit

distclean:
	rm -rf $(BUILD)

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
