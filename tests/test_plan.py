"""Run order: randomised rounds, A/B alternation, warm-ups first, accumulate in order."""

from collections import Counter

from quadscope.run.plan import PlannedRun, plan_accumulate, plan_runs


def test_every_size_repeat_pair_once_after_warmups() -> None:
    """Each (size, repeat) appears exactly once, after the warm-ups."""
    plan = plan_runs([10, 20, 40, 80], repeat=3, warmup=2, seed=1)
    assert [p.warmup for p in plan[:2]] == [True, True]
    measured = [(p.size_n, p.repeat) for p in plan if not p.warmup]
    assert Counter(measured) == Counter({(n, r): 1 for n in (10, 20, 40, 80) for r in range(3)})


def test_rounds_interleave_sizes_never_size_after_size() -> None:
    """Round r holds repeat r of every size, so no size's repeats run back to back as a block."""
    plan = [p for p in plan_runs([1, 2, 3, 4, 5], repeat=4, warmup=0, seed=3)]
    for r in range(4):
        assert sorted(p.size_n for p in plan[5 * r: 5 * r + 5]) == [1, 2, 3, 4, 5]
        assert {p.repeat for p in plan[5 * r: 5 * r + 5]} == {r}


def test_order_is_random_but_seeded() -> None:
    """The same seed gives the same order; another seed a different one; neither is sorted."""
    a = plan_runs(list(range(1, 13)), repeat=2, warmup=0, seed=7)
    b = plan_runs(list(range(1, 13)), repeat=2, warmup=0, seed=7)
    c = plan_runs(list(range(1, 13)), repeat=2, warmup=0, seed=8)
    assert a == b
    assert a != c
    assert [p.size_n for p in a[:12]] != sorted(p.size_n for p in a[:12])


def test_variants_alternate() -> None:
    """With a B command, runs go A B A B at the same sizes."""
    plan = plan_runs([1, 2, 3, 4], repeat=2, warmup=1, seed=0, variants=("A", "B"))
    assert [p.variant for p in plan] == ["A", "B"] * (len(plan) // 2)
    pairs = list(zip(plan[::2], plan[1::2], strict=True))
    assert all(a.size_n == b.size_n and a.repeat == b.repeat for a, b in pairs)


def test_accumulate_is_in_launch_order() -> None:
    """Accumulate mode launches i = 1..K in order, alternating variants, no warm-up."""
    assert plan_accumulate(3, variants=("A", "B")) == [
        PlannedRun("A", 1, 0), PlannedRun("B", 1, 0), PlannedRun("A", 2, 0),
        PlannedRun("B", 2, 0), PlannedRun("A", 3, 0), PlannedRun("B", 3, 0),
    ]
