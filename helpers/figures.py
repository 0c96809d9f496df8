"""Figures the text quotes, tied to the code that computes them.

A lesson cell that computes a number the lecture text or the claims registry quotes calls
``quote("9.1:both_falls_steps", value)``; the text writes the number followed by a marker,
``38<!--fig:9.1:both_falls_steps-->`` (the lesson build removes the marker from the notebook; the
registry keeps it, hidden when the Markdown is rendered). The course's tests run every lesson
with ``COURSE_FIGURES`` naming a file: each ``quote`` appends its figure there, and a test fails
when a number in the text is not the one the code printed, so a figure cannot drift from its
code. Nothing here is graded, and without ``COURSE_FIGURES`` a quote only returns the text.
"""

from __future__ import annotations

import json
import os
import re

# the quoted text (a number, maybe signed or with a unit glued to it), then the marker
MARKER = re.compile(r"(?P<text>[^\s(\[]+?)<!--fig:(?P<key>9\.[1-5]:[A-Za-z0-9_]+)-->")
# anything that looks like a marker, also mistyped ("<!-- Fig: ...-->"): a test requires each
# to be a well-formed MARKER, and the build strips them all
ANY_MARKER = re.compile(r"<!--\s*fig\s*:[^>]*-->", re.I)


def quote(key: str, value, spec: str = "") -> str:
    """``format(value, spec)``, recorded as the figure ``key`` ("<lesson>:<name>")."""
    if not re.fullmatch(r"9\.[1-5]:[A-Za-z0-9_]+", key):
        raise ValueError(f"a figure key is '<lesson>:<name>', e.g. '9.1:both_falls_steps': {key!r}")
    text = format(value, spec)
    path = os.environ.get("COURSE_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"key": key, "text": text}) + "\n")
    return text


def strip_markers(text: str) -> str:
    """The text as a reader sees it: every ``<!--fig:...-->`` marker removed."""
    return ANY_MARKER.sub("", text)
