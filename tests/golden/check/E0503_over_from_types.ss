dim D = 64
dim V = 100

fn loss(logits: [b n V], t: [b n] Index[V]) -> []:
    return cross_entropy(logits, t)

fn loss2(logits: [b n V], t: [b n] Index[V]) -> []:
    return logits |> cross_entropy(t)

fn probs(logits: [b n V] Logit over V) -> [b n V] NonNeg:
    return logits |> softmax

fn probs2(logits: [b n V] Logit over V) -> [b n V] NonNeg:
    return softmax(logits)

fn flat(logits: [b n V], t: [b n] Index[V]) -> []:
    return cross_entropy(logits.view(-1, V), t.view(-1))
