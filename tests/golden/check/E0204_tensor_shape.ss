dim D = 64

## A tensor's shape is its type: there is no `.shape` to ask for, and no fix to write.
fn shape(x: [b n D]) -> Int:
    return x.shape

fn sizes(x: [b n D]) -> Int:
    return x.size()

## A position past the last axis: no axis to name.
fn past(x: [b n D]) -> Int:
    return x.size(3)
