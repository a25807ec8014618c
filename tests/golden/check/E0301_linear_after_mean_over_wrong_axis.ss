# Mean over the features where the sequence was meant: the weight can't be sized by `n`; the help
# points at the `over=` that removed `D`, and its fix gives the program that was meant.
dim D = 64
dim C = 10
model Classifier:
    param w: [C D] = normal(std=0.02)
fn classify(m: Classifier, x: [b n D]) -> [b C]:
    h = mean(x, over=D)
    return linear(h, m.w)
