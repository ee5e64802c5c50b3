#!/usr/bin/env python3
"""Model checks of the synchronisation in codegen/sm90_gemm.cuh's optional schedules, under
random interleavings: a design check of the protocols as written there, not of the compiled
kernels (tests/unit/gpu/sm90_gemm_gpu_test.cc runs those against the reference on a GPU).

* ping-pong: a producer and two consumer warpgroups share a ring of stages through `full` and
  `empty` mbarriers (parity waits) and take turns through two named barriers. Checked: every
  K step reads the stage that holds it, no stage is refilled while read, no deadlock.
  `--drop-turns` removes the named barriers: a warpgroup then passes a parity wait on a phase
  two behind (the hazard the turns exist for), and the check fails.
* cluster split-K: rank 0 adds the other ranks' handed-over sums (`ready`, `freed`). Checked:
  rank 0 reads each tile's sums once, before they are overwritten, from a live CTA; no
  deadlock. `--drop-freed` removes the ranks' wait for `freed`, and the check fails.
* row clusters (a layer norm in the kernel's tail): each CTA of a cluster stores its columns
  of a row tile, one of its threads arrives on every CTA's `rowdone` barrier of the tile's
  parity (rank by rank), then it waits on its own and reads the whole rows. Checked: a tail
  reads a row tile only once every CTA has stored its columns; no arrival reaches an exited
  CTA; no deadlock. `--drop-rowdone` removes the wait on `rowdone`, and the check fails.

    python3 tools/kbench/sm90_protocols.py [--drop-turns] [--drop-freed] [--drop-rowdone]
"""
import random
import sys

DROP_TURNS = "--drop-turns" in sys.argv
DROP_FREED = "--drop-freed" in sys.argv
DROP_ROWDONE = "--drop-rowdone" in sys.argv


class MBar:
    """An mbarrier: a phase completes after `count` arrivals; a parity wait passes when the
    current (incomplete) phase's parity differs from the one asked for."""

    def __init__(self, count):
        self.count, self.pending, self.completed = count, 0, 0

    def arrive(self):
        self.pending += 1
        if self.pending == self.count:
            self.pending, self.completed = 0, self.completed + 1

    def try_wait(self, parity):
        return (self.completed & 1) != parity


def interleave(actors, rnd, limit=200000):
    """Steps randomly chosen actors (generators that yield where a thread could be
    preempted or is blocked) until all finish; "deadlock" when they stop progressing."""
    done = [False] * len(actors)
    for _ in range(limit):
        if all(done):
            return "ok"
        i = rnd.randrange(len(actors))
        if not done[i]:
            try:
                next(actors[i])
            except StopIteration:
                done[i] = True
    return "ok" if all(done) else "deadlock"


def pingpong(tiles, stages, seed):
    """One CTA's tiles (K steps each) through the ping-pong schedule."""
    rnd = random.Random(seed)
    full = [MBar(1) for _ in range(stages)]
    empty = [MBar(4) for _ in range(stages)]  # the 4 warps of the warpgroup that read it
    content = [None] * stages  # the K step a stage holds
    reading = {}  # stage -> the K step a consumer reads from it
    turns = {1: [0, 0], 2: [0, 0]}  # named barrier id -> [signals, waits passed]

    def producer():
        it = 0
        for steps in tiles:
            for _ in range(steps):
                s = it % stages
                if it >= stages:
                    while not empty[s].try_wait(((it // stages) - 1) & 1):
                        yield
                assert s not in reading, f"stage {s} refilled while step {reading[s]} is read"
                content[s] = it
                full[s].arrive()
                it += 1
                yield

    def consumer(c):
        it = 0
        for turn, steps in enumerate(tiles):
            if turn % 2 != c:  # the other warpgroup's tile
                it += steps
                continue
            if turn > 0 and not DROP_TURNS:
                while turns[1 + c][0] <= turns[1 + c][1]:
                    yield
                turns[1 + c][1] += 1
            for k in range(steps):
                s = it % stages
                while not full[s].try_wait((it // stages) & 1):
                    yield
                assert content[s] == it, f"warpgroup {c}, step {it}: stage {s} holds {content[s]}"
                reading[s] = it
                yield
                if k > 0:  # the previous step's wgmma is done: free its stage
                    del reading[(it - 1) % stages]
                    for _ in range(4):
                        empty[(it - 1) % stages].arrive()
                it += 1
            if turn + 1 < len(tiles):
                turns[2 - c][0] += 1
            del reading[(it - 1) % stages]
            for _ in range(4):
                empty[(it - 1) % stages].arrive()
            for _ in range(rnd.randint(1, 20)):  # the epilogue
                yield

    return interleave([producer(), consumer(0), consumer(1)], rnd)


def cluster_split(ranks, tiles, seed):
    """A cluster of `ranks` CTAs summing `tiles` tiles' splits in rank 0."""
    rnd = random.Random(seed)
    ready = MBar(ranks - 1)
    freed = [MBar(1) for _ in range(ranks)]
    held = [None] * ranks  # the tile whose sums a rank's handover buffer holds
    unread = [False] * ranks
    alive = [True] * ranks

    def other(r):
        for turn in range(tiles):
            for _ in range(rnd.randint(0, 5)):  # its main loop
                yield
            if turn > 0 and not DROP_FREED:
                while not freed[r].try_wait((turn - 1) & 1):
                    yield
            assert not unread[r], f"rank {r} overwrote tile {held[r]} before rank 0 read it"
            held[r], unread[r] = turn, True
            yield
            ready.arrive()
            yield
        while not freed[r].try_wait((tiles - 1) & 1):
            yield
        alive[r] = False

    def rank0():
        for turn in range(tiles):
            for _ in range(rnd.randint(0, 5)):
                yield
            while not ready.try_wait(turn & 1):
                yield
            for r in range(1, ranks):
                assert alive[r], f"rank 0 read rank {r} after it exited"
                assert held[r] == turn and unread[r], f"tile {turn}: rank {r} holds {held[r]}"
                unread[r] = False
                yield
            for r in range(1, ranks):
                freed[r].arrive()
            yield

    return interleave([rank0()] + [other(r) for r in range(1, ranks)], rnd)


def row_clusters(ranks, tiles, seed):
    """A cluster of `ranks` CTAs walking `tiles` row tiles, normalizing rows after each."""
    rnd = random.Random(seed)
    rowdone = [[MBar(ranks) for _ in range(2)] for _ in range(ranks)]  # per CTA, per parity
    stored = [set() for _ in range(ranks)]  # the tiles whose columns a CTA has stored
    alive = [True] * ranks

    def cta(r):
        for turn in range(tiles):
            for _ in range(rnd.randint(0, 8)):  # main loop and epilogue
                yield
            stored[r].add(turn)
            for p in range(ranks):  # one thread's remote arrivals, in rank order
                assert alive[p], f"rank {r} arrived on exited rank {p}"
                rowdone[p][turn & 1].arrive()
                for _ in range(rnd.randint(1, 12)):
                    yield
            while not DROP_ROWDONE and not rowdone[r][turn & 1].try_wait((turn >> 1) & 1):
                yield
            for p in range(ranks):  # the tail reads every CTA's columns of the tile
                assert turn in stored[p], f"rank {r}, tile {turn}: rank {p} has not stored it"
                yield
        alive[r] = False

    return interleave([cta(r) for r in range(ranks)], rnd)


def main():
    bad = {"ping-pong": 0, "cluster split-K": 0, "row clusters": 0}
    for seed in range(3000):
        r = random.Random(seed)
        stages = r.choice([3, 4, 5, 6, 8])
        tiles = [r.choice([1, 2, 3, 5, 12]) for _ in range(r.randint(1, 6))]
        ranks, cluster_tiles = r.randint(2, 8), r.randint(1, 7)
        for name, check in (("ping-pong", lambda: pingpong(tiles, stages, seed)),
                            ("cluster split-K", lambda: cluster_split(ranks, cluster_tiles, seed)),
                            ("row clusters", lambda: row_clusters(ranks, cluster_tiles, seed))):
            try:
                result = check()
            except AssertionError as e:
                result = str(e)
            if result != "ok":
                bad[name] += 1
                if bad[name] <= 3:
                    print(f"{name}, seed {seed}: {result}")
    print(", ".join(f"{name}: {n} of 3000 interleavings failed" for name, n in bad.items()))
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
