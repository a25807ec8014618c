-- ShapeScript for Neovim: starts the language server (`shapescript lsp`) for shapescript buffers.
--   require("shapescript").setup({ cmd = { "shapescript", "lsp" }, serving_severity = "information" })
-- Neovim >= 0.11: vim.lsp.config + vim.lsp.enable. Neovim 0.7-0.10: vim.lsp.start_client and a
-- FileType autocommand that attaches each buffer to the one client of its root.
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
      on_attach = opts.on_attach,
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

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  local cfg = M.config
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
      on_attach = cfg.on_attach,
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
  vim.cmd("split | terminal " .. vim.fn.shellescape(M.config.cmd[1]) .. " export "
    .. vim.fn.shellescape(vim.fn.expand("%:p")) .. " --fn " .. name)
end

return M
