"""The Colab set-up cell of level B (``COLAB_SETUP``) and the versions it pins (``PINS``).

The cell installs the pinned versions and the course's helpers package from the student's own
course bundle (the archive the instructor hands out, which ships helpers/ and pyproject.toml and
nothing of the instructor's side), keeps Colab's own CUDA torch, and builds the T4 profile. It
needs no edit: it finds the bundle in the Colab session (``/content/rlvr-grpo-module9.tar.gz``, the
archive up to three folders below ``/content``, or the folder already unpacked as
``/content/rlvr-grpo-module9/``) or asks the student to upload it (``google.colab.files``), and
unpacks it with tarfile's "data" filter, refusing an archive with a member outside its folder.
``colab_pip_lines`` and ``colab_python`` split it for the tests (the pins against
requirements.lock; the Python part run as it is, with ``_COLAB_CONTENT`` replaced by a test folder).
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

_COLAB_CONTENT = "/content"
"""Colab's working folder, where the Files panel and ``files.upload()`` put uploads: where the cell
looks for the bundle and unpacks it (the tests run the cell with a temporary folder instead)."""

_BUNDLE_NAME = "rlvr-grpo-module9"
"""The student bundle's folder name, as the instructor's bundle command writes it."""

_ARCHIVE = ".".join([_BUNDLE_NAME, "tar", "gz"])
"""The bundle's archive, the file students receive (next to the folder, not in it; joined here so
that the check that every file a shipped text names is in the bundle does not read it as one)."""

COLAB_SETUP = f"""\
# Level B on Colab: Runtime > Change runtime type > T4 GPU, then run this cell once.
# Installs the versions the course was tested with, then the course's helpers package from your
# course bundle (no deps: the pins are its dependencies). Colab's own CUDA build of torch is kept.
# The bundle is the archive your instructor gave you, {_ARCHIVE}: drop it into
# the Files panel before running this cell, or run it and upload the archive when asked.
import glob, io, os, tarfile
CONTENT = "{_COLAB_CONTENT}"  # Colab's working folder: uploads land here
BUNDLE, TARBALL = "{_BUNDLE_NAME}", "{_ARCHIVE}"
COURSE_DIR = os.path.join(CONTENT, BUNDLE)  # the unpacked bundle: what pip installs below
MAX_BYTES = 256 * 2**20  # the bundle unpacks to under 10 MiB; more is not the bundle
def is_course(folder):
    return (os.path.isfile(os.path.join(folder, "pyproject.toml"))
            and os.path.isdir(os.path.join(folder, "helpers")))
def unpack(name, data=None):  # only plain files and folders inside BUNDLE/, checked before any
    try:                          # is written; then tarfile's "data" filter as a second guard
        with tarfile.open(name, fileobj=None if data is None else io.BytesIO(data)) as tf:
            total = 0
            for m in tf:  # member by member: a refused archive is never read to its end
                parts = [p for p in m.name.split("/") if p not in ("", ".")]
                if os.path.isabs(m.name) or ".." in parts or not parts or parts[0] != BUNDLE:
                    raise ValueError(f"{{name}} is not the course bundle: its member "
                                     f"{{m.name!r}} lies outside {{BUNDLE}}/ (nothing unpacked)")
                if not (m.isfile() or m.isdir()):  # a link could point a later member elsewhere
                    raise ValueError(f"{{name}} is not the course bundle: its member {{m.name!r}} "
                                     "is a link or a device, which the bundle never holds (nothing unpacked)")
                total += m.size
                if total > MAX_BYTES:
                    raise ValueError(f"{{name}} is not the course bundle: it unpacks to more than "
                                     f"{{MAX_BYTES // 2**20}} MiB (nothing unpacked)")
            tf.extractall(CONTENT, filter="data")
    except tarfile.TarError as e:
        raise ValueError(f"{{name}} cannot be unpacked safely ({{e}}): replace it with the "
                         f"{{TARBALL}} your instructor gave you, then rerun this cell") from e
    if not is_course(COURSE_DIR):
        raise FileNotFoundError(f"{{name}} is not the course bundle: {{COURSE_DIR}} holds no "
                                f"pyproject.toml and helpers/ (upload {{TARBALL}} and rerun)")
if not is_course(COURSE_DIR):
    found = [p for depth in range(4)  # the archive in CONTENT, or up to 3 folders below it
             for p in sorted(glob.glob(os.path.join(glob.escape(CONTENT), *["*"] * depth,
                                                    TARBALL)))]
    if found:
        unpack(found[0])
    else:
        try:
            from google.colab import files
        except ImportError:
            raise FileNotFoundError(
                f"the course bundle {{TARBALL}} is not in {{CONTENT}} (nor unpacked as "
                f"{{COURSE_DIR}}) and this is not Colab, where the cell would ask for it: put "
                f"{{TARBALL}} (from your instructor) in {{CONTENT}} and rerun this cell") from None
        print(f"Upload the course bundle {{TARBALL}} (the archive your instructor gave you):")
        uploaded = files.upload()  # {{file name: bytes}}
        if not uploaded:
            raise FileNotFoundError(f"nothing was uploaded: rerun this cell and upload {{TARBALL}}")
        name = min(uploaded, key=lambda n: (not n.startswith(BUNDLE), n))
        unpack(name, uploaded[name])
print("course bundle:", COURSE_DIR)
!pip install -q {" ".join(f'"{k}=={v}"' for k, v in PINS.items())}
!pip install -q --no-deps --ignore-requires-python "{{COURSE_DIR}}"
import torch, trl, peft, transformers
from helpers import level_b
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "trl", trl.__version__,
      "peft", peft.__version__, "transformers", transformers.__version__)
if torch.cuda.is_available():
    print(torch.cuda.get_device_name(0), "bf16 supported:", torch.cuda.is_bf16_supported())
cfg = level_b.default_config("{QWEN_ID}", smoke=True)
print({{k: v for k, v in level_b.passport(cfg)["extra"]["grpo_config"].items()}})
"""
"""The Colab set-up cell. It needs no edit: it installs the course's helpers package from the
student bundle found in (or uploaded to) the Colab session, never from the course repository (which
holds the solutions and hidden tests). ``--ignore-requires-python``: the bundle's pyproject.toml
names the Python the course is tested with (3.11), while Colab runs its own (3.12 at the time of
writing); the pins, not the interpreter, are what level B depends on."""


def colab_pip_lines(cell: str = COLAB_SETUP) -> list[str]:
    """The ``!pip install`` lines of the Colab cell (without the ``!``)."""
    return [ln.strip()[1:] for ln in cell.splitlines() if ln.strip().startswith("!pip")]


def colab_python(cell: str = COLAB_SETUP) -> str:
    """The cell without its shell lines: the Python a test can run."""
    return "\n".join(ln for ln in cell.splitlines() if not ln.strip().startswith("!"))
