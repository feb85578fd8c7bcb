;;; emacs_test.el --- Emacs with eglot loads editors/emacs, starts `oomlint server' and gets findings  -*- lexical-binding: t -*-
;; emacs --batch -l tests/editors/emacs_test.el
;; Environment: OOMLINT_BIN, OOMLINT_EDITORS, OOMLINT_FILE, OOMLINT_RESULT.
;; Writes one "CODE:LINE" line per diagnostic flymake holds, then "PASS" (or
;; "FAIL: why") to OOMLINT_RESULT.
(require 'package)
(setq package-directory-list (append package-directory-list '("/usr/share/emacs/site-lisp/elpa")))
(package-initialize)
(add-to-list 'load-path (expand-file-name "emacs" (getenv "OOMLINT_EDITORS")))
(require 'oomlint)
(setq oomlint-executable (getenv "OOMLINT_BIN"))
(setq oomlint-settings '(:ignore ["OOM504"]))
(setq eglot-sync-connect 10)
(let ((out (getenv "OOMLINT_RESULT"))
      (lines nil)
      (status "FAIL: no diagnostics"))
  (condition-case err
      (progn
        (find-file (getenv "OOMLINT_FILE"))
        (python-mode)
        ;; what eglot-ensure does from a hook, which batch mode never runs:
        ;; the contact comes from eglot-server-programs, as oomlint.el set it
        (apply #'eglot (eglot--guess-contact))
        (let ((deadline (+ (float-time) 30)))
          (while (and (< (float-time) deadline) (not (eglot-current-server)))
            (accept-process-output nil 0.1)))
        (unless (eglot-current-server) (error "eglot did not start the server"))
        (let ((deadline (+ (float-time) 30)))
          (while (and (< (float-time) deadline) (null (flymake-diagnostics)))
            (flymake-start)
            (accept-process-output nil 0.1)))
        (dolist (d (flymake-diagnostics))
          (push (format "%s:%d" (let ((text (flymake-diagnostic-text d)))
                                  (if (string-match "OOM[0-9]+" text) (match-string 0 text) text))
                        (line-number-at-pos (flymake-diagnostic-beg d)))
                lines))
        (when lines
          (setq status "PASS"))
        (eglot-shutdown (eglot-current-server)))
    (error (setq status (format "FAIL: %S" err))))
  (with-temp-file out
    (dolist (l (sort lines #'string<)) (insert l "\n"))
    (insert status "\n")))
(kill-emacs 0)
