-- oomlint for Neovim 0.11 and later: put this file in ~/.config/nvim/lsp/
-- (or add editors/nvim to 'runtimepath'), then in init.lua:
--
--   vim.lsp.enable('oomlint')
--
-- and adjust with vim.lsp.config('oomlint', { settings = { ... } }).
return {
  cmd = { 'oomlint', 'server' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  -- sent as initializationOptions and workspace/didChangeConfiguration:
  -- select, extendSelect, ignore (lists of codes or prefixes), unsafeFixes
  -- (fix-all applies unsafe fixes too), failOn ('error' | 'warning' | 'info')
  init_options = {},
  settings = {},
}
