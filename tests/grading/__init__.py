"""Autograder evidence: the harness that grades the planted-bug and valid-alternative variants of
every graded function (``course/lessons/9.X/variants.py``), the fake students built from them, and
the mutation run (its records: ``course/lessons/9.X/mutation.json``)."""
