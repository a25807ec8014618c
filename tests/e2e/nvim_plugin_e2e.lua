-- End-to-end test of the Neovim plugin as docs/editors.md sets it up, on Neovim 0.7 and newer: only
-- editors/nvim on the runtimepath and `require("shapescript").setup({...})`; every feature is reached
-- through the keymaps the plugin sets on attach. From the repository root:
--     nvim --headless --clean --cmd 'set rtp^=editors/nvim' -u tests/e2e/nvim_plugin_e2e.lua
-- The server is $SHAPESCRIPT_CMD (words split at spaces), else $SHAPESCRIPT_BUILD/shapescript lsp.
-- On a copy of examples/tiny.ss: K (hover on `D` inside `[b n D]`), gd, gr, <leader>ca (the E3304
-- quick fix), inlay hints (shown where Neovim has them, 0.10+; before, asked of the server directly),
-- the E-code in the diagnostic display, and <leader>rn (rename `H`, the buffer's text checked).
local TIMEOUT = 15000
local function out(line) io.stdout:write(line .. "\n") io.stdout:flush() end

local script = debug.getinfo(1, "S").source:sub(2)
local root = vim.fn.fnamemodify(script, ":p:h:h:h")
local build = os.getenv("SHAPESCRIPT_BUILD")
if build == nil or build == "" then build = root .. "/build" end
local cmd_env = os.getenv("SHAPESCRIPT_CMD")
local cmd = (cmd_env and cmd_env ~= "") and vim.split(vim.trim(cmd_env), "%s+") or { build .. "/shapescript", "lsp" }

local failures = 0
local function check(name, ok, detail)
  if ok then out("PASS nvim-e2e " .. name)
  else failures = failures + 1 out("FAIL nvim-e2e " .. name .. ": " .. tostring(detail)) end
  return ok
end

local function keys(k) vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "x", false) end
local function text(buf) return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n") end
local function code(d) return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) end
local function floats()
  local found = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then table.insert(found, w) end
  end
  return found
end
local function close_floats()
  for _, w in ipairs(floats()) do pcall(vim.api.nvim_win_close, w, true) end
end
local function float_text()
  local t = {}
  for _, w in ipairs(floats()) do table.insert(t, text(vim.api.nvim_win_get_buf(w))) end
  return table.concat(t, "\n")
end
-- 0-based line and column of the `n`th whole-word `word` on 0-based line `l`.
local function find(buf, l, word, n)
  local line = vim.api.nvim_buf_get_lines(buf, l, l + 1, true)[1]
  local from = 1
  for _ = 1, (n or 1) do
    local s, e = line:find("%f[%w_]" .. word .. "%f[^%w_]", from)
    assert(s, ("no `%s` on line %d: %s"):format(word, l + 1, line))
    from = e + 1
    if _ == (n or 1) then return s - 1 end
  end
end
local function diagnostics_with(buf, wanted)
  local list
  vim.wait(TIMEOUT, function()
    list = vim.diagnostic.get(buf)
    return wanted(list)
  end, 20)
  return list
end
local function has_code(list, c)
  for _, d in ipairs(list) do if code(d) == c then return d end end
end

local function run()
  require("shapescript").setup({ cmd = cmd, serving_severity = "error" })

  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile(vim.fn.readfile(root .. "/examples/tiny.ss", "b"), dir .. "/tiny.ss", "b")
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/tiny.ss"))
  local buf = vim.api.nvim_get_current_buf()
  local client
  vim.wait(TIMEOUT, function()
    for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
      if c.name == "shapescript" and c.initialized then client = c return true end
    end
  end, 20)
  if not check("the server attaches", client ~= nil, table.concat(cmd, " ")) then return end
  local list = diagnostics_with(buf, function(l) return has_code(l, "E3304") ~= nil end)
  check("E3304 arrives (serving_severity = error)", has_code(list, "E3304"), vim.inspect(list))

  -- What on_attach sets.
  for lhs, what in pairs({ K = "hover", gd = "definition", gr = "references", ["<leader>rn"] = "rename", ["<leader>ca"] = "code_action" }) do
    local map = vim.fn.maparg(lhs, "n", false, true)
    check(("keymap %s (%s) is buffer-local"):format(lhs, what), map.buffer == 1, vim.inspect(map))
  end
  check("omnifunc", vim.bo[buf].omnifunc == "v:lua.vim.lsp.omnifunc", vim.bo[buf].omnifunc)

  -- The E-code in the diagnostic display: the inline text (first line only) and the float.
  local e3304 = has_code(vim.diagnostic.get(buf), "E3304")
  if e3304 then
    local ns_config = vim.diagnostic.config(nil, e3304.namespace) or {}
    local vt = type(ns_config.virtual_text) == "table" and ns_config.virtual_text or {}
    local inline = vt.format and vt.format(e3304) or ""
    check("inline diagnostic text starts with its code, one line", inline:match("^E3304: ") and not inline:find("\n"), inline)
    vim.api.nvim_win_set_cursor(0, { e3304.lnum + 1, e3304.col })
    vim.diagnostic.open_float()
    local shown = float_text()
    check("the diagnostic float shows the code", shown:find("E3304: ", 1, true) ~= nil, shown)
    close_floats()
  end

  -- K: hover on `D` in `[b n D]` (a dim inside a type).
  local l13 = 12
  vim.api.nvim_win_set_cursor(0, { l13 + 1, find(buf, l13, "D") })
  keys("K")
  local shown
  vim.wait(TIMEOUT, function() shown = float_text() return shown:find("dim D = 64", 1, true) ~= nil end, 20)
  check("K: hover on a dim inside a type", shown:find("dim D = 64", 1, true), shown)
  close_floats()

  -- gd: from the call of `attention` to its declaration.
  vim.api.nvim_win_set_cursor(0, { 26, find(buf, 25, "attention") })
  keys("gd")
  local at
  vim.wait(TIMEOUT, function() at = vim.api.nvim_win_get_cursor(0) return at[1] == 13 end, 20)
  check("gd: go to definition", at[1] == 13 and at[2] == 3, vim.inspect(at))

  -- gr: the references of the parameter `w_o` (its declaration and its use) in the quickfix list.
  vim.fn.setqflist({}, "r")
  vim.api.nvim_win_set_cursor(0, { 13, find(buf, 12, "w_o") })
  keys("gr")
  local qf
  vim.wait(TIMEOUT, function() qf = vim.fn.getqflist() return #qf > 0 end, 20)
  local where = {}
  for _, item in ipairs(qf) do table.insert(where, item.lnum .. ":" .. item.col) end
  check("gr: references", table.concat(where, " ") == ("13:%d 21:%d"):format(find(buf, 12, "w_o") + 1, find(buf, 20, "w_o") + 1),
    table.concat(where, " "))
  vim.cmd("cclose")
  vim.api.nvim_set_current_buf(buf)

  -- <leader>ca: the E3304 quick fix, picked from the menu and applied.
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = items
    for i, item in ipairs(items) do
      local action = item.action or item[2] or item
      if action.kind == "quickfix" then return on_choice(item, i) end
    end
    on_choice(nil, nil)
  end
  e3304 = has_code(vim.diagnostic.get(buf), "E3304")
  if e3304 then
    local before = text(buf)
    vim.api.nvim_win_set_cursor(0, { e3304.lnum + 1, e3304.col })
    keys("<leader>ca")
    vim.wait(TIMEOUT, function() return text(buf) ~= before end, 20)
    check("<leader>ca: a quick fix is applied", text(buf) ~= before, vim.inspect(offered))
    local sdpa = table.concat(vim.fn.readfile(root .. "/examples/tiny_sdpa.ss"), "\n")
    check("the fixed buffer is examples/tiny_sdpa.ss", text(buf) == sdpa, text(buf))
    list = diagnostics_with(buf, function(l) return not has_code(l, "E3304") end)
    check("E3304 is gone", not has_code(list, "E3304"), vim.inspect(list))
  end

  -- Inlay hints: shown where the client has them; before 0.10, the server is asked directly.
  if type(vim.lsp.inlay_hint) == "table" and vim.lsp.inlay_hint.is_enabled then
    local ok, enabled = pcall(vim.lsp.inlay_hint.is_enabled, { bufnr = buf })
    if not ok then ok, enabled = pcall(vim.lsp.inlay_hint.is_enabled, buf) end
    check("inlay hints are enabled in the buffer", enabled == true, tostring(enabled))
    -- And held for display: the hints the client draws (0.10+ draws them in a decoration provider,
    -- so they are asked of vim.lsp.inlay_hint.get, not read back as extmarks).
    local shown = {}
    vim.wait(TIMEOUT, function()
      shown = {}
      for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
        local label = h.inlay_hint.label
        if type(label) == "table" then label = table.concat(vim.tbl_map(function(p) return p.value end, label)) end
        table.insert(shown, label)
      end
      return vim.tbl_contains(shown, ": [b n D]")
    end, 20)
    check("inlay hints are shown in the buffer", vim.tbl_contains(shown, ": [b n D]"), vim.inspect(shown))
  else
    local params = { textDocument = vim.lsp.util.make_text_document_params(buf),
      range = { start = { line = 0, character = 0 }, ["end"] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } } }
    local answer = vim.lsp.buf_request_sync(buf, "textDocument/inlayHint", params, TIMEOUT) or {}
    local labels = {}
    for _, r in pairs(answer) do
      for _, h in ipairs(r.result or {}) do table.insert(labels, h.label) end
    end
    check("the server sends inlay hints (Neovim < 0.10 shows none)", vim.tbl_contains(labels, ": [b n D]"), vim.inspect(labels))
  end

  -- <leader>rn: rename the dim `H` everywhere it is used, in sizes and in patterns.
  vim.ui.input = function(opts, on_confirm) on_confirm("heads") end
  local before = text(buf)
  local expected = before:gsub("%f[%w_]H%f[^%w_]", "heads")
  vim.api.nvim_win_set_cursor(0, { 2, find(buf, 1, "H") })
  keys("<leader>rn")
  vim.wait(TIMEOUT, function() return text(buf) ~= before end, 20)
  check("<leader>rn: rename edits every `H`", text(buf) == expected, text(buf))
  -- The server answers a request once the current text is checked, after publishing its diagnostics.
  vim.lsp.buf_request_sync(buf, "textDocument/documentSymbol", { textDocument = vim.lsp.util.make_text_document_params(buf) }, TIMEOUT)
  list = diagnostics_with(buf, function(l)
    for _, d in ipairs(l) do if d.severity == vim.diagnostic.severity.ERROR then return false end end
    return true
  end)
  local errors = {}
  for _, d in ipairs(list) do if d.severity == vim.diagnostic.severity.ERROR then table.insert(errors, d) end end
  check("the renamed program has no errors", #errors == 0, vim.inspect(errors))

  vim.fn.delete(dir, "rf")
end

local function finish()
  for _, c in pairs(vim.lsp.get_active_clients()) do c.stop() end
  vim.wait(2000, function() return next(vim.lsp.get_active_clients()) == nil end, 20)
  out(failures == 0 and "nvim-e2e: all checks passed" or ("nvim-e2e: " .. failures .. " check(s) failed"))
  vim.cmd(failures == 0 and "qall!" or "cquit! 1")
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
  vim.schedule(function()
    local ok, err = pcall(run)
    if not ok then check("no Lua error", false, err) end
    finish()
  end)
end })
