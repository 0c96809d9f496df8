"""Which option does BaseLM's likelihood prefer, in the choice format and in the 'a+b=' format?"""

import torch

torch.set_num_threads(1)
from helpers.baselm import load_baselm  # noqa: E402
from helpers.tasks import make_tasks  # noqa: E402

model, tok = load_baselm()
EOS = tok.eos_token_id


def seqlp(prefix, conts):
    p = tok(prefix)["input_ids"]
    rows = [p + tok(c)["input_ids"] + [EOS] for c in conts]
    L = max(len(r) for r in rows)
    ids = torch.full((len(rows), L), 0)
    m = torch.zeros((len(rows), L), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        m[i, : len(r)] = 1
    with torch.no_grad():
        lg = model(input_ids=ids, attention_mask=m).logits.log_softmax(-1)
    out = []
    for i, r in enumerate(rows):
        out.append(sum(float(lg[i, j - 1, r[j]]) for j in range(len(p), len(r))))
    return out


for split in ("train", "heldout"):
    ts = make_tasks("arithmetic_choice", 200, split, 7)
    ch = fr = chf = chs = nf = ns = 0
    for t in ts:
        a, b = t.meta["a"], t.meta["b"]
        o1, o2 = t.meta["options"]
        s = int(t.answer)
        l = seqlp(t.prompt, [f" {o1}", f" {o2}"])
        pick = o1 if l[0] > l[1] else o2
        ch += pick == s
        if o1 == s:
            chf += pick == s
            nf += 1
        else:
            chs += pick == s
            ns += 1
        l2 = seqlp(f"{a}+{b}=", [str(o1), str(o2)])
        fr += (o1 if l2[0] > l2[1] else o2) == s
    print(
        f"{split}: choice-format likelihood picks correct {ch / len(ts):.2f} (correct first {chf / nf:.2f}, second {chs / ns:.2f}); 'a+b=' format picks correct {fr / len(ts):.2f}"
    )
