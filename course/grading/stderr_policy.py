"""Grading policy for stderr: a test cell's verdict is whether it raised, never what it printed.

nbgrader gives 0 points to a graded cell with any stderr output (``nbgrader.utils.determine_grade``),
so a correct answer that reports through ``logging`` (which writes to stderr) or a library warning
would lose its points. ``StderrShownNotGraded`` runs after execution and before grading: every
stderr stream of a code cell becomes a stdout stream whose text starts with ``[stderr] ``. The
student still sees it in the feedback; only an error (an exception, a failed assert, a timeout, a
dead kernel) fails a cell. A submission gains nothing from this: writing to stderr never helped.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

PREFIX = "[stderr] "


class StderrShownNotGraded(NbGraderPreprocessor):
    """Turn stderr streams into stdout streams (text kept, prefixed) so they cannot fail a cell."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    out["name"] = "stdout"
                    out["text"] = PREFIX + out.get("text", "")
        return cell, resources
