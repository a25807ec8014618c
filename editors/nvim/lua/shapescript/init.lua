-- ShapeScript for Neovim: starts the language server (`shapescript lsp`) for shapescript buffers.
--   require("shapescript").setup({ cmd = { "shapescript", "lsp" }, serving_severity = "information" })
-- Neovim >= 0.11: vim.lsp.config + vim.lsp.enable. Neovim 0.7-0.10: vim.lsp.start_client and a
-- FileType autocommand that attaches each buffer to the one client of its root. On attach (every
-- version): buffer-local keymaps, omnifunc, inlay hints where the client has them (0.10+), and
-- diagnostics shown with their code. Every API newer than 0.7 is guarded.
local M = {}

M.defaults = {
  cmd = { "shapescript", "lsp" },
  -- error, warning, information (the server's default), hint, off
  serving_severity = nil,
  root_markers = { ".git", "pyproject.toml" },
  filetypes = { "shapescript" },
  on_attach = nil,
  capabilities = nil,
  settings = nil,
  -- Buffer-local keymaps set on attach; false sets none, a table changes some (a key = false drops one).
  keymaps = {
    hover = "K",
    definition = "gd",
    references = "gr",
    rename = "<leader>rn",
    code_action = "<leader>ca",
  },
  -- Inferred shapes after assignments (`x = ...  : [b n D]`), where Neovim has inlay hints (0.10+).
  inlay_hints = true,
  -- Diagnostics of this server show their code (`E1701: ...`); the inline text shows the first line only.
  diagnostic_codes = true,
  -- The Python with torch that :ShapeScriptExport runs `torch.export` in (`shapescript export --python`).
  -- nil: the project venv's ($SHAPESCRIPT_VENV, else ~/.cache/shapescript/venv) if it exists, else python3.
  python = nil,
}

M.config = vim.deepcopy(M.defaults)

local function settings(opts)
  local s = vim.deepcopy(opts.settings or {})
  if opts.serving_severity then
    s.shapescript = s.shapescript or {}
    s.shapescript.servingSeverity = opts.serving_severity
  end
  return s
end

local function root_dir(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  if vim.fs and vim.fs.find then
    local found = vim.fs.find(markers, { path = dir, upward = true })[1]
    if found then return vim.fn.fnamemodify(found, ":h") end
  else
    for _, m in ipairs(markers) do
      local hit = vim.fn.finddir(m, dir .. ";")
      if hit == "" then hit = vim.fn.findfile(m, dir .. ";") end
      if hit ~= "" then return vim.fn.fnamemodify(hit, ":p:h:h") end
    end
  end
  return dir
end

local actions = {
  hover = { function() vim.lsp.buf.hover() end, "ShapeScript: hover" },
  definition = { function() vim.lsp.buf.definition() end, "ShapeScript: go to definition" },
  references = { function() vim.lsp.buf.references() end, "ShapeScript: references" },
  rename = { function() vim.lsp.buf.rename() end, "ShapeScript: rename" },
  code_action = { function() vim.lsp.buf.code_action() end, "ShapeScript: code action" },
}

local function diagnostic_code(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
end

-- `E1701: message` for this server's diagnostics. The inline text keeps the first line (the notes and
-- helps would run off the screen); the float (vim.diagnostic.open_float) shows all of it.
local our_namespaces = {}
local our_float_format -- the format show_codes put in the global float config last
local function show_codes(client)
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, client.id)
  if not ok or ns == nil then return end
  local function with_code(d)
    local c = diagnostic_code(d)
    return c and (c .. ": " .. d.message) or d.message
  end
  local global = vim.diagnostic.config() or {}
  if not our_namespaces[ns] and global.virtual_text ~= false then
    local inline = vim.tbl_extend("force", type(global.virtual_text) == "table" and global.virtual_text or {}, {
      format = function(d) return (with_code(d):gsub("\n.*", "")) end,
    })
    vim.diagnostic.config({ virtual_text = inline }, ns)
  end
  our_namespaces[ns] = true
  -- open_float reads its options from the global config only: wrap its format (again, if the user
  -- has set another since), for this server's diagnostics alone.
  local float = type(global.float) == "table" and global.float or {}
  if float.format ~= nil and float.format == our_float_format then return end
  local previous = float.format
  our_float_format = function(d)
    if our_namespaces[d.namespace] then return with_code(d) end
    return previous and previous(d) or d.message
  end
  if global.float ~= false then
    vim.diagnostic.config({ float = vim.tbl_extend("force", float, { format = our_float_format }) })
  end
end

local function set_keymaps(bufnr, keymaps)
  if keymaps == false or keymaps == nil then return end
  for name, lhs in pairs(keymaps) do
    local action = actions[name]
    if action and lhs then
      if vim.keymap and vim.keymap.set then
        vim.keymap.set("n", lhs, action[1], { buffer = bufnr, silent = true, desc = action[2] })
      else -- never reached on 0.7+, kept for a partial runtime
        vim.api.nvim_buf_set_keymap(bufnr, "n", lhs, "<cmd>lua vim.lsp.buf." .. name .. "()<CR>", { silent = true, noremap = true })
      end
    end
  end
end

local function enable_inlay_hints(client, bufnr)
  local hints = vim.lsp.inlay_hint
  if type(hints) ~= "table" or type(hints.enable) ~= "function" then return end -- Neovim < 0.10
  local caps = client.server_capabilities or {}
  if not caps.inlayHintProvider then return end
  -- 0.10+: enable(true, { bufnr = b }); an early 0.10 nightly had enable(bufnr, true).
  if not pcall(hints.enable, true, { bufnr = bufnr }) then pcall(hints.enable, bufnr, true) end
end

-- What setup() does for each buffer the server attaches to, then the user's on_attach.
function M.on_attach(client, bufnr)
  local cfg = M.config
  vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
  set_keymaps(bufnr, cfg.keymaps)
  if cfg.inlay_hints then enable_inlay_hints(client, bufnr) end
  if cfg.diagnostic_codes then show_codes(client) end
  if cfg.on_attach then cfg.on_attach(client, bufnr) end
end

-- The Python :ShapeScriptExport passes to `shapescript export --python`.
function M.python()
  if M.config.python and M.config.python ~= "" then return M.config.python end
  local venv = os.getenv("SHAPESCRIPT_VENV")
  if venv == nil or venv == "" then venv = vim.fn.expand("~/.cache/shapescript/venv") end
  local py = venv .. "/bin/python"
  if vim.fn.executable(py) == 1 then return py end
  return "python3"
end

local clients = {} -- root_dir -> client id (Neovim < 0.11)

local function attach_legacy(bufnr)
  local opts = M.config
  local root = root_dir(bufnr, opts.root_markers)
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil or vim.lsp.get_client_by_id(id).is_stopped() then
    local s = settings(opts)
    id = vim.lsp.start_client({
      name = "shapescript",
      cmd = opts.cmd,
      root_dir = root,
      init_options = s,
      settings = s,
      capabilities = opts.capabilities,
      on_attach = M.on_attach,
      on_init = function(client)
        if next(s) ~= nil then
          client.notify("workspace/didChangeConfiguration", { settings = s })
        end
      end,
    })
    if id == nil then
      vim.notify("shapescript: could not start " .. table.concat(opts.cmd, " "), vim.log.levels.ERROR)
      return
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

-- The server's own semantic token types (0.9+ highlights them as @lsp.type.TYPE): a dim as a
-- constant, an axis as a type; a colorscheme's own links win. Older Neovims reject `@` in a group
-- name with a warning (W18) that pcall can't silence, so they are left alone.
local function link_semantic_tokens()
  if vim.fn.has("nvim-0.9") == 0 then return end
  for group, target in pairs({ ["@lsp.type.dim.shapescript"] = "Constant", ["@lsp.type.axis.shapescript"] = "Type" }) do
    vim.cmd("highlight default link " .. group .. " " .. target)
  end
end

function M.setup(opts)
  opts = opts or {}
  link_semantic_tokens()
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  local cfg = M.config
  if opts.keymaps == false then cfg.keymaps = false end
  if type(cfg.cmd) == "string" then cfg.cmd = { cfg.cmd, "lsp" } end

  if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
    local s = settings(cfg)
    vim.lsp.config("shapescript", {
      cmd = cfg.cmd,
      filetypes = cfg.filetypes,
      root_markers = cfg.root_markers,
      init_options = s,
      settings = s,
      capabilities = cfg.capabilities,
      on_attach = M.on_attach,
    })
    vim.lsp.enable("shapescript")
    return
  end

  local group = vim.api.nvim_create_augroup("shapescript_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = cfg.filetypes,
    callback = function(args) attach_legacy(args.buf) end,
  })
  -- Buffers already open when setup() runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.tbl_contains(cfg.filetypes, vim.bo[b].filetype) then
      attach_legacy(b)
    end
  end
end

-- :ShapeScriptExplain [CODE] — `shapescript explain CODE` (the code under the cursor, or of the
-- diagnostic on this line) in a scratch markdown buffer.
function M.explain(code)
  if code == nil or code == "" then
    local word = vim.fn.expand("<cWORD>")
    code = word:match("[EW]%d%d%d%d")
  end
  if code == nil then
    local lnum = vim.api.nvim_win_get_cursor(0)[1] - 1
    for _, d in ipairs(vim.diagnostic.get(0, { lnum = lnum })) do
      local c = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
      if c then code = tostring(c) break end
    end
  end
  if code == nil then
    vim.notify("shapescript: no diagnostic code here", vim.log.levels.WARN)
    return
  end
  local exe = M.config.cmd[1]
  local out = vim.fn.systemlist({ exe, "explain", code })
  vim.cmd("new")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, out)
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile = "nofile", "wipe", false
  vim.bo.filetype = "markdown"
end

-- :ShapeScriptExport — `shapescript export FILE --fn NAME` for the export fn around the cursor.
function M.export()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local name
  for i = lnum, 1, -1 do
    local line = vim.fn.getline(i)
    name = line:match("^export%s+fn%s+([%a_][%w_]*)")
    if name then break end
    if i ~= lnum and line:match("^%a") then break end
  end
  if not name then
    vim.notify("shapescript: the cursor is not in an `export fn`", vim.log.levels.WARN)
    return
  end
  vim.cmd("write")
  local words = vim.tbl_map(vim.fn.shellescape, M.export_command(vim.fn.expand("%:p"), name))
  vim.cmd("split | terminal " .. table.concat(words, " "))
end

-- The command :ShapeScriptExport runs for fn `name` of `path`.
function M.export_command(path, name)
  return { M.config.cmd[1], "export", path, "--fn", name, "--python", M.python() }
end

return M
