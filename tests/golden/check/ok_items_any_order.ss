## Items may come in any order: `head` uses `Dh` and `classify` before they are defined.
fn head(x: [b C]) -> [b K] Logit over K:
    return classify(x, zeros_like_weight(x))

fn classify(x: [b C], w: [K C]) -> [b K]:
    return linear(x, w)

fn zeros_like_weight(x: [b C]) -> [K C]:
    return (K |> map(i => x[0])) as [K C]

dim K = 10
dim C = Dh * 2
dim Dh = 8
