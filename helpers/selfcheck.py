"""Self-check questions for the assessment steps: answer, get instant feedback, then the worked
explanation (shown only after a first attempt, so reading it is not a substitute for trying).

Two kinds: ``choice`` (one correct option) and ``numeric`` (a number within a tolerance). Both
render as ipywidgets in JupyterLab and fall back to a plain printed question elsewhere. Nothing
here is graded; the graded work lives in the nbgrader cells.
"""

from __future__ import annotations

import math

CORRECT = "Correct."
WRONG = "Not quite - try again, or read the explanation below."


def _check_choice(picked: int | None, answer: int) -> bool:
    return picked is not None and picked == answer


def _check_numeric(text: str, answer: float, tol: float) -> bool:
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return False
    return math.isfinite(value) and abs(value - answer) <= tol * max(1.0, abs(answer))


def _widgets():
    try:
        import ipywidgets as w
        from IPython.display import display
    except ImportError:  # pragma: no cover - the course environment has both
        return None, None
    return w, display


def _box(question: str, control, check, explanation: str):
    w, display = _widgets()
    button = w.Button(description="Check", button_style="primary")
    verdict = w.HTML()
    why = w.HTML(layout=w.Layout(display="none"))
    why.value = f"<div style='margin-top:4px'><b>Why:</b> {explanation}</div>"

    def on_click(_):
        ok = check()
        verdict.value = (
            f"<b style='color:{'green' if ok else '#b00'}'>{CORRECT if ok else WRONG}</b>"
        )
        why.layout.display = "block"  # after any attempt

    button.on_click(on_click)
    box = w.VBox(
        [w.HTML(f"<b>Self-check.</b> {question}"), control, w.HBox([button, verdict]), why]
    )
    box.add_class("selfcheck")
    display(box)  # shown once; nothing is returned, so a bare call does not echo the widget again


def choice(question: str, options: list[str], answer: int, explanation: str) -> None:
    """A multiple-choice self-check; ``answer`` is the index of the correct option."""
    if not 0 <= answer < len(options):
        raise ValueError("answer must index one of the options")
    w, _ = _widgets()
    if w is None:
        print(question, *[f"  ({i}) {o}" for i, o in enumerate(options)], sep="\n")
        return
    radio = w.RadioButtons(options=[(o, i) for i, o in enumerate(options)], value=None,
                           layout={"width": "max-content"})  # fmt: skip
    _box(question, radio, lambda: _check_choice(radio.value, answer), explanation)


def numeric(question: str, answer: float, explanation: str, tol: float = 1e-2) -> None:
    """A numeric self-check accepted within relative tolerance ``tol`` (absolute below 1)."""
    w, _ = _widgets()
    if w is None:
        print(question)
        return
    text = w.Text(placeholder="your answer")
    _box(question, text, lambda: _check_numeric(text.value, answer, tol), explanation)
