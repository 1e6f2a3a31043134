"""Run order: randomised rounds, A/B alternation, warm-ups first, accumulate in order; FixedPlan."""

from collections import Counter

from tests.conftest import measurement

from quadscope.model import Run
from quadscope.run.plan import FixedPlan, PlannedRun, Scheduled, plan_accumulate, plan_runs


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
    """Accumulate mode launches i = 1..K in order, each variant as one block, no warm-up."""
    assert plan_accumulate(3, variants=("A", "B")) == [
        PlannedRun("A", 1, 0), PlannedRun("A", 2, 0), PlannedRun("A", 3, 0),
        PlannedRun("B", 1, 0), PlannedRun("B", 2, 0), PlannedRun("B", 3, 0),
    ]


def _stored(p: PlannedRun, seq: int) -> Run:
    return Run(sweep_id=1, seq=seq, variant=p.variant, size_n=p.size_n, repeat=p.repeat,
               warmup=p.warmup, started_at=0.0, measurement=measurement(0.1))


def test_fixed_plan_hands_over_the_whole_order_once() -> None:
    """A fresh fixed plan is one batch: every run in plan order with the sweep's timeout; then done."""
    order = plan_runs([1, 2, 3], repeat=2, warmup=1, seed=4, variants=("A", "B"))
    plan = FixedPlan(tuple(order), 5.0)
    assert plan.total_runs == 14
    assert plan.next_batch((), None) == tuple(Scheduled(p, 5.0) for p in order)
    assert plan.next_batch([_stored(p, i) for i, p in enumerate(order)], None) is None


def test_fixed_plan_after_an_interruption_hands_over_exactly_what_is_missing() -> None:
    """Given the runs stored so far, the batch is the rest of the plan, its A B order intact."""
    order = plan_runs([1, 2, 3], repeat=2, warmup=0, seed=4, variants=("A", "B"))
    done = [_stored(p, i) for i, p in enumerate(order[:5])]
    assert FixedPlan(tuple(order), None).next_batch(done, None) == tuple(
        Scheduled(p, None) for p in order[5:])
