"""Exact per-function growth: fits, ranking, the user's function and its sentence. Pure."""

from __future__ import annotations

import pytest

from quadscope.profile.callgrind import CallgrindRuns
from quadscope.profile.callgrind_format import CallgrindCounts, FunctionKey, FunctionSite
from quadscope.profile.exact_attach import attach_exact, exact_culprits, wants_exact
from quadscope.profile.exact_growth import (
    ExactCulprit,
    culprit_sentence,
    exact_growth,
    is_user_object,
    plain_name,
)
from quadscope.profile.records import Attribution, Culprit

PROG = "/home/u/csvjoin"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
START = FunctionKey("(below main)", PROG)
MAIN = FunctionKey("main", PROG)
APPEND = FunctionKey("append_field", PROG)
CHECK = FunctionKey("checksum", PROG)
STRCAT = FunctionKey("__strcat_avx2", LIBC)
LOADER = FunctionKey("_dl_relocate_object", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
SIZES = (1000, 2000, 4000, 8000)
SITES = {APPEND: FunctionSite("/home/u/csvjoin.c", 14), MAIN: FunctionSite("/home/u/csvjoin.c", 30),
         CHECK: FunctionSite("/home/u/csvjoin.c", 22)}


def _counts(n: int, quadratic_in_libc: bool = True) -> CallgrindCounts:
    """main -> append_field -> strcat (n²/2 + 20 n), main -> checksum (9 n), a fixed loader."""
    strcat = n * n // 2 + 20 * n
    own = 12 * n if quadratic_in_libc else 12 * n + strcat
    self_ir = {START: 11, MAIN: 50, APPEND: own, CHECK: 9 * n, LOADER: 120_000}
    calls = {(START, MAIN): 50 + own + 9 * n + (strcat if quadratic_in_libc else 0),
             (MAIN, CHECK): 9 * n}
    if quadratic_in_libc:
        self_ir[STRCAT] = strcat
        calls[(APPEND, STRCAT)] = strcat
        calls[(MAIN, APPEND)] = own + strcat
    else:
        calls[(MAIN, APPEND)] = own
    return CallgrindCounts(self_ir, calls, SITES,
                           call_sites={(APPEND, STRCAT): FunctionSite("/home/u/csvjoin.c", 16)})


def test_user_function_calling_the_libc_leaf_is_named_with_its_calls() -> None:
    """append_field carries strcat's n² work: named with its file:line, not strcat or main."""
    g = exact_growth(SIZES, [_counts(n) for n in SIZES])
    c = g.culprit
    assert c is not None
    assert (c.name, c.file, c.line, c.via, c.cls) == (
        "append_field", "/home/u/csvjoin.c", 14, "strcat", "n^2")
    assert c.share_at_max == pytest.approx(_counts(8000).self_ir[STRCAT] / _counts(8000).total_ir)
    assert c.grows_superlinearly
    assert g.sentence == ("append_field (csvjoin.c:14) makes it grow: its calls to strcat at line 16 "
                          "are n², 99% of the work at n = 8k")


def test_functions_are_ranked_by_growth_beyond_linear_with_settled_classes() -> None:
    """strcat first (all of the excess), checksum n, the loader constant; no inconclusive.

    Rows are the functions doing work themselves: main, whose work is its callees', is none."""
    g = exact_growth(SIZES, [_counts(n) for n in SIZES])
    by_name = {r.name: r for r in g.functions}
    assert g.functions[0].name == "__strcat_avx2"
    assert g.functions[0].superlinear_share == pytest.approx(1.0)
    assert g.functions[0].caller == "append_field"
    assert by_name["checksum"].self_class == "n"
    assert by_name["_dl_relocate_object"].self_class == "1"
    assert by_name["append_field"].inclusive_class == "n^2"
    assert by_name["append_field"].self_class == "n"
    assert by_name["append_field"].user and not by_name["__strcat_avx2"].user
    assert "main" not in by_name  # 50 instructions of its own: not a row


def test_growth_in_the_user_functions_own_code_says_so() -> None:
    """With the quadratic loop in append_field itself, the sentence says its own code."""
    g = exact_growth(SIZES, [_counts(n, quadratic_in_libc=False) for n in SIZES])
    assert g.culprit is not None and g.culprit.via is None
    assert g.sentence.startswith("append_field (csvjoin.c:14) makes it grow: its own code is n², ")


def test_fewer_than_two_sizes_is_refused() -> None:
    from quadscope.errors import FitRefusedError
    with pytest.raises(FitRefusedError):
        exact_growth((1000,), [_counts(1000)])


def test_a_call_from_inlined_code_names_that_code_s_file() -> None:
    """main with a helper inlined from util.h: the call's line is util.h's, named with it."""
    c = ExactCulprit("main", "/home/u/main.c", 20, "strcat", "n^2", 2.0, 0.9, 1000, True,
                     FunctionSite("/home/u/util.h", 7))
    assert culprit_sentence(c) == ("main (main.c:20) makes it grow: its calls to strcat at "
                                   "util.h:7 are n², 90% of the work at n = 1k")


def test_sentence_without_a_line_or_superlinear_growth() -> None:
    """No debug info: no (file:line); linear growth: "does the most growing work"."""
    c = ExactCulprit("work", "???", 0, None, "n", 1.0, 0.5, 80_000, False)
    assert culprit_sentence(c) == ("work does the most growing work: its own code is n, "
                                   "50% of the work at n = 80k")


@pytest.mark.parametrize(("name", "plain"), [
    ("__strcat_avx2", "strcat"), ("__memset_avx2_unaligned_erms", "memset"),
    ("__strlen_evex", "strlen"), ("__libc_start_main", "__libc_start_main"),
    ("append_field", "append_field"), ("memmove", "memmove")])
def test_libc_variants_are_named_as_called(name: str, plain: str) -> None:
    assert plain_name(name) == plain


def test_user_objects_are_the_programs_own() -> None:
    assert is_user_object("/home/u/csvjoin") and is_user_object("/tmp/x/libmine.so")
    assert not is_user_object(LIBC) and not is_user_object("???")
    assert not is_user_object("/usr/libexec/valgrind/vgpreload_core-amd64-linux.so")


def test_attach_keeps_kernel_rows_and_stores_the_sentence() -> None:
    """The exact rows replace the sampled ones, the kernel's stay; the blob round-trips."""
    g = exact_growth(SIZES, [_counts(n) for n in SIZES])
    kernel = Culprit("clear_page_erms", "[kernel.kallsyms]", "n", 1.0, None, 0.1, 0.1, 0.1, 0.1,
                     (0.1,), ("main", "clear_page_erms"))
    sampled = Culprit("[unknown]", PROG, "n^2", 2.0, None, 0.9, 0.9, 0.9, 0.9, (0.1,), ())
    a = Attribution(1, SIZES, "perf", "cpu-clock", (1, 2, 3, 4), (sampled, kernel), (), "", "",
                    True)
    out = attach_exact(a, g, CallgrindRuns(SIZES, (), 1.5, 2.0))
    assert out.culprits[0].call_path == ("append_field", "__strcat_avx2")
    assert out.culprits[-1] == kernel and sampled not in out.culprits
    assert out.culprit_sentence == g.sentence
    back = Attribution.from_dict(out.to_dict())
    assert back.culprit_sentence == g.sentence
    assert back.extra["callgrind"]["culprit"]["name"] == "append_field"
    assert a.culprit_sentence is None
    assert len(exact_culprits(g, limit=2)) == 2


def test_only_native_commands_are_counted() -> None:
    assert wants_exact(("./csvjoin", "{n}"))
    assert not wants_exact(("python3", "x.py"))
    assert not wants_exact(())
    assert not wants_exact(("python:textkit.core:unique_words", "{n}"))


def test_terminal_and_page_show_the_sentence_under_the_headline() -> None:
    """The terminal's second line is the sentence (escaped); the page's banner carries it
    under the verdict, and the growth section comes before the metrics."""
    from quadscope.analyse.analysis import analyse
    from quadscope.model import Measurement, Run, Sweep
    from quadscope.render.html import HtmlRenderer
    from quadscope.render.terminal import TerminalRenderer

    sweep = Sweep(id=7, name="t", mode="sizes", command=("./csvjoin", "{n}"),
                  sizes=SIZES, repeat=1)
    runs = [Run(7, i, "A", n, 0, False, 0.0,
                Measurement(wall_s=1e-3 + 1e-9 * n * n, user_s=1e-9 * n * n, exit_code=0))
            for i, n in enumerate(SIZES)]
    g = exact_growth(SIZES, [_counts(n) for n in SIZES])
    said = g.sentence.replace("append_field", "append_<b>field")
    profile = attach_exact(
        Attribution(7, SIZES, "perf", "cpu-clock", (1, 2, 3, 4), (), (), "", "", True),
        g, CallgrindRuns(SIZES, (), 1.0, 2.0))
    profile = Attribution.from_dict({**profile.to_dict(),
                                     "extra": {**profile.extra, "culprit_sentence": said}})
    a = analyse(sweep, runs, profile=profile)
    lines = TerminalRenderer(width=200).render(a).decode().splitlines()
    assert lines[1] == said
    page = HtmlRenderer().render(a).decode()
    header = page.split("</header>")[0]
    assert header.split('id="verdict"')[1].split("\n")[1].startswith(
        '<p class="culprit" id="culprit">append_&lt;b&gt;field (csvjoin.c:14) makes it grow')
    assert page.index('<section id="growth">') < page.index("How each metric grows")
    assert "<details class=\"metric\"" in page and "<details class=\"metric\" open" not in page


def test_a_linear_program_names_the_function_doing_the_most_growing_work() -> None:
    """Nothing beyond linear: checksum (9 n) outgrows append_field (2 n), so it is named."""
    def counts(n: int) -> CallgrindCounts:
        return CallgrindCounts({START: 11, MAIN: 50, APPEND: 2 * n, CHECK: 9 * n, LOADER: 1000},
                               {(MAIN, APPEND): 2 * n, (MAIN, CHECK): 9 * n}, SITES)
    g = exact_growth(SIZES, [counts(n) for n in SIZES])
    assert g.culprit is not None and not g.culprit.grows_superlinearly
    assert g.sentence == ("checksum (csvjoin.c:22) does the most growing work: its own code is n, "
                          "81% of the work at n = 8k")


def test_callgrind_alone_makes_a_profile_without_samples() -> None:
    """No sampler: event instructions, the totals as samples, the sampler's error as a note."""
    from quadscope.profile.exact_attach import exact_attribution

    g = exact_growth(SIZES, [_counts(n) for n in SIZES])
    a = exact_attribution(3, g, CallgrindRuns(SIZES, (), 1.0, 5.0), "perf is not installed")
    assert (a.sampler, a.event, a.samples, a.superlinear) == (
        "callgrind", "instructions", g.total_ir, True)
    assert a.culprits[0].call_path == ("append_field", "__strcat_avx2")
    assert a.notes[0].startswith("no time samples (perf is not installed)")
    assert "samples" not in a.notes[-1] and a.culprit_sentence == g.sentence
    assert a.flame_tree is None and a.flame_svg == ""


def test_a_culprit_without_debug_information_says_to_rebuild_with_g() -> None:
    """No fl= file (no -g): the sentence has no (file:line) and a note says how to get one."""
    g = exact_growth(SIZES, [CallgrindCounts(_counts(n).self_ir, _counts(n).calls_ir)
                             for n in SIZES])
    assert g.sentence.startswith("append_field makes it grow: its calls to strcat are n²")
    assert g.culprit is not None and g.culprit.call_site is None
    a = attach_exact(Attribution(1, SIZES, "perf", "cpu-clock", (1, 2, 3, 4), (), (), "", "",
                                 True), g, CallgrindRuns(SIZES, (), 1.0, 5.0))
    assert a.notes[-1] == ("append_field has no file:line: its program has no debug "
                           "information; rebuild with -g")
