# fuzz/fuzz.mk - libFuzzer targets, included by the Makefile.
#
#   make fuzz                  build the fuzzers and run each for FUZZ_SECONDS (60)
#   make fuzz FUZZ_SECONDS=3600 FUZZ_JOBS=2
#   make fuzz-build            only build build/fuzz/{lint,config,explain}_fuzzer
#
# The fuzzers are built with Debian's clang and libFuzzer (clang, and
# libclang-rt-14-dev for the runtime; installed here when missing and we are
# root) with ASan + UBSan, and with OL_STRICT_NODES, so reading a node the
# tree does not have is a crash the fuzzer reports. The seed corpus is built
# at run time from fixtures/, examples/ and tests/crashers/ (plus notebooks
# and pyproject.toml files made from them, see fuzz/seeds.py); the corpus the
# fuzzer grows lives under build/fuzz/ and is never committed. A crash, a
# leak or a hang stops the run with the input saved in build/fuzz/artifacts/;
# turn it into a file under tests/crashers/.

FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -DOL_STRICT_NODES $(WARN) \
	-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I$(TS_DIR)/vendor/tree-sitter/lib/include
FUZZ_VENDOR_CFLAGS := -std=gnu11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -w -D_DEFAULT_SOURCE
# with the probe's generated C (its Python files and committed figures, see the Makefile)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/gen/probe_embed.o \
	$(FUZZ_DIR)/obj/gen/probe_results.o
FUZZ_VENDOR_OBJ := $(FUZZ_DIR)/obj/vendor/parser.o $(FUZZ_DIR)/obj/vendor/toml_parser.o \
	$(FUZZ_DIR)/obj/vendor/toml_scanner.o
FUZZ_CLANG_STAMP := $(FUZZ_DIR)/.clang

.PHONY: fuzz fuzz-build
.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_VENDOR_OBJ) $(FUZZ_DIR)/obj/fuzz/lint_fuzzer.o $(FUZZ_DIR)/obj/fuzz/config_fuzzer.o \
	$(FUZZ_DIR)/obj/fuzz/explain_fuzzer.o

fuzz-build: $(FUZZ_DIR)/lint_fuzzer $(FUZZ_DIR)/config_fuzzer $(FUZZ_DIR)/explain_fuzzer

fuzz: fuzz-build
	python3 fuzz/run.py --dir $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS)

# clang and libFuzzer's runtime, from Debian; checked by building a tiny fuzzer
$(FUZZ_CLANG_STAMP):
	@mkdir -p $(FUZZ_DIR)
	@if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' | \
		$(FUZZ_CC) -x c -fsanitize=fuzzer,address -o $(FUZZ_DIR)/.probe - >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing clang and libclang-rt-14-dev"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-14-dev >/dev/null 2>&1 || \
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-14-dev; }; \
		else \
			echo "the fuzzers need clang with libFuzzer: run  sudo apt-get install -y clang libclang-rt-14-dev" >&2; exit 1; \
		fi; \
	fi
	@rm -f $(FUZZ_DIR)/.probe
	@touch $@

# syntax.c reads the pinned runtime's subtrees directly (see flatten there)
$(FUZZ_DIR)/obj/analyzer/syntax.o: FUZZ_CFLAGS += -I$(TS_DIR)/vendor/tree-sitter/lib/src

$(FUZZ_DIR)/obj/%.o: %.c | $(STAMPS) $(CJSON_H) $(FUZZ_CLANG_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(call dir_inc,$<) -c $< -o $@

$(FUZZ_DIR)/obj/gen/%.o: $(GEN)/%.c | $(STAMPS) $(CJSON_H) $(FUZZ_CLANG_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(INC_build) -c $< -o $@

# the runtime and the Python grammar as oomlint compiles them: one unit, with
# the runtime's parser.c as grammar/edit_runtime.py writes it (the Makefile)
$(FUZZ_DIR)/obj/vendor/parser.o: $(PARSER_SRC) $(TS_PARSER_EDITED) $(TS_STAMP) $(PY_STAMP) | $(FUZZ_CLANG_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_VENDOR_CFLAGS) $(SCANNER_ALLOC) $(PARSER_INC) -c $(PARSER_SRC) -o $@

$(FUZZ_DIR)/obj/vendor/toml_%.o: $(TOML_STAMP) | $(FUZZ_CLANG_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_VENDOR_CFLAGS) -I$(TOML_DIR)/src -c $(TOML_DIR)/src/$*.c -o $@

$(FUZZ_DIR)/%_fuzzer: $(FUZZ_DIR)/obj/fuzz/%_fuzzer.o $(FUZZ_LIB_OBJ) $(FUZZ_VENDOR_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
