"""What every renderer declares: the one base class of the output formats.

Contract: a renderer is a subclass of `Renderer` that declares, as class
constants the CLI reads without making one, its `name`, its command-line
`flag` ("" for the terminal, which the CLI prints instead of writing), the
flag's `metavar` and `help`, its file `extension`, and whether it writes a
`folder` (one file per plot) instead of one file; and its abilities, each
False unless the renderer declares it (as pyinstrument's renderers declare
`output_file_extension` and `output_is_binary`):

- `reads_gates`: its constructor takes `gates=` (one `junit.GateCase` per
  `--fail-above` or `--fail-on` gate), which the CLI judges and passes in;
- `step_summary`: the CLI also appends its output to `$GITHUB_STEP_SUMMARY`;
- `writes_fleet`: `render_fleet(fleet) -> bytes` writes `doctor --fleet`'s
  machine × probe table (`render.fleet`); `doctor --fleet` refuses the others;
- `renders_several`: `render_several(analyses) -> bytes` writes several sweeps
  (`quadscope import` of a file holding several) as one document: a summary
  of every sweep's verdict first, then one section per sweep, each leading
  with its verdict. The CLI writes one file per sweep with the others
  (`commands.several`);
- `renders_multi`: `render_multi(report, gates=())` writes a sweep over several
  sizes (`analyse.multi_sweep.MultiReport`; `gates` its judged axis gates, for
  a renderer that reads gates) in the format's own form; `commands.multi`
  refuses, in one sentence, the output options of the others.

Its one method `render(analysis)` returns bytes, or for a folder renderer a
mapping of file name -> bytes; it writes nothing and never re-computes a fit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from quadscope.analyse.analysis import Analysis
    from quadscope.analyse.multi_sweep import AxisGateOutcome, MultiReport
    from quadscope.fleet.outliers import FleetDoctor


class Renderer(ABC):
    name: ClassVar[str]
    flag: ClassVar[str]  # e.g. "--json"; "" when the format is not written to a file
    metavar: ClassVar[str]
    help: ClassVar[str]
    extension: ClassVar[str]  # of the file, or of each file in the folder
    folder: ClassVar[bool] = False
    reads_gates: ClassVar[bool] = False
    step_summary: ClassVar[bool] = False
    writes_fleet: ClassVar[bool] = False
    renders_several: ClassVar[bool] = False
    renders_multi: ClassVar[bool] = False

    @abstractmethod
    def render(self, analysis: Analysis) -> bytes | Mapping[str, bytes]: ...

    def render_fleet(self, fleet: FleetDoctor) -> bytes:
        # Reached only by a renderer that does not declare `writes_fleet`: the CLI checks it,
        # so getting here is a programming error, not a user's.
        raise TypeError(f"the {self.name} renderer has no fleet form (writes_fleet is False)")

    def render_several(self, analyses: Sequence[Analysis]) -> bytes:
        # Reached only by a renderer that does not declare `renders_several` (the CLI checks).
        raise TypeError(f"the {self.name} renderer writes one sweep a file "
                        "(renders_several is False)")

    def render_multi(self, report: MultiReport,
                     gates: Sequence[AxisGateOutcome] = ()) -> bytes | Mapping[str, bytes]:
        # Reached only by a renderer that does not declare `renders_multi` (the CLI checks).
        raise TypeError(f"the {self.name} renderer has no form for a sweep over several sizes "
                        "(renders_multi is False)")


__all__ = ["Renderer"]
