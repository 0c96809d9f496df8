"""Tests of helpers.baselm: tokenizer, corpus split, and the build/reuse/damage/load logic.

The fast tests build the 'tiny' profile (seconds) into a temporary directory. The slow test runs
the real ``./baselm.sh`` (reusing the artifact ./test.sh built) and checks that the held-out figures land
in the band that leaves room for RL.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import torch

from helpers import baselm
from helpers.tasks import FORMAT_ITEMS, is_heldout, make_tasks


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny artifact and its passport, built once for the module."""
    out = tmp_path_factory.mktemp("baselm") / "a"
    return out, baselm.build(seed=0, out_dir=out, profile="tiny", quiet=True)


def test_tokenizer_prompts_roundtrip_and_split_cleanly():
    tok = baselm.build_tokenizer()
    assert tok.pad_token_id != tok.eos_token_id
    assert (tok.pad_token, tok.eos_token) == ("<pad>", "<eos>")
    for family, completion in (("arithmetic_choice", " 81"), ("format", ' "apple"} ok')):
        for task in make_tasks(family, 5, "heldout", 0):
            p = tok(task.prompt)["input_ids"]
            both = tok(task.prompt + completion)["input_ids"]
            assert both[: len(p)] == p  # a completion never changes the prompt's tokens
            assert tok.decode(both) == task.prompt + completion


def test_corpus_uses_train_pairs_and_items_only():
    lines = baselm.make_corpus(0, baselm.BaseLMConfig.for_profile("full"))
    heldout_items = {w for i, w in enumerate(FORMAT_ITEMS) if is_heldout(i, 0)}
    n_choice = n_format = 0
    for line in lines:
        if m := re.match(r"Q: (\d+)\+(\d+)=\?", line):
            n_choice += 1
            assert not is_heldout(int(m[1]), int(m[2])), line
        if m := re.match(r"Item: (\w+)\.", line):
            n_format += 1
            assert m[1] not in heldout_items, line
    assert n_choice > 1000 and n_format > 1000
    assert lines == baselm.make_corpus(0, baselm.BaseLMConfig.for_profile("full"))


def test_same_seed_same_hash_and_reuse(tiny, tmp_path):
    out, passport = tiny
    again = baselm.build(seed=0, out_dir=tmp_path / "b", profile="tiny", quiet=True)
    assert again["weights_sha256"] == passport["weights_sha256"]
    assert again["corpus"]["sha256"] == passport["corpus"]["sha256"]
    other = baselm.build(seed=1, out_dir=tmp_path / "c", profile="tiny", quiet=True)
    assert other["weights_sha256"] != passport["weights_sha256"]

    mtime = (out / "model.safetensors").stat().st_mtime_ns
    reused = baselm.build(seed=0, out_dir=out, profile="tiny", quiet=True)
    assert reused == json.loads((out / "passport.json").read_text())
    assert (out / "model.safetensors").stat().st_mtime_ns == mtime  # not rebuilt


def _truncate(p):
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _flip_last_byte(p):
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda d: (d / "passport.json").unlink(), "missing passport.json"),
        (lambda d: (d / "tokenizer.json").unlink(), "missing tokenizer.json"),
        (lambda d: _truncate(d / "model.safetensors"), "unreadable"),
        (lambda d: _flip_last_byte(d / "model.safetensors"), "does not match"),
        (lambda d: (d / "passport.json").write_text("{"), "unreadable passport"),
    ],
    ids=["no-passport", "no-tokenizer", "truncated", "bit-flip", "bad-passport"],
)
def test_damage_is_detected_and_rebuilt(tiny, tmp_path, damage, reason):
    out = shutil.copytree(tiny[0], tmp_path / "art")
    first = tiny[1]
    assert baselm.check_artifact(out) == (True, "ok")
    damage(out)
    ok, why = baselm.check_artifact(out)
    assert not ok and reason in why
    with pytest.raises(FileNotFoundError, match=r"\./baselm\.sh"):
        baselm.load_baselm(out)
    rebuilt = baselm.build(seed=0, out_dir=out, profile="tiny", quiet=True)
    assert baselm.check_artifact(out) == (True, "ok")
    assert rebuilt["weights_sha256"] == first["weights_sha256"]


def test_load_baselm_missing_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("BASELM_DIR", str(tmp_path / "nowhere"))
    assert baselm.baselm_dir() == tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"no artifact directory.*\./baselm\.sh"):
        baselm.load_baselm()


def test_load_generate_and_lora(tiny):
    from peft import LoraConfig, get_peft_model

    out, passport = tiny
    model, tok = baselm.load_baselm(out)
    assert not model.training and model.config.eos_token_id == tok.eos_token_id
    task = make_tasks("format", 1, "heldout", 0)[0]
    (completion,) = baselm.complete(model, tok, task)
    assert isinstance(completion, str)
    lora = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))
    trainable = sum(p.numel() for p in lora.parameters() if p.requires_grad)
    assert 0 < trainable < passport["model"]["parameters"]
    x = tok(task.prompt, return_tensors="pt")
    assert torch.isfinite(lora(**x).logits).all()


def test_passport_records_the_build(tiny):
    _, p = tiny
    for key in ("seed", "config", "corpus", "training", "weights_sha256", "build_seconds",
                "peak_rss_mb", "versions", "figures"):  # fmt: skip
        assert key in p
    assert set(p["figures"]) == {"arithmetic_choice", "format"}
    assert p["config"]["profile"] == "tiny"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_full_build_leaves_room_for_rl(root):
    """The real build (the artifact the lessons use; ./test.sh runs ./baselm.sh before pytest, so
    this reuses it, or builds it here): held-out greedy pass rates in [0.2, 0.8], most K=8 groups
    informative, within the RAM budget, and a second run reuses it after checking its hash."""
    env = dict(os.environ)
    subprocess.run([str(root / "baselm.sh")], cwd=root, env=env, check=True)
    ok, reason = baselm.check_artifact(baselm.baselm_dir())
    assert ok, reason
    p = json.loads((baselm.baselm_dir() / "passport.json").read_text())
    for family, f in p["figures"].items():
        assert 0.2 <= f["greedy_pass_rate"] <= 0.8, (family, f)
        assert f["informative_fraction"] >= 0.5, (family, f)
    assert p["peak_rss_mb"] < 2048
    reuse = subprocess.run(
        [str(root / "baselm.sh")], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    assert "reusing" in reuse.stdout
