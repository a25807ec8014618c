# `full` takes its shape in brackets, `full[n D](v)`; `zeros` called like a function is an
# initializer out of place, and the help shows the form that makes a tensor.
dim D = 8

export fn filled(x: [n D]) -> [n D]:
    return x + full(0.5)

export fn zeroed(x: [n D]) -> [n D]:
    return x + zeros(n, D)
