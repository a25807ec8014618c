-- End-to-end test of shapescript-lsp with Neovim's built-in LSP client (Neovim >= 0.7).
-- It is an init file, since 0.7 has no `-l`:
--     nvim --headless --clean -u tests/e2e/nvim_lsp_test.lua
-- The server is $SHAPESCRIPT_LSP (a command; its words split at spaces, e.g. "build/shapescript lsp"),
-- else $SHAPESCRIPT_BUILD/lsp/shapescript-lsp (SHAPESCRIPT_BUILD defaults to <repo>/build). Prints one PASS/FAIL line per check and exits 0 only if all pass.
-- (a) examples/export_bad.ss: a diagnostic E1701 at 6:12 (1-based)
-- (b) examples/patches.ss: hover on the parameter `img` shows its shape and each axis, fixed or dynamic
-- (c) a copy of examples/tiny.ss with servingSeverity=error: E3304, its quick fix, then no E3304

local TIMEOUT = 15000

local function out(line)
  io.stdout:write(line .. "\n")
  io.stdout:flush()
end

local script = debug.getinfo(1, "S").source:sub(2)
local root = vim.fn.fnamemodify(script, ":p:h:h:h")
local build = os.getenv("SHAPESCRIPT_BUILD")
if build == nil or build == "" then build = root .. "/build" end
local server = os.getenv("SHAPESCRIPT_LSP")
if server == nil or server == "" then server = build .. "/lsp/shapescript-lsp" end
local server_cmd = vim.split(vim.trim(server), "%s+")
table.insert(server_cmd, "--log-level")
table.insert(server_cmd, "warn")

local failures = 0
local function pass(name, detail)
  out("PASS nvim " .. name .. (detail and (": " .. detail) or ""))
end
local function fail(name, detail)
  failures = failures + 1
  out("FAIL nvim " .. name .. ": " .. detail)
end

-- Every publishDiagnostics the server sends, by URI (the latest last), besides Neovim's own handling.
local published = {}
local function on_publish(err, result, ctx, config)
  if result and result.uri then
    published[result.uri] = published[result.uri] or {}
    table.insert(published[result.uri], result)
  end
  return vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
end

local function start(name, init_options)
  local id = vim.lsp.start_client({
    name = name,
    cmd = server_cmd,
    root_dir = root,
    init_options = init_options,
    handlers = { ["textDocument/publishDiagnostics"] = on_publish },
  })
  assert(id, "could not start " .. server)
  local ok = vim.wait(TIMEOUT, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized == true
  end, 20)
  assert(ok, "the server did not answer initialize within " .. TIMEOUT .. " ms")
  return id
end

local function open(path, client_id)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "shapescript"
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  return bufnr, vim.uri_from_bufnr(bufnr)
end

-- Waits for a publishDiagnostics for `uri` at `version` or later (any version if nil).
local function wait_diagnostics(uri, version)
  local found
  vim.wait(TIMEOUT, function()
    for _, p in ipairs(published[uri] or {}) do
      if version == nil or (p.version ~= nil and p.version >= version) then found = p end
    end
    return found ~= nil
  end, 20)
  return found
end

local function codes(diagnostics)
  local list = {}
  for _, d in ipairs(diagnostics) do
    table.insert(list, string.format("%s@%d:%d", tostring(d.code), d.range.start.line + 1,
      d.range.start.character + 1))
  end
  return table.concat(list, ", ")
end

local function only_result(responses, method)
  if responses == nil then return nil, method .. ": no answer within " .. TIMEOUT .. " ms" end
  for _, r in pairs(responses) do
    if r.err or r.error then return nil, method .. " error: " .. vim.inspect(r.err or r.error) end
    return r.result
  end
  return nil, method .. ": no client answered"
end

-- (a) --------------------------------------------------------------------------------------------
local function test_export_bad(client_id)
  local name = "E1701 at 6:12 in export_bad.ss"
  local bufnr, uri = open(root .. "/examples/export_bad.ss", client_id)
  local p = wait_diagnostics(uri, nil)
  if not p then return fail(name, "no publishDiagnostics") end
  local hit = false
  for _, d in ipairs(p.diagnostics) do
    if d.code == "E1701" and d.range.start.line == 5 and d.range.start.character == 11 then hit = true end
  end
  if not hit then return fail(name, "diagnostics were: [" .. codes(p.diagnostics) .. "]") end
  -- and as Neovim stores it (vim.diagnostic, 0-based)
  local stored = false
  vim.wait(TIMEOUT, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == "E1701" and d.lnum == 5 and d.col == 11 and d.severity == vim.diagnostic.severity.ERROR then
        stored = true
      end
    end
    return stored
  end, 20)
  if not stored then return fail(name, "vim.diagnostic.get lacks it: " .. vim.inspect(vim.diagnostic.get(bufnr))) end
  pass(name)
end

-- (b) --------------------------------------------------------------------------------------------
local function test_hover(client_id)
  local name = "hover on `img` in patches.ss"
  local bufnr, uri = open(root .. "/examples/patches.ss", client_id)
  -- line 4 (1-based): `export fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]`; `img` is at 0-based 3:19
  local line = vim.api.nvim_buf_get_lines(bufnr, 3, 4, true)[1]
  local col = line:find("img", 1, true)
  if not col then return fail(name, "no `img` in line 4: " .. line) end
  local params = { textDocument = { uri = uri }, position = { line = 3, character = col - 1 } }
  local result, err = only_result(vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, TIMEOUT),
    "textDocument/hover")
  if err then return fail(name, err) end
  if type(result) ~= "table" or type(result.contents) ~= "table" then
    return fail(name, "no hover: " .. vim.inspect(result))
  end
  local text = result.contents.value or ""
  local expected = {
    "img: [b 3 16gh 16gw]",
    "dim 0 `b`: dynamic: `Dim(\"b\")`",
    "dim 1 `3`: fixed",
    "dim 2 `16gh`: dynamic: `16*gh`",
    "dim 3 `16gw`: dynamic: `16*gw`",
  }
  for _, want in ipairs(expected) do
    if not text:find(want, 1, true) then
      return fail(name, "hover lacks " .. vim.inspect(want) .. "; it was " .. vim.inspect(text))
    end
  end
  if result.contents.kind ~= "markdown" then return fail(name, "hover kind " .. tostring(result.contents.kind)) end
  -- the hover's range is the name `img`
  local r = result.range
  if not r or r.start.line ~= 3 or r.start.character ~= col - 1 or r["end"].character ~= col + 2 then
    return fail(name, "hover range " .. vim.inspect(r))
  end
  pass(name)
end

-- (c) --------------------------------------------------------------------------------------------
local function test_code_action(client_id)
  local name = "E3304 quick fix in a copy of tiny.ss"
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local path = dir .. "/tiny.ss"
  vim.fn.writefile(vim.fn.readfile(root .. "/examples/tiny.ss", "b"), path, "b")
  local bufnr, uri = open(path, client_id)
  local p = wait_diagnostics(uri, nil)
  if not p then return fail(name, "no publishDiagnostics") end
  local diag
  for _, d in ipairs(p.diagnostics) do
    if d.code == "E3304" then diag = d end
  end
  if not diag then return fail(name, "no E3304 with servingSeverity=error; diagnostics: [" .. codes(p.diagnostics) .. "]") end
  if diag.severity ~= 1 then return fail(name, "E3304 severity " .. tostring(diag.severity) .. ", wanted 1 (error)") end

  local params = { textDocument = { uri = uri }, range = diag.range, context = { diagnostics = { diag } } }
  local result, err = only_result(vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, TIMEOUT),
    "textDocument/codeAction")
  if err then return fail(name, err) end
  local action
  for _, a in ipairs(result or {}) do
    local fixes = false
    for _, d in ipairs(a.diagnostics or {}) do
      if d.code == "E3304" then fixes = true end
    end
    if a.kind == "quickfix" and a.edit and fixes then action = a end
  end
  if not action then
    return fail(name, "no quickfix with an edit for E3304 offered; codeAction returned " .. vim.inspect(result))
  end
  out("  nvim: applying " .. vim.inspect(action.title))
  local before = vim.lsp.util.buf_versions[bufnr]
  vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
  local after = vim.lsp.util.buf_versions[bufnr]
  if after == before then return fail(name, "applying the edit changed nothing") end
  local fixed = wait_diagnostics(uri, after)
  if not fixed then return fail(name, "no publishDiagnostics for version " .. tostring(after)) end
  for _, d in ipairs(fixed.diagnostics) do
    if d.code == "E3304" then return fail(name, "E3304 remains after the fix: [" .. codes(fixed.diagnostics) .. "]") end
    if d.severity == 1 then return fail(name, "the fix leaves an error: [" .. codes(fixed.diagnostics) .. "]") end
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true), "\n") .. "\n"
  local sdpa = table.concat(vim.fn.readfile(root .. "/examples/tiny_sdpa.ss"), "\n") .. "\n"
  pass(name, "version " .. tostring(after) .. ", diagnostics: [" .. codes(fixed.diagnostics) .. "]"
    .. (text == sdpa and ", the text is now examples/tiny_sdpa.ss" or ""))
  vim.cmd("silent! bwipeout!")
  vim.fn.delete(dir, "rf")
end

local function run()
  if vim.fn.executable(server_cmd[1]) ~= 1 then
    fail("setup", "no server at " .. server)
    return
  end
  out("nvim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. ", server " .. server)
  local plain = start("shapescript")
  local serving = start("shapescript-serving", { shapescript = { servingSeverity = "error" } })
  for _, t in ipairs({
    function() test_export_bad(plain) end,
    function() test_hover(plain) end,
    function() test_code_action(serving) end,
  }) do
    local ok, e = pcall(t)
    if not ok then fail("error", tostring(e)) end
  end
  -- a clean shutdown: both clients must stop
  vim.lsp.stop_client({ plain, serving })
  local stopped = vim.wait(TIMEOUT, function()
    return vim.lsp.get_client_by_id(plain) == nil and vim.lsp.get_client_by_id(serving) == nil
  end, 20)
  if stopped then pass("shutdown") else fail("shutdown", "the clients did not stop") end
end

vim.schedule(function()
  local ok, e = pcall(run)
  if not ok then fail("error", tostring(e)) end
  if failures == 0 then
    out("nvim: all passed")
    vim.cmd("qa!")
  else
    out("nvim: " .. failures .. " failed")
    vim.cmd("cquit 1")
  end
end)
