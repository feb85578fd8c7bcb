" vim_test.vim - Vim with ALE (Debian's vim-ale) loads editors/vim, starts
" `oomlint server` for a Python buffer and shows its findings. Writes one
" "CODE:LINE" line per finding ALE shows to $OOMLINT_RESULT, then quits.
set nocompatible
let g:ale_linters = {'python': ['oomlint']}
let g:ale_python_oomlint_executable = $OOMLINT_BIN
let g:ale_python_oomlint_config = {'ignore': ['OOM504']}
let g:ale_lint_on_enter = 1
set runtimepath^=/usr/share/vim-ale
execute 'set runtimepath^=' . fnameescape($OOMLINT_EDITORS . '/vim')
filetype plugin on
runtime plugin/ale.vim
execute 'edit ' . fnameescape($OOMLINT_FILE)
let s:found = []
for s:i in range(300)
  sleep 100m
  let s:found = ale#engine#GetLoclist(bufnr(''))
  if !empty(s:found)
    break
  endif
endfor
call writefile(map(copy(s:found), {_, v -> get(v, 'code', '?') . ':' . v.lnum . ':' . v.col}), $OOMLINT_RESULT)
qall!
