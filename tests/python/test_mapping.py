"""The runtime's one mapping search (python/shapescript/runtime/mapping.py) on small synthetic cases:
slots and candidates of plain strings, a `difference` that counts how far a mapping is from a
hidden answer. No model, no torch."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from shapescript.runtime import mapping  # noqa: E402


def distance_to(answer, runs=None):
    """difference(mapping): how many slots differ from `answer` (0: agrees), counting the runs."""

    def difference(candidate):
        if runs is not None:
            runs.append(dict(candidate))
        return float(sum(candidate.get(slot) != wanted for slot, wanted in answer.items())), None

    return difference


def distinct(slot, candidate, partial, state):
    """A constraint: no candidate twice (the import's free sources)."""
    return None if candidate in partial.values() else state


def test_backtracking_yields_complete_mappings_in_rank_order_under_the_constraint():
    search = mapping.Backtracking(["a", "b"], lambda slot: ["x", "y", "z"], distinct)
    found = [m for m, _ in search.mappings()]
    assert found[0] == {"a": "x", "b": "y"}
    assert found == [{"a": a, "b": b} for a in "xyz" for b in "xyz" if a != b]
    assert search.deepest == 2


def test_backtracking_threads_the_constraints_state_and_says_how_deep_it_got():
    # The gguf's shape unification: a slot's candidate binds a size every later slot must agree with.
    sizes = {"w8": 8, "w4": 4, "v8": 8, "v4": 4}
    patterns = {"a": 1, "b": 1, "c": 2}  # c is twice a's size

    def binds(slot, candidate, partial, size):
        if candidate in partial.values():
            return None
        want = sizes[candidate] // patterns[slot]
        if sizes[candidate] % patterns[slot] or size not in (0, want):  # 0: no size bound yet
            return None
        return want

    search = mapping.Backtracking(["a", "b", "c"], lambda slot: list(sizes), binds)
    found = list(search.mappings(0))
    assert found[0] == ({"a": "w4", "b": "v4", "c": "w8"}, 4)
    assert all(sizes[m["a"]] == sizes[m["b"]] == sizes[m["c"]] // 2 for m, _ in found)
    assert len(found) == 4  # a, b: the two 4s either way round; c: either 8

    # Nothing of size 3 for `c`: the search gets two slots deep and no further (a = w8, tried last, only one).
    sizes = {"w4": 4, "v4": 4, "w8": 8}
    patterns = {"a": 1, "b": 1, "c": 3}
    search = mapping.Backtracking(["a", "b", "c"], lambda slot: list(sizes), binds)
    assert list(search.mappings(0)) == []
    assert search.deepest == 2


def test_the_first_agreeing_mapping_is_found_and_the_nearest_kept():
    answer = {"a": "y", "b": "x"}
    runs = []
    verifier = mapping.Verifier(distance_to(answer, runs), tolerance=0.5, budget=100)
    search = mapping.Backtracking(["a", "b"], lambda slot: ["x", "y", "z"], distinct)
    trial = verifier.first_agreeing(m for m, _ in search.mappings())
    assert trial.mapping == answer and trial.difference == 0
    assert runs == [{"a": "x", "b": "y"}, {"a": "x", "b": "z"}, {"a": "y", "b": "x"}]
    assert verifier.tried == 3 and verifier.nearest is trial


def test_the_budget_is_respected_and_no_mapping_past_it_is_drawn():
    drawn = []

    def mappings():
        for i in range(10):
            drawn.append(i)
            yield {"a": i}

    verifier = mapping.Verifier(lambda m: (1.0 + m["a"] % 3, m["a"]), tolerance=0.5, budget=4)
    assert verifier.first_agreeing(mappings()) is None
    assert verifier.tried == 4 and verifier.spent
    assert drawn == [0, 1, 2, 3]
    # The nearest: the smallest difference, the first of equals (a = 0 and a = 3 both differ by 1).
    assert verifier.nearest.mapping == {"a": 0} and verifier.nearest.detail == 0
    assert verifier.first_agreeing(mappings()) is None and verifier.tried == 4  # spent: nothing more is run


def test_a_nearness_of_the_callers_orders_the_nearest():
    # The import's: more agreeing first positions is nearer than a smaller difference.
    verifier = mapping.Verifier(lambda m: m["said"], tolerance=0.1, budget=10, nearness=lambda t: (-t.detail, t.difference))
    verifier.verify({"said": (0.5, 0)})
    verifier.verify({"said": (0.9, 3)})
    verifier.verify({"said": (0.2, 1)})
    assert verifier.nearest.difference == 0.9


def test_the_runner_up_is_the_nearest_other_mapping():
    verifier = mapping.Verifier(lambda m: (m["d"], None), tolerance=0.1, budget=10)
    chosen = {"slot": "right", "d": 0.0}
    for mapping_run in ({"slot": "far", "d": 5.0}, {"slot": "near", "d": 2.0}, chosen, {"slot": "near too", "d": 2.0}):
        verifier.verify(mapping_run)
    other = verifier.runner_up(chosen, differs=lambda a, b: a["slot"] != b["slot"])
    assert other.mapping["slot"] == "near" and other.difference == 2.0


def test_a_runner_up_never_run_is_run_from_the_alternatives():
    runs = []
    verifier = mapping.Verifier(distance_to({"a": "x", "b": "y"}, runs), tolerance=0.5, budget=10)
    chosen = {"a": "x", "b": "y"}
    verifier.verify(chosen)
    assert verifier.runner_up(chosen) is None  # no alternative: nothing to say
    other = verifier.runner_up(chosen, alternatives=iter([{"a": "y", "b": "x"}, {"a": "z", "b": "y"}]))
    assert other.mapping == {"a": "y", "b": "x"} and other.difference == 2
    assert len(runs) == 2  # only the first alternative is run


def test_greedy_takes_best_ranks_first_and_the_constraint_decides_the_rest():
    # Both slots rank `x` first; b's score for it is higher, so b takes it and a its next free one.
    candidates = {"a": ["x", "y"], "b": ["x", "z"], "c": ["x"]}
    scores = {"a": [1.0, 0.5], "b": [2.0, 0.1], "c": [0.0]}
    admits = lambda slot, candidate, partial: candidate not in partial.values()  # noqa: E731
    got = mapping.greedy(candidates, scores, admits)
    assert got["b"] == "x" and got["a"] == "y"
    assert got["c"] == "x"  # nothing free is left for c: its first candidate, shared


def test_local_moves_change_one_slot_or_swap_two():
    candidates = {"a": ["x", "y", "z"], "b": ["y", "x"]}
    admits = lambda slot, candidate, partial: candidate not in partial.values()  # noqa: E731
    holds = lambda theirs, wanted: theirs == wanted  # noqa: E731
    moves = list(mapping.local_moves({"a": "x", "b": "y"}, candidates, admits, holds))
    assert moves == [{"a": "y", "b": "x"}, {"a": "z"}, {"b": "x", "a": "y"}]
    # A width of 1: only each slot's first candidate is looked at (a's `x` is b's, and b can't take a's `z`).
    assert list(mapping.local_moves({"a": "z", "b": "x"}, candidates, admits, holds, width=1)) == [{"b": "y"}]


def test_closest_first_puts_the_cheapest_moves_first_and_keeps_the_rest():
    moves = [{"m": i} for i in range(6)]
    cost = lambda move: abs(move["m"] - 4)  # noqa: E731
    assert [m["m"] for m in mapping.closest_first(iter(moves), cost, first=2)] == [4, 3, 0, 1, 2, 5]
    assert len(mapping.closest_first(iter(moves), cost, first=2, limit=3)) == 3


def test_repair_moves_to_the_answer_within_the_budget():
    answer = {"a": "z", "b": "x", "c": "y"}
    candidates = {slot: ["x", "y", "z"] for slot in answer}
    admits = lambda slot, candidate, partial: candidate not in partial.values()  # noqa: E731
    holds = lambda theirs, wanted: theirs == wanted  # noqa: E731
    moves = lambda m: mapping.local_moves(m, candidates, admits, holds)  # noqa: E731

    verifier = mapping.Verifier(distance_to(answer), tolerance=0.5, budget=50)
    start = {"a": "x", "b": "y", "c": "z"}
    taken = []
    got, difference = mapping.repair(start, verifier.verify(start).difference, moves, verifier,
                                     on_move=lambda move, d: taken.append((move, d)))
    assert got == answer and difference == 0
    assert [d for _, d in taken] == sorted((d for _, d in taken), reverse=True)  # each move took the difference down
    assert verifier.tried <= 50

    # The same with a budget of 2 runs: one move is tried, none more.
    verifier = mapping.Verifier(distance_to(answer), tolerance=0.5, budget=2)
    got, difference = mapping.repair(start, verifier.verify(start).difference, moves, verifier)
    assert verifier.tried == 2 and difference > 0

    # going() stops it before any move.
    verifier = mapping.Verifier(distance_to(answer), tolerance=0.5, budget=50)
    got, difference = mapping.repair(start, verifier.verify(start).difference, moves, verifier, going=lambda: False)
    assert got == start and verifier.tried == 1


def test_repair_stops_when_no_move_helps():
    # A move must bring the difference under 0.9 of the current one: 0.9 of 1.0 isn't enough.
    verifier = mapping.Verifier(lambda m: (1.0 if m["a"] == "x" else 0.9, None), tolerance=0.5, budget=50)
    start = {"a": "x"}
    got, difference = mapping.repair(start, verifier.verify(start).difference, lambda m: [{"a": "y"}, {"a": "z"}], verifier)
    assert got == start and difference == 1.0
    assert verifier.tried == 3  # the start and each move once
