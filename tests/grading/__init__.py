"""Autograder evidence: planted-bug and valid-alternative variants of every graded function (one
file per lesson, ``9.X.py``), the fake students built from them, and the in-kernel harness."""
