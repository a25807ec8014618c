dim D = 8
dim V = 256
dim S = 10

model Probe:
    param w: [V D] = normal(std=0.02)

fn loss_of(m: Probe, ids: [b n] Index[V], targets: [b n] Index[V]) -> Real:
    return cross_entropy(embedding(ids, m.w) |> dropout(p=0.2) |> linear(m.w), targets, over=V)

fn main():
    m = init(Probe, seed=1)
    data = dataset("text.txt", batch=4, length=16, vocab=V)
    opt = sgd(m, lr=0.1, momentum=0.9)
    train_mode(m)
    for step in 0..S:
        ids, targets = next_batch(data)
        loss, g = grad(loss_of(m, ids, targets), m)
        update(opt, g)
        log_scalar("loss", loss)
    eval_mode(m)
    save_checkpoint(m, "probe.pt")
