dim D = 64

fn double(x: [b D]) -> [b D]:
	y = x + x
	return y

fn bad(x: [b D]) -> [b D]:
    return x + w

fn mixed(x: [b D]) -> [b D]:
    y = x	+ x
  	return y
