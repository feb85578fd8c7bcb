-- nvim_test.lua - headless Neovim (0.7: vim.lsp.start_client) drives
-- `oomlint server` through editors/nvim/lua/oomlint.lua.
--
--   OOMLINT_BIN=... OOMLINT_FILE=... OOMLINT_RESULT=... \
--     nvim --headless -u NONE -i NONE --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_test.lua'
--
-- Opens a bad file, waits for the diagnostics and checks they equal the
-- CLI's JSON, applies a quick fix and the fix-all action and checks the
-- buffer, hovers, and shuts the server down. Writes "ok" lines and a final
-- "PASS" (or "FAIL: why") to OOMLINT_RESULT, then quits.
local bin = os.getenv('OOMLINT_BIN')
local file = os.getenv('OOMLINT_FILE')
local result = os.getenv('OOMLINT_RESULT')
local lines_out = {}

local function say(s)
  table.insert(lines_out, s)
  vim.fn.writefile(lines_out, result)
end

local function check(cond, what)
  if not cond then
    error(what, 2)
  end
end

local exit_code = nil

local function run()
  vim.cmd('filetype on')
  require('oomlint').setup({
    cmd = { bin, 'server' },
    on_exit = function(code)
      exit_code = code
    end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo.filetype == 'python', 'filetype is ' .. vim.bo.filetype)
  check(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20), 'no diagnostics')
  local client = vim.lsp.get_active_clients()[1]
  check(client and client.name == 'oomlint', 'no oomlint client')

  -- the diagnostics equal the CLI's JSON (an ASCII file: columns agree)
  local function diag_tuples()
    local t = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(t, table.concat({ d.code, d.lnum, d.col, d.end_lnum, d.end_col, d.severity, d.source,
        d.message }, '|'))
    end
    table.sort(t)
    return t
  end
  local function cli_tuples(path)
    local found = vim.fn.json_decode(vim.fn.system({ bin, '--format', 'json', path }))
    local sev = { error = 1, warning = 2, info = 3 }
    local t = {}
    for _, f in ipairs(found) do
      table.insert(t, table.concat({ f.code, f.line - 1, f.column - 1, f.end_line - 1, f.end_column - 1,
        sev[f.severity], 'oomlint', f.message }, '|'))
    end
    table.sort(t)
    return t
  end
  local got, want = diag_tuples(), cli_tuples(file)
  check(vim.deep_equal(got, want), 'diagnostics differ:\n' .. vim.inspect(got) .. '\n' .. vim.inspect(want))
  say('ok   ' .. #got .. ' diagnostics equal the CLI JSON')

  local function wait_changed(before)
    check(vim.wait(20000, function()
      return not vim.deep_equal(diag_tuples(), before)
    end, 20), 'the diagnostics did not change')
  end
  local function actions(range, only)
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = range,
      context = { diagnostics = {}, only = only } }
    local resp = client.request_sync('textDocument/codeAction', params, 10000, buf)
    check(resp and resp.result, 'no code actions: ' .. vim.inspect(resp))
    return resp.result
  end
  local function lsp_range(d)
    return { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } }
  end
  local function find(code)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == code then return d end
    end
  end

  -- a quick fix
  local d = find('OOM101')
  check(d, 'no OOM101')
  local fix
  for _, a in ipairs(actions(lsp_range(d))) do
    if a.kind == 'quickfix' and a.title:find('^OOM101') then fix = a end
  end
  check(fix, 'no OOM101 quick fix')
  local before = diag_tuples()
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
  local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]
  check(line:find('total += loss.item()', 1, true), 'quick fix not applied: ' .. line)
  wait_changed(before)
  check(not find('OOM101'), 'OOM101 still reported')
  say('ok   quick fix applied: ' .. vim.trim(line))

  -- fix-all: the buffer becomes what `oomlint --fix -` makes of it
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
  -- what is left goes to stderr; keep it out of the fixed text
  local want_fixed = vim.fn.system(vim.fn.shellescape(bin) .. ' --fix - --stdin-filename '
    .. vim.fn.shellescape(file) .. ' 2>/dev/null', text)
  local all = actions(lsp_range(vim.diagnostic.get(buf)[1]), { 'source.fixAll' })
  check(#all == 1 and all[1].kind == 'source.fixAll.oomlint', 'fix-all: ' .. vim.inspect(all))
  before = diag_tuples()
  vim.lsp.util.apply_workspace_edit(all[1].edit, client.offset_encoding)
  local now = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
  check(now == want_fixed, 'fix-all gave:\n' .. now .. '\nwanted:\n' .. want_fixed)
  wait_changed(before)
  say('ok   fix-all: the buffer equals oomlint --fix')

  -- hover on what is left
  d = vim.diagnostic.get(buf)[1]
  check(d, 'nothing left to hover')
  local resp = client.request_sync('textDocument/hover', { textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = d.lnum, character = d.col } }, 10000, buf)
  local value = resp and resp.result and resp.result.contents and resp.result.contents.value or ''
  check(value:find('# ' .. d.code, 1, true), 'hover: ' .. vim.inspect(resp))
  say('ok   hover shows the ' .. d.code .. ' page')

  -- shutdown
  client.stop()
  check(vim.wait(10000, function() return exit_code ~= nil end, 20), 'the server did not exit')
  check(exit_code == 0, 'server exit status ' .. tostring(exit_code))
  say('ok   shutdown: status 0')
end

local ok, err = pcall(run)
say(ok and 'PASS' or ('FAIL: ' .. tostring(err)))
vim.cmd(ok and 'qall!' or 'cquit!')
