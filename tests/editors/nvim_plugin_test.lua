-- Test of the Neovim plugin in editors/nvim, with only it on the runtimepath. From the repository root:
--     nvim --headless --clean --cmd 'set rtp^=editors/nvim' -u tests/editors/nvim_plugin_test.lua
-- The server is $SHAPESCRIPT_CMD (words split at spaces), else $SHAPESCRIPT_BUILD/shapescript lsp
-- (SHAPESCRIPT_BUILD defaults to <repo>/build). Prints PASS/FAIL lines; exits 0 only if all pass.
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
  if ok then out("PASS nvim-plugin " .. name)
  else failures = failures + 1 out("FAIL nvim-plugin " .. name .. ": " .. tostring(detail)) end
end

local function run()
local ok, err = pcall(function()
  local plugin_dir = vim.fn.fnamemodify(root .. "/editors/nvim", ":p"):gsub("/$", "")
  local on_rtp = false
  for _, p in ipairs(vim.api.nvim_list_runtime_paths()) do
    if vim.fn.fnamemodify(p, ":p"):gsub("/$", "") == plugin_dir then on_rtp = true end
  end
  check("editors/nvim is on the runtimepath", on_rtp, vim.o.runtimepath)

  -- :ShapeScriptExport's Python: the `python` option, else the project venv's, else python3.
  local shapescript = require("shapescript")
  local venv = vim.fn.tempname()
  vim.fn.mkdir(venv .. "/bin", "p")
  vim.fn.writefile({ "#!/bin/sh" }, venv .. "/bin/python")
  vim.fn.setfperm(venv .. "/bin/python", "rwxr-xr-x")
  vim.env.SHAPESCRIPT_VENV = venv
  shapescript.setup({ cmd = cmd })
  check("export: the venv's python by default", shapescript.python() == venv .. "/bin/python", shapescript.python())
  -- Semantic tokens: 0.9+ highlights dims and axes through linked groups; 0.7 must get no W18 warning.
  if vim.fn.has("nvim-0.9") == 1 then
    local dim = vim.api.nvim_get_hl(0, { name = "@lsp.type.dim.shapescript" })
    check("semantic tokens: a dim is highlighted as a constant", dim.link == "Constant", vim.inspect(dim))
  else
    local messages = vim.fn.execute("messages")
    check("semantic tokens: no warning on Neovim 0.7", not messages:find("W18"), messages)
  end
  vim.env.SHAPESCRIPT_VENV = venv .. "/missing"
  check("export: python3 without a venv", shapescript.python() == "python3", shapescript.python())
  shapescript.setup({ cmd = cmd, python = "/opt/torch/bin/python" })
  local export = shapescript.export_command("/x/a.ss", "f")
  check("export: the python option is passed as --python",
    table.concat(export, " ") == cmd[1] .. " export /x/a.ss --fn f --python /opt/torch/bin/python", table.concat(export, " "))
  vim.fn.delete(venv, "rf")

  shapescript.setup({ cmd = cmd, serving_severity = "information" })
  check("setup() defines :ShapeScriptExplain", vim.fn.exists(":ShapeScriptExplain") == 2)

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/examples/export_bad.ss"))
  local buf = vim.api.nvim_get_current_buf()
  check("filetype == shapescript", vim.bo.filetype == "shapescript", vim.bo.filetype)
  check("commentstring is '# %s'", vim.bo.commentstring == "# %s", vim.bo.commentstring)
  check("indent: shiftwidth 4, expandtab", vim.bo.shiftwidth == 4 and vim.bo.expandtab)
  -- the indentexpr indents after a line ending in ':'
  vim.v.lnum = 6
  check("indentexpr indents after ':'", vim.fn.eval(vim.bo.indentexpr) == 4, vim.bo.indentexpr)

  -- Syntax: `import` at 1:1, `export` at 5:1, `fn` at 5:8, the tensor type's `3` and `D`.
  local function group(l, c) return vim.fn.synIDattr(vim.fn.synID(l, c, 1), "name") end
  check("syntax active: b:current_syntax", vim.b.current_syntax == "shapescript", vim.b.current_syntax)
  check("syntax: 'import' is shapescriptKeyword", group(1, 1) == "shapescriptKeyword", group(1, 1))
  check("syntax: 'fn' is a shapescript group", group(5, 8):match("^shapescript") ~= nil, group(5, 8))
  check("syntax: 'load_qkv' is shapescriptFunctionName", group(5, 11) == "shapescriptFunctionName", group(5, 11))
  check("syntax: string", group(6, 25) == "shapescriptString", group(6, 25))
  local axis_col = vim.fn.getline(5):find("%[D") + 1
  check("syntax: axis in a tensor type", group(5, axis_col) == "shapescriptAxis", group(5, axis_col))

  local attached = vim.wait(TIMEOUT, function()
    for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
      if c.name == "shapescript" and c.initialized then return true end
    end
    return false
  end, 20)
  check("the server attaches (" .. table.concat(cmd, " ") .. ")", attached)

  local found
  local got = vim.wait(TIMEOUT, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
      if code == "E1701" then found = d return true end
    end
    return false
  end, 20)
  check("diagnostic E1701 arrives", got, vim.inspect(vim.diagnostic.get(buf)))
  if found then
    check("E1701 at 6:12", found.lnum == 5 and found.col == 11, ("%d:%d"):format(found.lnum + 1, found.col + 1))
  end

  -- A second file reuses the client.
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/examples/patches.ss"))
  local buf2 = vim.api.nvim_get_current_buf()
  local same = vim.wait(TIMEOUT, function() return next(vim.lsp.buf_get_clients(buf2)) ~= nil end, 20)
  local n = 0
  for _, c in pairs(vim.lsp.get_active_clients()) do if c.name == "shapescript" then n = n + 1 end end
  check("a second buffer attaches to the same client", same and n == 1, n)
end)
if not ok then check("no Lua error", false, err) end

for _, c in pairs(vim.lsp.get_active_clients()) do c.stop() end
vim.wait(2000, function() return next(vim.lsp.get_active_clients()) == nil end, 20)
out(failures == 0 and "nvim-plugin: all checks passed" or ("nvim-plugin: " .. failures .. " check(s) failed"))
vim.cmd((failures == 0 and "qall!" or "cquit! 1"))
end

-- After startup, as a user's session: plugins, filetype detection and syntax are on by then.
vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })
