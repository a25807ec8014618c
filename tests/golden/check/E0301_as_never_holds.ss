dim D = 64
dim E = 32

fn narrow(x: [b n D]) -> [b n E]:
    return x as [b n E]

fn first_half(x: [b 8 D]) -> [b 4 D]:
    return x as [b 4 D]

fn longer(x: [b n D]) -> [b n+1 D]:
    return x as [b n+1 D]

# Checked as the program runs, not refused: these may hold.
fn same(x: [b n D], y: [b m D]) -> [b m D]:
    return x as [b m D]

fn spelled(x: [b n D]) -> [b n 64]:
    return x as [b n 64]
