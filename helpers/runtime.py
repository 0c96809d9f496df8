"""Where a lesson is running, and what that implies for how much work it does.

nbgrader sets NBGRADER_EXECUTION=autograde while it grades and =validate while it validates; the
lessons then skip long demos (training runs, sweeps) so a class is graded in seconds per lesson.
COURSE_SMOKE=1 asks for the short smoke profile everywhere (CI and browser tests use it).
"""

from __future__ import annotations

import os

GRADING: bool = os.environ.get("NBGRADER_EXECUTION") in ("autograde", "validate")
SMOKE: bool = GRADING or os.environ.get("COURSE_SMOKE", "0") == "1"


def set_threads(n: int | None = None) -> int:
    """Use at most ``n`` CPU threads in torch (default: all cores, capped at 4); returns it."""
    import torch

    n = n or min(4, os.cpu_count() or 1)
    torch.set_num_threads(n)
    return n
