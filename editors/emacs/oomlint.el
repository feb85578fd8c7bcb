;;; oomlint.el --- oomlint's language server for Emacs, through eglot -*- lexical-binding: t -*-

;; oomlint finds the PyTorch training code that runs GPUs out of memory.
;; This registers `oomlint server' with eglot (built into Emacs 29; the
;; `eglot' package, e.g. Debian's elpa-eglot, on Emacs 28) for Python
;; buffers.  eglot shows the findings through flymake, offers the quick
;; fixes, "Disable OOMxxx for this line" and source.fixAll.oomlint with
;; `eglot-code-actions', and the rule's page with `eldoc' on a finding.
;;
;;   (add-to-list 'load-path "/path/to/oomlint/editors/emacs")
;;   (require 'oomlint)
;;   (add-hook 'python-mode-hook #'eglot-ensure)    ; python-ts-mode-hook too
;;
;; eglot runs one server per major mode and project, so oomlint takes the
;; place of another Python server (pyright, pylsp) in the buffers it serves;
;; see editors/emacs/README.md for using it next to one.

;;; Code:

(require 'eglot)

(defgroup oomlint nil
  "oomlint, the PyTorch out-of-memory linter."
  :group 'tools)

(defcustom oomlint-executable "oomlint"
  "The oomlint binary."
  :type 'string)

(defcustom oomlint-server-args nil
  "Extra arguments for `oomlint server', e.g. (\"--config\" \"ci/oomlint.toml\")."
  :type '(repeat string))

(defcustom oomlint-settings nil
  "Settings sent to the server: a plist such as
\(:ignore [\"OOM501\"] :unsafeFixes t :failOn \"warning\").
Keys: :select :extendSelect :ignore (vectors of codes or prefixes),
:unsafeFixes (fix-all applies unsafe fixes too), :failOn (\"error\",
\"warning\" or \"info\": the lowest severity shown)."
  :type 'plist)

(defun oomlint--contact (&optional _interactive)
  "The command line eglot starts."
  `(,oomlint-executable "server" ,@oomlint-server-args
                        :initializationOptions ,(or oomlint-settings '(:failOn "info"))))

(dolist (mode '(python-mode python-ts-mode))
  (setq eglot-server-programs (assq-delete-all mode eglot-server-programs)))
(add-to-list 'eglot-server-programs '((python-mode python-ts-mode) . oomlint--contact))

(provide 'oomlint)
;;; oomlint.el ends here
