"""The instructor's research side: probes and the scripts that make committed records. Never shipped
to a student, never imported by the course or the grader.

Each folder answers one question:

- ``baselm_lab_settings/``: which GRPO settings let lesson 9.5's BaseLM lab show held-out learning
  (a probe: scratch evidence kept so it can be rerun; its README has the findings);
- ``records/``: how each committed record and data file was made, one module per file it writes
  (``records/baselm_lab.py`` writes ``course/records/baselm_lab.json``, and so on).

Run them as modules from the repository root: ``python -m dev.records.baselm_lab``.
"""

# A committed record names the command that made it, and keeps it: measured content is not
# rewritten when a script moves. The scripts lived in course/ until the dev/ tree existed; each
# command a record may name -> the command that makes that record today.
MOVED = {
    "python course/make_baselm_lab_record.py": "python -m dev.records.baselm_lab",
    "python course/make_baselm_rebuild_record.py (./baselm.sh --rebuild)": (
        "python -m dev.records.baselm_rebuild (./baselm.sh --rebuild)"
    ),
    "python course/make_clinic_runs.py": "python -m dev.records.clinic_runs",
    "python course/make_lab_history.py": "python -m dev.records.gru_lab_smoke",
}


def current_command(command: str) -> str:
    """The command that makes a record today, from the one the record names (see ``MOVED``)."""
    return MOVED.get(command, command)
