# An export fn with an `as` assertion on derived dims, and a data-dependent size (examples/patches.ss is the other).
dim D = 4

## Patches of 2×2, asserted to be gh*gw rows.
export fn rows(img: [b D 2gh 2gw]) -> [b (gh gw) 4*D]:
    r = img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
    return r as [b (gh gw) 4*D]

extern fn nonzero(x: [n] Bool) -> [?k 1] Int = "torch.nonzero"

## The positions of the positive entries.
export fn positive_positions(x: [n]) -> [?k 1] Int:
    return nonzero(x > 0.0)
