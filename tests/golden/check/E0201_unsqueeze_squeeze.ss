dim D = 64

## An axis of size 1 put in or taken out is a `1` in a pattern.
fn grow(x: [b n D]) -> [b 1 n D]:
    return unsqueeze(x, 1)

fn kept(x: [b n D]) -> [b n 1 D]:
    return x.unsqueeze(-2)

fn shrink(x: [b 1 D]) -> [b D]:
    return x.squeeze(1)

fn every_one(x: [b 1 D 1]) -> [b D]:
    return squeeze(x)
