# grammar/pgo.mk - profile-guided optimisation of the parser, included by the
# Makefile.
#
# Parsing (the tree-sitter runtime and the Python grammar) is most of what
# oomlint spends. The two are compiled as one translation unit
# (grammar/parser_unity.c), built once with clang's IR instrumentation,
# linked with oomlint's own parse path (grammar/train.c: the arena, the
# parse, the walk that flattens the tree), run over the repository's own
# Python (offline, deterministic), and built again with the profile. The
# profile also says which function each of the runtime's function pointers
# holds (the lexer's advance, mark_end and eof, the grammar's lex
# functions), and clang calls those directly, inlined where it pays: what
# one translation unit makes possible. Measured on the bench corpus: the
# profile parses about 15% faster than a plain build, the direct calls 3%
# fewer instructions on top (docs/performance.md). GCC's -fprofile-use gave
# nothing measurable on the same code, which is why this step uses clang
# whatever CC is (the C ABI is the same).
#
#   PGO=auto  (default) use it when clang and llvm-profdata are installed,
#             otherwise build the parser plainly with CC
#   PGO=1     require it; as root on Debian, installs clang and llvm when
#             missing. Release builds (make dist, make wheel) should use this.
#   PGO=0     never
#
# Sanitizer builds never use it. The profile (build/pgo/) is made once and
# follows only the pinned runtime and grammar and train.c, not edits to the
# rest of oomlint, so everyday builds do not retrain. Which way the parser
# was built is recorded in $(OUT)/obj/vendor/parser-build: switching PGO
# rebuilds that object.

PGO ?= auto
PGO_CC ?= clang
ifeq ($(SANITIZE),1)
override PGO := 0
endif

PGO_DIR   := $(BUILD)/pgo
PGO_MAJOR := $(shell $(PGO_CC) -dumpversion 2>/dev/null | cut -d. -f1)
# llvm-profdata must come from clang's own LLVM release
PROFDATA  ?= $(or $(shell command -v llvm-profdata-$(PGO_MAJOR) 2>/dev/null || \
	command -v llvm-profdata 2>/dev/null),llvm-profdata)

ifeq ($(PGO),auto)
PGO_ON := $(if $(and $(PGO_MAJOR),$(shell command -v $(PROFDATA) 2>/dev/null)),1,0)
else
PGO_ON := $(PGO)
endif

ifeq ($(PGO_ON),1)
PARSER_CC        := $(PGO_CC)
PARSER_PROFILE   := $(PGO_DIR)/python.profdata
# DWARF 4: valgrind 3.19 (Debian 12) cannot read clang 14's DWARF 5
PARSER_PGO_FLAGS := -fprofile-use=$(PARSER_PROFILE) $(if $(findstring -g,$(OPT)),-gdwarf-4)
else
PARSER_CC        := $(CC)
PARSER_PROFILE   :=
PARSER_PGO_FLAGS :=
endif
PARSER_MODE := $(OUT)/obj/vendor/parser-build

# IR instrumentation (-fprofile-generate, which also records the targets of
# indirect calls) counts the code as the optimiser first sees it, so the
# instrumented build is optimised as the final one is (OPT's level)
PGO_GEN_OPT := $(or $(lastword $(filter -O%,$(OPT))),-O2) -g0
PGO_GEN_OBJ := $(PGO_DIR)/parser.o
# oomlint's parse path, as built; order-only below, so edits do not retrain
PGO_TRAIN_OURS := $(OUT)/obj/analyzer/syntax.o $(OUT)/obj/analyzer/syntax_gaps.o $(OUT)/obj/analyzer/parse_arena.o \
	$(OUT)/obj/analyzer/util.o $(OUT)/obj/analyzer/source.o
PGO_CORPUS_DIRS := fixtures examples tests bench scripts

.PHONY: pgo-tools parser-mode-check

$(PARSER_MODE): parser-mode-check
	@mkdir -p $(dir $@)
	@echo '$(PARSER_CC) $(PARSER_PGO_FLAGS)' | cmp -s - $@ || echo '$(PARSER_CC) $(PARSER_PGO_FLAGS)' > $@

parser-mode-check:

pgo-tools:
	@if command -v $(PGO_CC) >/dev/null 2>&1 && command -v $(PROFDATA) >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing clang and llvm for PGO=1"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang llvm >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang llvm; }; \
	else \
		echo "PGO=1 needs clang and llvm-profdata: run  sudo apt-get install -y clang llvm" >&2; exit 1; \
	fi

$(PGO_DIR)/parser.o: $(PARSER_SRC) $(TS_PARSER_EDITED) $(TS_STAMP) $(PY_STAMP) | pgo-tools
	@mkdir -p $(dir $@)
	$(call say,CC,tree-sitter runtime and tree-sitter-python (instrumented for PGO))
	$(Q)$(PGO_CC) $(CFLAGS_VENDOR) $(SCANNER_ALLOC) $(PGO_GEN_OPT) -fprofile-generate $(PARSER_INC) -c $(PARSER_SRC) -o $@

$(PGO_DIR)/train: grammar/train.c $(PGO_GEN_OBJ) | $(PGO_TRAIN_OURS)
	$(call say,LD,$@)
	$(Q)$(PGO_CC) -std=c11 $(OPT) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ianalyzer \
		-I$(TS_DIR)/vendor/tree-sitter/lib/include -fprofile-generate -o $@ grammar/train.c \
		$(PGO_TRAIN_OURS) $(PGO_GEN_OBJ) -lpthread

$(PGO_DIR)/python.profdata: $(PGO_DIR)/train
	@rm -f $(PGO_DIR)/*.profraw
	$(call say,PGO,$@ (a profile of the parser on our own Python files))
	$(Q)find $(PGO_CORPUS_DIRS) -name '*.py' -type f 2>/dev/null | LC_ALL=C sort | \
		LLVM_PROFILE_FILE='$(PGO_DIR)/train-%p.profraw' xargs $(PGO_DIR)/train $(if $(filter 1,$(V)),,>/dev/null)
	$(Q)$(PROFDATA) merge -o $@ $(PGO_DIR)/*.profraw
	@rm -f $(PGO_DIR)/*.profraw
