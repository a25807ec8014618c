dim D = 8
dim V = 256

model Probe:
    param w: [V D] = normal(std=0.02)

fn train_a_little():
    m = init(Probe, seed=1)
    data = dataset("text.txt", batch=4, length=16, vocab=V)
    opt = adamw(m, lr=1e-3)
    train_mode(m)
    ids, targets = next_batch(data)
    loss, g = grad(cross_entropy(embedding(ids, m.w) |> linear(m.w), targets, over=V), m)
    update(opt, g)
    log_scalar("loss", loss)
    eval_mode(m)
    save_checkpoint(m, "probe.pt")

export fn embed(x: [b D], w: [D D]) -> [b D]:
    train_a_little()
    return dropout(linear(x, w), p=0.1)
