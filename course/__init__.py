"""The instructor's side of the course: the lesson builder, the grading machinery (``course.grading``)
and the instructor's command line (``python -m course.instructor``). Never in a student's bundle.

Installed with the project (``pip install -e .``, scripts/ensure_env.sh); run its commands as
modules from the course root, so the course's own copy is the one imported.
"""
