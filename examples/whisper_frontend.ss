# Whisper's encoder: its front end, two 1-d convolutions over the log-mel frames (the second with
# stride 2 halves them, rounding down: (2P + 2 - 2 - 1) / 2 + 1 = P), GELU after each, and a learned
# position per output frame; then pre-norm transformer layers (attention without a mask, no bias on
# the keys, exact GELU) and a final layer_norm. transformers' WhisperEncoder computes the same
# (tests/python/test_convolution.py compares the front end with what its first layer reads, and
# `forward` with its last_hidden_state).

dim Mel = 16
dim D   = 32
dim H   = 2
dim Dh  = D / H
dim F   = 2 * D
dim L   = 2
dim P   = 24
dim Frames = 2 * P

model WhisperEncoder:
    param conv1_w: [D Mel 3] = normal(std=0.1)
    param conv1_b: [D]       = zeros
    param conv2_w: [D D 3]   = normal(std=0.1)
    param conv2_b: [D]       = zeros
    param embed_positions: [P D] = normal(std=0.02)
    param ln1_w: [L D]   = ones
    param ln1_b: [L D]   = zeros
    param wq:    [L D D] = normal(std=0.02)
    param bq:    [L D]   = zeros
    param wk:    [L D D] = normal(std=0.02)
    param wv:    [L D D] = normal(std=0.02)
    param bv:    [L D]   = zeros
    param wo:    [L D D] = normal(std=0.02)
    param bo:    [L D]   = zeros
    param ln2_w: [L D]   = ones
    param ln2_b: [L D]   = zeros
    param fc1_w: [L F D] = normal(std=0.02)
    param fc1_b: [L F]   = zeros
    param fc2_w: [L D F] = normal(std=0.02)
    param fc2_b: [L D]   = zeros
    param lnf_w: [D]     = ones
    param lnf_b: [D]     = zeros

## The frames Whisper's encoder layers read: [b P D] from [b Mel 2P] log-mel features.
fn frontend(m: WhisperEncoder, mel: [b Mel Frames]) -> [b P D]:
    h = gelu(conv1d(mel, m.conv1_w, m.conv1_b, padding=1))
    h = gelu(conv1d(h, m.conv2_w, m.conv2_b, stride=2, padding=1))
    return rearrange(h, b d t -> b t d) + m.embed_positions

fn attention(x: [b n D], wq: [D D], bq: [D], wk: [D D], wv: [D D], bv: [D], wo: [D D], bo: [D]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk) |> rearrange(b n (H Dh) -> b H n Dh)
    v = linear(x, wv, bv) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

## The encoder's output, [b P D]: what Whisper's decoder attends to.
fn forward(m: WhisperEncoder, mel: [b Mel Frames]) -> [b P D]:
    x = frontend(m, mel)
    for l in 0..L:
        x = x + attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l]), m.wq[l], m.bq[l], m.wk[l], m.wv[l], m.bv[l], m.wo[l], m.bo[l])
        h = gelu(linear(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.fc1_w[l], m.fc1_b[l]))
        x = x + linear(h, m.fc2_w[l], m.fc2_b[l])
    return layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b)
