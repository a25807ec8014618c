dim Vocab = 99999999999999999999999
dim D = 64
dim Patches = 18446744073709551616p

fn amplify(x: [n D]) -> [n D]:
    return x * 100000000000000000000
