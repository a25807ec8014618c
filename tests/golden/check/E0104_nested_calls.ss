# Generated code can nest deeper than any person writes; past the limit it is one E0104,
# and the rest of the file is checked as usual.
fn f(x: [n]) -> [n]:
    return (
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        relu(relu(relu(relu(relu(relu(relu(relu(relu(relu(
        x
        ))))))))))))))))))))))))))))))))))))))))))))))))))
        ))))))))))))))))))))))))))))))))))))))))))))))))))
        ))))))))))))))))))))))))))))))))))))))))))))))))))
        ))))))))))))))))))))))))))))))))))))))))))))))))))
        ))))))))))))))))))))))))))))))))))))))))))))))))))
        )))))))))))))))))))))))))))))))))))))))))))))))))))

fn g(x: [n]) -> [n]:
    return y
