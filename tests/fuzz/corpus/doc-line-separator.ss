dim D = 4

## a doc comment import os
fn f(x: [b D]) -> [b D]:
    return x
