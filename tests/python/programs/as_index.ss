# `as [n] Index[P]` checks the values too when it runs: an id past the table is refused there.
# Dynamic: n.
dim P = 16
dim D = 8

## Integer positions asserted to index a table of P rows, then looked up.
export fn positions(ids: [n] Int, table: [P D]) -> [n D]:
    return embedding(ids as [n] Index[P], table)
