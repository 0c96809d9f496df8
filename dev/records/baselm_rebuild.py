"""Rebuild BaseLM from its seeded corpus on this machine and commit what the rebuild measured.

Runs ``./baselm.sh --rebuild`` (the full profile, as a student or instructor would) into a temporary
folder and writes ``course/records/baselm_rebuild.json``: the rebuild's passport (corpus hash,
config, figures: greedy pass rates, informative-group fractions, peak RSS, build seconds, CPU,
versions) and the sha256 of ``helpers/baselm.py`` it was made with. ``tests/test_baselm.py`` checks
that the record belongs to today's ``helpers/baselm.py`` and the shipped corpus and config, and
that its figures are inside ``CALIBRATION`` (the suite itself rebuilds only the tiny profile).
The weights need not equal the shipped bits: another CPU rounds differently.

Run: ``python -m dev.records.baselm_rebuild`` (about 6 minutes on a quiet 2-core machine).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "course" / "records" / "baselm_rebuild.json"
SOURCE = ROOT / "helpers" / "baselm.py"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BASELM_DIR=str(Path(tmp) / "rebuilt"))
        t0 = time.time()
        subprocess.run([str(ROOT / "baselm.sh"), "--rebuild"], cwd=ROOT, env=env, check=True)
        seconds = time.time() - t0
        passport = json.loads((Path(tmp) / "rebuilt" / "passport.json").read_text())
    record = {
        "command": "python -m dev.records.baselm_rebuild (./baselm.sh --rebuild)",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "seconds": round(seconds),
        "baselm_py_sha256": hashlib.sha256(SOURCE.read_bytes()).hexdigest(),
        "passport": passport,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
