" oomlint as an ALE linter: ALE starts `oomlint server` (the language server
" built into oomlint) for Python buffers and shows its findings. See
" editors/vim/README.md for installing it.
"
"   let g:ale_linters = {'python': ['oomlint']}        " or add it to your list
"   let g:ale_python_oomlint_executable = 'oomlint'    " or a full path
"   let g:ale_python_oomlint_options = '--config ci/oomlint.toml'
"   let g:ale_python_oomlint_config = {'ignore': ['OOM501'], 'unsafeFixes': v:false}

call ale#Set('python_oomlint_executable', 'oomlint')
call ale#Set('python_oomlint_options', '')
call ale#Set('python_oomlint_config', {})

function! ale_linters#python#oomlint#GetCommand(buffer) abort
    return ale#Escape(ale#Var(a:buffer, 'python_oomlint_executable'))
    \   . ' server' . ale#Pad(ale#Var(a:buffer, 'python_oomlint_options'))
endfunction

call ale#linter#Define('python', {
\   'name': 'oomlint',
\   'lsp': 'stdio',
\   'executable': {b -> ale#Var(b, 'python_oomlint_executable')},
\   'command': function('ale_linters#python#oomlint#GetCommand'),
\   'project_root': function('ale#python#FindProjectRoot'),
\   'lsp_config': {b -> ale#Var(b, 'python_oomlint_config')},
\})
