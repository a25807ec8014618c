# The training built-ins, as `shapescript run` runs them.
# The chapter's Tiny (the scaled_dot_product_attention version), trained in the same file:
# `shapescript run train_tiny.ss` learns the bytes of this project's language reference, then
# `shapescript export train_tiny.ss --hf tiny_hf --vllm --weights tiny.pt` serves what it learned.
dim D  = 64
dim H  = 4
dim Dh = D / H
dim V  = 500
dim L  = 2

dim B  = 16    # windows per batch
dim T  = 64    # bytes per window
dim S  = 600   # training steps

model Tiny:
    param wte:   [V D]     = normal(std=0.02)
    param w_qkv: [L 3*D D] = normal(std=0.02)
    param w_o:   [L D D]   = normal(std=0.02)
    param norm:  [L D]     = ones

fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.norm[l]), m.w_qkv[l], m.w_o[l])
    return linear(x, m.wte)

## How wrong the model is on one batch: each position predicts the byte after it.
fn loss_of(m: Tiny, ids: [b n] Index[V], targets: [b n] Index[V]) -> Real:
    return cross_entropy(forward(m, ids), targets, over=V)

fn main():
    m = init(Tiny)
    data = dataset("../docs/language.md", batch=B, length=T, vocab=V)
    opt = adamw(m, lr=3e-3, weight_decay=0.01)
    train_mode(m)
    for step in 0..S:
        ids, targets = next_batch(data)
        loss, g = grad(loss_of(m, ids, targets), m)
        update(opt, g)
        log_scalar("loss", loss)
    eval_mode(m)
    save_checkpoint(m, "tiny.pt")
