-- oomlint for Neovim 0.7 to 0.10 (0.11 and later: see lsp/oomlint.lua).
--
--   require('oomlint').setup({
--     cmd = { 'oomlint', 'server' },        -- or the full path of the binary
--     settings = { ignore = { 'OOM501' } }, -- select, extendSelect, ignore, unsafeFixes, failOn
--   })
--
-- Starts `oomlint server` for Python buffers, one client per project root
-- (the nearest directory with pyproject.toml, setup.py, setup.cfg or .git),
-- with vim.lsp.start_client, which 0.7 has (vim.lsp.start came in 0.8).
-- Diagnostics show through vim.diagnostic; code actions (quick fixes,
-- "Disable OOMxxx for this line", source.fixAll.oomlint) through
-- vim.lsp.buf.code_action(); rule docs through vim.lsp.buf.hover().
local M = {}

local markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' }
local clients = {} -- root directory -> client id

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while true do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return vim.fn.getcwd()
    end
    dir = parent
  end
end

function M.setup(opts)
  opts = opts or {}
  local cmd = opts.cmd or { 'oomlint', 'server' }
  local settings = opts.settings or {}
  local function attach(bufnr)
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name == '' or vim.bo[bufnr].buftype ~= '' then
      return
    end
    local root = root_of(name)
    local id = clients[root]
    if not id or not vim.lsp.get_client_by_id(id) then
      id = vim.lsp.start_client({
        name = 'oomlint',
        cmd = cmd,
        root_dir = root,
        workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
        init_options = settings,
        settings = settings,
        on_exit = opts.on_exit,
        on_attach = opts.on_attach,
        capabilities = opts.capabilities,
      })
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  local group = vim.api.nvim_create_augroup('oomlint', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'python',
    callback = function(args)
      attach(args.buf)
    end,
  })
  -- buffers opened before setup
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == 'python' then
      attach(b)
    end
  end
end

return M
