dim D = 16

fn pool(x: [b n D]) -> [b 3*D]:
    s = sum(x, over=n)
    m = mean(x, over=n)
    top = max(x, over=n)
    return concat(s, m, top, over=D)

fn stack_tokens(x: [b n D], y: [b m D]) -> [b n+m D]:
    return concat(x, y, over=n)
