# `as` assertions on sizes the checker can't see: a flattened axis.
# Dynamic: b, gh, gw.
dim D = 4

## Patches of 2×2, asserted to be gh*gw rows.
export fn rows(img: [b D 2gh 2gw]) -> [b (gh gw) 4*D]:
    r = img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
    return r as [b (gh gw) 4*D]
