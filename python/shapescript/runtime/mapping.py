"""The one mapping search of the runtime: import-weights (a Hugging Face folder's tensors onto the
model's params, import_weights.py) and --gguf (the model's fields onto llama.cpp's tensors,
gguf_export.py) both find their mapping here.

A mapping gives each slot (a param; an architecture's tensor) one of its candidates (a reading of
the folder's tensors; a field), which the caller ranks best first. A constraint says whether a
candidate may join a partial mapping -- its sources are still free, its shape unifies with the
sizes bound so far -- and may carry a state along (those sizes). The numbers decide: the caller's
`difference(mapping)` runs a complete mapping against the reference (a forward's logits against
transformers' or llama.cpp's), and the first within the tolerance is the one, within a budget of
runs. The nearest mapping run says how near a refusal came; the runner-up, the nearest other
mapping, says by how much the alternative to the chosen one lost.

Complete mappings come in rank order from `Backtracking` (every way, slot after slot, candidates
in their order) or from `greedy` (the best-ranked free candidate of each slot at once), which
`repair` then improves by local moves (`local_moves`: one slot's candidate changed, two swapped).
Nothing here knows tensors: slots and candidates are whatever the caller compares with `is`/`==`.
"""

from __future__ import annotations

import itertools


class Trial:
    """One mapping run: its difference from the reference and what else the run said (`detail`:
    the hyperparameters it fitted, the logits it gave)."""

    __slots__ = ("mapping", "difference", "detail")

    def __init__(self, mapping, difference, detail=None):
        self.mapping, self.difference, self.detail = mapping, difference, detail


class Verifier:
    """Runs mappings against the reference within a budget, and remembers every run.

    difference(mapping) -> (difference, detail); a mapping agrees when its difference is under the
    tolerance. `nearness(trial)` orders the runs for `nearest` (default: the difference; the first
    of equals stays). A mapping isn't changed after it is run: the trials keep it."""

    def __init__(self, difference, tolerance, budget, nearness=None):
        self.difference_of, self.tolerance, self.budget = difference, tolerance, budget
        self.nearness = nearness or (lambda trial: trial.difference)
        self.trials = []
        self.nearest = None

    @property
    def tried(self):
        return len(self.trials)

    @property
    def spent(self):
        return self.tried >= self.budget

    def agrees(self, difference):
        return difference < self.tolerance

    def verify(self, mapping):
        difference, detail = self.difference_of(mapping)
        trial = Trial(mapping, difference, detail)
        self.trials.append(trial)
        if self.nearest is None or self.nearness(trial) < self.nearness(self.nearest):
            self.nearest = trial
        return trial

    def first_agreeing(self, mappings):
        """The trial of the first of `mappings` (an iterable in rank order) that agrees, or None when
        none does within the budget; no mapping past the budget is drawn from the iterable."""
        if self.spent:
            return None
        for mapping in mappings:
            trial = self.verify(mapping)
            if self.agrees(trial.difference):
                return trial
            if self.spent:
                return None
        return None

    def runner_up(self, chosen, differs=None, alternatives=()):
        """The nearest trial (by difference) of a mapping other than `chosen`; when every run was of
        `chosen`, the first of `alternatives` (mappings ranked closest to it) is run to say the margin.
        differs(a, b): whether two mappings differ (default: some slot's candidate isn't the same)."""
        differs = differs or _differs
        others = [t for t in self.trials if differs(t.mapping, chosen)]
        if not others:
            alternative = next(iter(alternatives), None)
            if alternative is None:
                return None
            others = [self.verify(alternative)]
        return min(others, key=lambda trial: trial.difference)


def _differs(a, b):
    return any(a.get(slot) is not candidate for slot, candidate in b.items())


class Backtracking:
    """Every complete mapping, in rank order: slot after slot (in the order given), each slot's
    candidates in their order, a candidate taken where constraint(slot, candidate, partial, state)
    gives the state extended (None: it may not join). `deepest` becomes the most slots placed at
    once, which says where the constraint stopped admitting."""

    def __init__(self, slots, candidates, constraint):
        self.slots, self.candidates, self.constraint = list(slots), candidates, constraint
        self.deepest = 0

    def mappings(self, state=()):
        """Yields (mapping, state) for each complete mapping. A constraint that carries nothing gives
        back the state it is given (never None, which says no)."""
        partial = {}

        def place(j, state):
            self.deepest = max(self.deepest, j)
            if j == len(self.slots):
                yield dict(partial), state
                return
            slot = self.slots[j]
            for candidate in self.candidates(slot):
                extended = self.constraint(slot, candidate, partial, state)
                if extended is None:
                    continue
                partial[slot] = candidate
                yield from place(j + 1, extended)
                del partial[slot]

        yield from place(0, state)


def greedy(candidates, scores, admits):
    """A first mapping, without running anything: the pairs of every slot and candidate, best rank
    first and among equal ranks best score first, each slot taking the first the constraint
    admits(slot, candidate, partial) lets join; a slot none is admitted for (a tied or shared
    source) takes its first candidate. candidates, scores: slot -> lists in rank order."""
    pairs = []
    for slot, ranked in candidates.items():
        for rank, candidate in enumerate(ranked):
            pairs.append((rank, -scores[slot][rank], slot, candidate))
    pairs.sort(key=lambda pair: pair[:2])
    mapping = {}
    for _, _, slot, candidate in pairs:
        if slot not in mapping and admits(slot, candidate, mapping):
            mapping[slot] = candidate
    for slot, ranked in candidates.items():
        if slot not in mapping and ranked:
            mapping[slot] = ranked[0]
    return mapping


def local_moves(mapping, candidates, admits, holds, width=12):
    """Moves from a complete mapping ({slot: candidate} to change): each slot's first `width`
    candidates, taken alone where admits(slot, candidate, the mapping without the slot), else swapped
    with a slot whose candidate holds what it needs (holds(theirs, wanted)) where that slot may take
    this one's."""
    slots = list(candidates)
    for slot in slots:
        for candidate in candidates[slot][:width]:
            if candidate is mapping[slot]:
                continue
            if admits(slot, candidate, {s: c for s, c in mapping.items() if s != slot}):
                yield {slot: candidate}
                continue
            for other in slots:
                if other != slot and holds(mapping[other], candidate):
                    old = mapping[slot]
                    if any(c is old for c in candidates[other]):
                        yield {slot: candidate, other: old}


def closest_first(moves, cost, first=32, limit=5000):
    """The moves (at most `limit`): the `first` of least cost, then the rest in their own order (a
    move the ranking puts far is still reached, after the near ones)."""
    moves = list(itertools.islice(moves, limit))
    closest = sorted(range(len(moves)), key=lambda i: cost(moves[i]))[:first]
    chosen = set(closest)
    return [moves[i] for i in closest] + [m for i, m in enumerate(moves) if i not in chosen]


def repair(mapping, current, moves, verifier, going=lambda: True, on_move=None, gain=0.9):
    """Local search from a complete mapping whose difference is `current`: the moves of the mapping
    (moves(mapping), best first) are run in turn and the first that agrees or brings the difference
    under `gain` of the current one is taken, again from the new mapping, until the mapping agrees,
    no move helps, the budget is spent or going() says stop. Returns (mapping, difference)."""
    while current >= verifier.tolerance and not verifier.spent and going():  # a NaN difference stops too
        improved = False
        for move in moves(mapping):
            if verifier.spent:
                break
            trial = {**mapping, **move}
            difference = verifier.verify(trial).difference
            if difference < current * gain or verifier.agrees(difference):
                mapping, current, improved = trial, difference, True
                if on_move:
                    on_move(move, difference)
                break
        if not improved:
            break
    return mapping, current

