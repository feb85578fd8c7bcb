# tests/editors.mk - the language clients `make test` drives `oomlint server`
# with, and `make editors` (the VS Code extension's .vsix). Included by the
# Makefile.
#
# npm packages are pinned by their lockfiles (exact versions and integrity
# hashes, transitive packages too) and installed with `npm ci`, scripts off:
#   tests/lsp/         vscode-languageserver-protocol + vscode-jsonrpc, the
#                      libraries under VS Code's client  -> build/tools/lsp
#   editors/vscode/    vscode-languageclient (shipped in the .vsix) and
#                      @vscode/vsce (packs it, offline)   -> build/editors/vscode
# Debian packages are installed with apt-get when missing and we are root:
#   neovim (0.7 in bookworm), vim + vim-ale, emacs-nox + elpa-eglot.

LSP_TOOLS_DIR   := $(BUILD)/tools/lsp
LSP_TOOLS_STAMP := $(LSP_TOOLS_DIR)/.installed
LSP_TOOLS_PINS  := tests/lsp/package.json tests/lsp/package-lock.json
VSCODE_DIR      := $(BUILD)/editors/vscode
VSCODE_STAMP    := $(VSCODE_DIR)/.installed
VSCODE_PINS     := editors/vscode/package.json editors/vscode/package-lock.json
VSCODE_SRC      := editors/vscode/extension.js editors/vscode/server-path.js editors/vscode/README.md \
	editors/vscode/.vscodeignore LICENSE
VSIX            := $(BUILD)/oomlint-vscode.vsix

.PHONY: editors editor-tools editor-packages

editors: $(VSIX)

editor-tools: $(LSP_TOOLS_STAMP) $(VSCODE_STAMP) editor-packages

$(LSP_TOOLS_STAMP): $(LSP_TOOLS_PINS)
	@command -v npm >/dev/null 2>&1 || { echo "the tests need npm (apt-get install npm)" >&2; exit 1; }
	@mkdir -p $(LSP_TOOLS_DIR)
	cp $(LSP_TOOLS_PINS) $(LSP_TOOLS_DIR)/
	cd $(LSP_TOOLS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

$(VSCODE_STAMP): $(VSCODE_PINS)
	@command -v npm >/dev/null 2>&1 || { echo "the extension needs npm (apt-get install npm)" >&2; exit 1; }
	@rm -rf $(VSCODE_DIR) && mkdir -p $(VSCODE_DIR)
	cp $(VSCODE_PINS) $(VSCODE_DIR)/
	cd $(VSCODE_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# A platform-specific .vsix (as Ruff's extension ships them): the extension
# with that platform's oomlint in bin/, which server-path.js runs when the
# Python environment and PATH have none.
#   make vsix-platform VSIX_TARGET=linux-arm64 VSIX_BIN=path/to/oomlint
#   make vsix-platform VSIX_TARGET=darwin-arm64 VSIX_FROM=dist   (a release tarball)
# -> build/oomlint-vscode-VSIX_TARGET.vsix
VSIX_RELEASE_linux-x64    := x86_64-linux
VSIX_RELEASE_linux-arm64  := aarch64-linux
VSIX_RELEASE_alpine-x64   := x86_64-linux-musl
VSIX_RELEASE_alpine-arm64 := aarch64-linux-musl
VSIX_RELEASE_darwin-x64   := x86_64-macos
VSIX_RELEASE_darwin-arm64 := aarch64-macos
VSIX_TARGET_DIR = $(BUILD)/editors/vscode-$(VSIX_TARGET)

.PHONY: vsix-platform
vsix-platform: $(VSCODE_STAMP) $(VSCODE_SRC)
	@test -n "$(VSIX_RELEASE_$(VSIX_TARGET))" || { echo "VSIX_TARGET: one of linux-x64 linux-arm64" \
		"alpine-x64 alpine-arm64 darwin-x64 darwin-arm64" >&2; exit 2; }
	@test -n "$(VSIX_BIN)$(VSIX_FROM)" || { echo "make vsix-platform needs VSIX_BIN or VSIX_FROM" >&2; exit 2; }
	rm -rf $(VSIX_TARGET_DIR) && cp -a $(VSCODE_DIR) $(VSIX_TARGET_DIR)
	cp $(VSCODE_SRC) THIRD_PARTY_NOTICES $(VSIX_TARGET_DIR)/
	mkdir -p $(VSIX_TARGET_DIR)/bin
	$(if $(VSIX_BIN),install -m 755 $(VSIX_BIN) $(VSIX_TARGET_DIR)/bin/oomlint,\
		tar -xzf $(VSIX_FROM)/oomlint-$(VERSION)-$(VSIX_RELEASE_$(VSIX_TARGET)).tar.gz -O \
		oomlint-$(VERSION)-$(VSIX_RELEASE_$(VSIX_TARGET))/bin/oomlint > $(VSIX_TARGET_DIR)/bin/oomlint && \
		chmod 755 $(VSIX_TARGET_DIR)/bin/oomlint)
	cd $(VSIX_TARGET_DIR) && ./node_modules/.bin/vsce package --target $(VSIX_TARGET) --skip-license \
		--out $(abspath $(BUILD))/oomlint-vscode-$(VSIX_TARGET).vsix

$(VSIX): $(VSCODE_STAMP) $(VSCODE_SRC)
	cp $(VSCODE_SRC) $(VSCODE_DIR)/
	cd $(VSCODE_DIR) && ./node_modules/.bin/vsce package --skip-license --out $(abspath $(VSIX))

# Checks only; installs what is missing. Nothing is reinstalled.
editor-packages:
	@missing=""; \
	command -v nvim >/dev/null 2>&1 || missing="$$missing neovim"; \
	command -v vim >/dev/null 2>&1 || missing="$$missing vim"; \
	test -d /usr/share/vim-ale || test -d /usr/share/vim/addons/autoload/ale || missing="$$missing vim-ale"; \
	command -v emacs >/dev/null 2>&1 || missing="$$missing emacs-nox"; \
	ls -d /usr/share/emacs/site-lisp/elpa-src/eglot-* >/dev/null 2>&1 || missing="$$missing elpa-eglot"; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; }; \
	else \
		echo "the editor tests need$$missing: as root, run  apt-get install -y$$missing" >&2; exit 1; \
	fi
