"""The course's grading machinery on top of nbgrader (course/instructor.py is the command line, course-admin).

- ``course.grading.safety``: the nbgrader preprocessor ``GuardedExecute`` (loaded by
  course/nbgrader_config.py into every nbgrader run);
- ``course.grading.verdict``: the trusted verdict: the test cells run in a process of the grader,
  the student's functions (and, for 9.5, stand-in models and trainers built in the kernel) reached
  through ``course.grading.boundary`` (a channel into the kernel) with plain data only
  (``course.grading.wire``);
- ``course.grading.sanitise``: ``SanitiseOutputs``, student output made inert for the formgrader
  and feedback;
- ``course.grading.sandbox``: the bubblewrap sandbox around each student's kernel;
- ``course.grading.runner``: the class run (one nbgrader process and one private gradebook per
  student, sharded over workers, merged, with a report);
- ``course.grading.collect``: collecting submissions from folders and zips, refusing tricks.

Standard library + nbgrader/jupyter_client (imported lazily where only nbgrader runs need them).
"""
