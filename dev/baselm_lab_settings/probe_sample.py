"""T=1 sample categories of the base model on held-out prompts, split by correct position."""

import collections

import torch

torch.set_num_threads(1)
from dev.baselm_lab_settings.lab import category  # noqa: E402
from helpers.baselm import load_baselm  # noqa: E402
from helpers.sampling import sample_groups  # noqa: E402
from helpers.tasks import make_tasks  # noqa: E402

model, tok = load_baselm()
ts = make_tasks("arithmetic_choice", 120, "heldout", 3)
s = sample_groups(
    model,
    tok,
    [t.prompt for t in ts],
    16,
    max_new_tokens=8,
    generator=torch.Generator().manual_seed(0),
)
c = {"first": collections.Counter(), "second": collections.Counter()}
anysec = 0
for i, t in enumerate(ts):
    pos = "first" if t.meta["options"][0] == int(t.answer) else "second"
    cats = [category(t, x) for x in s.texts[i * 16 : (i + 1) * 16]]
    c[pos].update(cats)
    if pos == "second":
        anysec += "second" in cats
for p in c:
    n = sum(c[p].values())
    print(p, {k: round(v / n, 3) for k, v in c[p].items()})
print(
    "correct-second prompts with >=1 'second' sample in 16:",
    anysec,
    "of",
    sum(1 for t in ts if t.meta["options"][1] == int(t.answer)),
)
