"""The Colab set-up cell of level B (``COLAB_SETUP``) and the versions it pins (``PINS``).

The cell installs the pinned versions and the course's helpers package, keeps Colab's own CUDA
torch, and builds the T4 profile. ``colab_pip_lines`` and ``colab_python`` split it for the tests
(the pins against requirements.lock; the Python part run as it is).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.level_b.model import QWEN_ID

PINS: dict[str, str] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "colab_pins.json").read_text()
)
"""Exact versions for Colab: the versions of requirements.lock, which the course was tested with
(helpers/data/colab_pins.json, written by the course's lock script from pyproject.toml's
``[tool.course] colab`` list and the lock). torch is Colab's own CUDA build, deliberately not pinned
to the CPU wheel used here."""

COLAB_SETUP = f"""\
# Level B on Colab: Runtime > Change runtime type > T4 GPU, then run this cell once.
# Installs the versions the course was tested with, then the course's helpers package (no deps:
# the pins are its dependencies). Colab's own CUDA build of torch is kept.
# COURSE_SOURCE is where pip finds the course's helpers package; your instructor gives it: the
# course repository's git URL ("git+https://HOST/PATH.git") or the path of the course wheel
# (built with `pip wheel --no-deps .` in the course repository) uploaded to this Colab session.
COURSE_SOURCE = ""
if not COURSE_SOURCE.strip():
    raise ValueError("COURSE_SOURCE is empty: set it to the course repository's git URL or to the "
                     "path of the uploaded course wheel (ask your instructor), then rerun this cell")
!pip install -q {" ".join(f'"{k}=={v}"' for k, v in PINS.items())}
!pip install -q --no-deps "{{COURSE_SOURCE}}"
import torch, trl, peft, transformers
from helpers import level_b
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "trl", trl.__version__,
      "peft", peft.__version__, "transformers", transformers.__version__)
if torch.cuda.is_available():
    print(torch.cuda.get_device_name(0), "bf16 supported:", torch.cuda.is_bf16_supported())
cfg = level_b.default_config("{QWEN_ID}", smoke=True)
print({{k: v for k, v in level_b.passport(cfg)["extra"]["grpo_config"].items()}})
"""
"""The Colab set-up cell. ``COURSE_SOURCE`` is deliberately empty: the course has no public
repository address to put there, so the cell stops with a clear message until the instructor (or
the student, on the instructor's word) fills it in."""


def colab_pip_lines(cell: str = COLAB_SETUP) -> list[str]:
    """The ``!pip install`` lines of the Colab cell (without the ``!``)."""
    return [ln.strip()[1:] for ln in cell.splitlines() if ln.strip().startswith("!pip")]


def colab_python(cell: str = COLAB_SETUP) -> str:
    """The cell without its shell lines: the Python a test can run."""
    return "\n".join(ln for ln in cell.splitlines() if not ln.strip().startswith("!"))
