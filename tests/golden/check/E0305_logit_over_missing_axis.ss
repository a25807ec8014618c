dim D = 64
dim V = 500

fn logits(x: [b n D], wte: [V D]) -> [b n V] Logit over W:
    return linear(x, wte)
