"""tpusim: model how TPU-style accelerators lay out, move and compute tensors.

One module per area, as the CLI has one verb per area::

    import tpusim
    r = tpusim.report("resnet50", chip="v5e", batch=8)   # == tpusim report ... --json
    r.total_time_s, r.to_dict(), r.layers_df()
    tpusim.layout.info("bf16[8,128]{1,0:T(8,128)(2,1)}").array_size_bytes
    tpusim.layout.convert(np.ones((3, 5), np.float32), to="f32[3,5]{1,0:T(8,128)}")
    tpusim.llm.serve("llama-3-70b", chip="v5e", slice="4x2", batch=32, context=8192)
    tpusim.sweep({"model": ["resnet18"], "chip": ["v5e", "v6e"], "batch": [1, 8]})

Every answer comes from the same Rust library crates as the `tpusim` command, and equals
its ``--json`` output field for field. Errors are :class:`tpusim.Error`; a wrong input
raises :class:`tpusim.BadInput` (a subclass) naming what was wrong.
"""

from ._native import BadInput, Error, __version__
from . import chip, layout, llm, lmem, systolic
from ._report import Plan, Report, TransformerPlan, plan, report
from ._sweep import sweep

__all__ = [
    "__version__",
    "Error",
    "BadInput",
    "layout",
    "chip",
    "lmem",
    "llm",
    "systolic",
    "report",
    "plan",
    "Report",
    "Plan",
    "TransformerPlan",
    "sweep",
]
