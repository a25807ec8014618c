# Two sequences joined along the features where the sequence was meant: the help names the axis
# where the parts differ, and its fix gives a program that checks.
dim D = 64
fn join(a: [b n D], c: [b m D]) -> [b (n + m) D]:
    return concat(a, c, over=D)
