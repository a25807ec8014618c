-- The Neovim setup the screenshots use: only editors/nvim on the runtimepath, the plugin's setup().
vim.opt.termguicolors = true
vim.opt.number = true
vim.opt.signcolumn = "yes"
vim.opt.laststatus = 2
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h:h")
require("shapescript").setup({ cmd = { root .. "/build/shapescript", "lsp" } })
vim.cmd("highlight NormalFloat guibg=#2b2f36 guifg=#d8d8d8")
vim.cmd("highlight FloatBorder guibg=#2b2f36 guifg=#7aa6da")
local function code(d) return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) end
local function fmt(d) return code(d) and ("error[%s]: %s"):format(code(d), d.message) or d.message end
vim.diagnostic.config({
  virtual_text = { format = function(d) return "error[" .. (code(d) or "?") .. "]" end },
  float = { border = "rounded", format = fmt, header = "" },
})
