import python torch

## A size is a value, whichever axis has it: `8`, `(n+1)`.
fn second(x: [b 8 8]) -> []:
    return x.size(1)

fn sides(x: [b n+1 n+1]) -> []:
    return x.size(2)

## A size known only as the program runs has no name to write.
fn rows(x: [b 8]) -> []:
    y = torch.nonzero(x) as [?k 2]
    return y.size(0)

## Nor can `over=` pick one of two axes of 8 by its size.
fn normalized(x: [b 8 8]) -> [b 8 8]:
    return softmax(x, dim=-1)

fn computed(x: [b 8 8]) -> [b 8 8]:
    return softmax(x, dim=2 - 1)
