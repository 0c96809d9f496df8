"""The table of lab.py's runs in /tmp/baselm_lab_settings/runs, oldest first (table.md is made from
it: python -m dev.baselm_lab_settings.summarize)."""

import glob
import json
import os

rows = []
for f in sorted(glob.glob("/tmp/baselm_lab_settings/runs/*.json"), key=os.path.getmtime):
    r = json.load(open(f))
    if r["name"] == "smoke":
        continue
    c = r["cfg"]
    h = r["held"]
    t = r["train"]
    hs = r["held_sloppy"]
    print(
        f"| {r['name']} | {c['verifier']} lr={c['lr']:g} K={c['k']} pps={c['pps']} kl={c['kl']} clip={c['clip']} T={c['T']} mnt={c['mnt']} r={c['r']} {('all7' if 'gate_proj' in c['modules'] else 'q,v')} n_train={c['n_train']} seed={c['seed']} adv={c['adv']} | {r['steps_run']} | {r['train_s']:.0f} | "
        f"{h['before']:.3f}->{h['after']:.3f} {h['diff']:+.3f} [{h['low']:+.3f},{h['high']:+.3f}] | {t['before']:.3f}->{t['after']:.3f} | "
        f"{hs['before']:.3f}->{hs['after']:.3f}; sloppy-only {r['sloppy_only_before']:.3f}->{r['sloppy_only_after']:.3f} | "
        f"first/second-correct pass {r['pos_before'][0]:.2f}/{r['pos_before'][1]:.2f}->{r['pos_after'][0]:.2f}/{r['pos_after'][1]:.2f}; cats {r['cats_after']} |"
    )
