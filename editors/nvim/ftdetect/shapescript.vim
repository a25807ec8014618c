" ShapeScript source files (Neovim 0.7+ and Vim). `set` rather than `setfiletype`: the built-in
" detection calls *.ss Scheme, and ftdetect files run after it.
autocmd BufNewFile,BufRead *.ss set filetype=shapescript
