-- The Neovim setup the screenshots use (shown in docs/editors.md): only editors/nvim on the
-- runtimepath, the documented setup(), colours and a rounded float border.
vim.opt.termguicolors = true
vim.opt.number = true
vim.opt.signcolumn = "yes"
vim.opt.laststatus = 2
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h:h")
require("shapescript").setup({ cmd = { root .. "/build/shapescript", "lsp" } })
vim.cmd("highlight NormalFloat guibg=#2b2f36 guifg=#d8d8d8")
vim.cmd("highlight FloatBorder guibg=#2b2f36 guifg=#7aa6da")
vim.diagnostic.config({ float = { border = "rounded", header = "" } })
