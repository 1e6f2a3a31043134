"""The Callgrind output parser on small hand-written files (no process runs)."""

from __future__ import annotations

from quadscope.profile.callgrind_format import (
    UNKNOWN,
    FunctionKey,
    FunctionSite,
    merge,
    parse_callgrind,
)

PROG = "/home/u/prog"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
MAIN = FunctionKey("main", PROG)
APPEND = FunctionKey("append_field", PROG)
STRCAT = FunctionKey("__strcat_avx2", LIBC)

# main (7 own) -> append_field (20 own, 5 of them inlined from string.h) -> strcat (800).
COMPRESSED = """\
# callgrind format
version: 1
creator: hand
pid: 10
cmd: ./prog 5
part: 1

desc: Trigger: Program termination

positions: line
events: Ir
summary: 827

ob=(1) /home/u/prog
fl=(1) /home/u/prog.c
fn=(1) main
40 5
cfn=(2) append_field
calls=1 -20
* 820
+1 2

fn=(2)
20 3
fi=(2) /usr/include/string.h
5 7
fe=(1)
22 10
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(3) ./string/strcat-avx2.S
cfn=(3) __strcat_avx2
calls=4 100
23 800

ob=(2)
fl=(3)
fn=(3)
100 300
+1 500

totals: 827
"""


def test_compressed_names_self_and_call_counts() -> None:
    """`(id) name` defines, `(id)` refers: each function's self count and each call's cost."""
    c = parse_callgrind(COMPRESSED)
    assert c.self_ir == {MAIN: 7, APPEND: 20, STRCAT: 800}
    assert c.calls_ir == {(MAIN, APPEND): 820, (APPEND, STRCAT): 800}
    assert c.total_ir == 827
    assert c.commands == ("./prog 5",)


def test_each_call_has_the_line_of_its_costliest_site() -> None:
    """main calls append_field on line 40 (the `*` after `calls=`), which calls strcat on 23."""
    c = parse_callgrind(COMPRESSED)
    assert c.call_sites == {(MAIN, APPEND): FunctionSite("/home/u/prog.c", 40),
                            (APPEND, STRCAT): FunctionSite("/home/u/prog.c", 23)}


def test_a_call_from_inlined_code_is_placed_in_that_code_s_file() -> None:
    """A call under fi= (a helper inlined from util.h) has util.h's line; the heavier site wins."""
    text = """\
positions: line
events: Ir
ob=(1) /p
fl=(1) main.c
fn=(1) main
20 1
cfn=(2) strcat
calls=1 0
21 5
fi=(2) util.h
cfn=(2)
calls=9 0
7 90
"""
    c = parse_callgrind(text)
    edge = (FunctionKey("main", "/p"), FunctionKey("strcat", "/p"))
    assert c.calls_ir[edge] == 95
    assert c.call_sites[edge] == FunctionSite("util.h", 7)
    assert c.sites[FunctionKey("main", "/p")] == FunctionSite("main.c", 20)


def test_inclusive_is_self_plus_calls() -> None:
    """main's inclusive count is the whole program; strcat's is its own."""
    c = parse_callgrind(COMPRESSED)
    assert [c.inclusive(f) for f in (MAIN, APPEND, STRCAT)] == [827, 820, 800]
    assert c.callees(APPEND) == {STRCAT: 800}


def test_site_is_the_lowest_own_line_in_its_file_not_an_inlined_one() -> None:
    """append_field's line 5 is string.h's (under fi=): its site is prog.c:20, its entry."""
    c = parse_callgrind(COMPRESSED)
    assert c.sites[APPEND] == FunctionSite("/home/u/prog.c", 20)
    assert c.sites[MAIN] == FunctionSite("/home/u/prog.c", 40)
    assert c.sites[STRCAT] == FunctionSite("./string/strcat-avx2.S", 100)


def test_code_inlined_from_higher_up_the_same_file_does_not_move_the_site() -> None:
    """main (entered at 18, prologue on 17) holds append_field's lines 6-7: its site is 17."""
    text = """\
positions: line
events: Ir
ob=(1) /p
fl=(1) c.c
fn=(1) (below main)
0 1
cfn=(2) main
calls=1 18
0 40
fn=(2)
17 2
18 3
6 10
7 20
19 5
"""
    c = parse_callgrind(text)
    assert c.sites[FunctionKey("main", "/p")] == FunctionSite("c.c", 17)


def test_relative_positions_and_a_call_target_that_does_not_move_them() -> None:
    """`calls=1 -20` names line 20 for the callee; the `*` after it is still line 40."""
    text = """\
positions: line
events: Ir
fl=(1) a.c
fn=(1) f
40 1
cfn=(2) g
calls=1 -20
* 5
* 2
+3 4
fn=(2)
20 5
"""
    c = parse_callgrind(text)
    f, g = FunctionKey("f", UNKNOWN), FunctionKey("g", UNKNOWN)
    assert c.self_ir == {f: 7, g: 5}
    assert c.sites[f] == FunctionSite("a.c", 40)
    assert c.sites[g] == FunctionSite("a.c", 20)


def test_recursion_is_not_counted_twice() -> None:
    """fact calls itself: its inclusive count is its self plus its calls to others only."""
    text = """\
positions: line
events: Ir
ob=(1) /p
fl=(1) r.c
fn=(1) fact
3 30
cfn=(1)
calls=9 3
4 27
cfn=(2) helper
calls=10 9
5 10
fn=(2)
9 10
"""
    c = parse_callgrind(text)
    fact = FunctionKey("fact", "/p")
    assert c.self_ir[fact] == 30
    assert c.inclusive(fact) == 40
    assert c.callees(fact) == {FunctionKey("helper", "/p"): 10}


def test_two_position_columns_and_several_events_read_the_line_and_the_first_event() -> None:
    """`positions: instr line` and `events: Ir Dr`: the line is the second column, Ir the cost."""
    text = """\
positions: instr line
events: Ir Dr
fl=(1) x.c
fn=(1) f
0x10 7 3 1
+4 -2 5 9
"""
    c = parse_callgrind(text)
    f = FunctionKey("f", UNKNOWN)
    assert c.self_ir == {f: 8}
    assert c.sites[f] == FunctionSite("x.c", 5)


def test_processes_are_summed() -> None:
    """--trace-children writes one file per process: merge adds them per function and call."""
    other = COMPRESSED.replace("cmd: ./prog 5", "cmd: ./prog 6")
    c = merge([parse_callgrind(COMPRESSED), parse_callgrind(other)])
    assert c.self_ir == {MAIN: 14, APPEND: 40, STRCAT: 1600}
    assert c.calls_ir[(APPEND, STRCAT)] == 1600
    assert c.commands == ("./prog 5", "./prog 6")
    assert c.sites[APPEND] == FunctionSite("/home/u/prog.c", 20)
