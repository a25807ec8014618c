# ViT patch embedding: 8×8 patches of a 3-channel image, projected to D, plus a bias.
# Dynamic: b, gh, gw (height 8gh, width 8gw). Fixed: 3, D.
dim D = 48
dim P = 8 * 8 * 3

## Cuts each image into 8×8 patches and embeds each patch.
export fn patch_embed(img: [b 3 8gh 8gw], w: [D P], bias: [D]) -> [b (gh gw) D]:
    patches = img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
    return linear(patches, w) + bias
