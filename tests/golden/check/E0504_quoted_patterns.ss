dim D = 64
dim H = 4

## torch's equation and einops' pattern, written as strings: ShapeScript's pattern has no quotes,
## one name an axis, and a size in place of einops' `h=H`.
fn scores(q: [b n D], k: [b m D]) -> [b n m]:
    return einsum("bnd,bmd->bnm", q, k)

fn scores_torch(q: [b n D], k: [b m D]) -> [b n m]:
    return torch.einsum("bnd,bmd->bnm", q, k)

fn heads(x: [b n D]) -> [b H n D/H]:
    return rearrange(x, "b n (h d) -> b h n d", h=H)

## Piped in: the fix rewrites the call after `|>`, and the piped operand stays.
fn heads_piped(x: [b n D]) -> [b H n D/H]:
    return x |> rearrange("b n (h d) -> b h n d", h=H)

fn scores_piped(q: [b n D], k: [b m D]) -> [b n m]:
    return q |> einsum("bnd,bmd->bnm", k)
