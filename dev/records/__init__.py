"""The scripts that make committed records and data, one module per file it writes:

- ``baselm_lab``: lesson 9.5's BaseLM lab, three seeds -> ``course/records/baselm_lab.json`` (and
  the "BaseLM lab" section of BENCHMARKS.md);
- ``baselm_rebuild``: a full BaseLM rebuild on this machine -> ``course/records/baselm_rebuild.json``;
- ``clinic_runs``: lesson 9.4's diagnosis clinic -> ``helpers/data/clinic_runs.json`` and
  ``course/lessons/9.4/hidden/clinic_heldout.json``;
- ``gru_lab_smoke``: the CPU lab's smoke profile with the reference functions ->
  ``helpers/data/gru_lab_smoke.json``.

Run each as ``python -m dev.records.<name>`` from the repository root.
"""
