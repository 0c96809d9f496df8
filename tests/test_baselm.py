"""Tests of helpers.baselm: tokenizer, corpus split, and the build/reuse/damage/load logic.

The fast tests build the 'tiny' profile (seconds) into a temporary directory and check the shipped
build (helpers/data/baselm) that every student installs. A full rebuild from the seeded corpus
(``./baselm.sh --rebuild``, about 6 minutes) is slow evidence: its result is committed in
course/records/baselm_rebuild.json and checked here; the suite rebuilds the tiny profile through the
same script.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest
import torch

from helpers import baselm
from helpers.tasks import FORMAT_ITEMS, is_heldout, is_heldout_item, make_tasks
from tests.conftest import ROOT


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
    heldout_items = {w for i, w in enumerate(FORMAT_ITEMS) if is_heldout_item(i)}
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


def test_shipped_build_is_intact_calibrated_and_recorded():
    """The build every student gets (helpers/data/baselm): hash checked, calibrated, and its
    passport names the seed, corpus, CPU and versions it was made with."""
    assert baselm.check_artifact(baselm.SHIPPED_DIR) == (True, "ok")
    p = json.loads((baselm.SHIPPED_DIR / "passport.json").read_text())
    assert baselm.calibration_problems(p) == []
    assert (p["seed"], p["config"]) == (
        0,
        dataclasses.asdict(baselm.BaseLMConfig.for_profile("full")),
    )
    assert (
        p["corpus"]["sha256"]
        == hashlib.sha256(
            "\n".join(baselm.make_corpus(0, baselm.BaseLMConfig.for_profile("full"))).encode()
        ).hexdigest()
    )
    for key in ("cpu", "torch_cpu_capability", "torch", "transformers"):
        assert p["versions"].get(key), key


def test_calibration_problems_name_what_is_out_of_band():
    p = json.loads((baselm.SHIPPED_DIR / "passport.json").read_text())
    p["figures"]["format"]["greedy_pass_rate"] = 0.97
    p["figures"]["arithmetic_choice"]["informative_fraction"] = 0.1
    problems = baselm.calibration_problems(p)
    assert problems == [
        "arithmetic_choice: informative groups 0.10 < 0.5",
        "format: greedy pass 0.97 not in [0.2, 0.9]",
    ]


def test_default_setup_installs_the_shipped_build(tmp_path, capsys):
    """No pretraining on first use: the default seed/profile installs the shipped weights."""
    out = tmp_path / "art"
    passport = baselm.build(out_dir=out)
    assert "installed the shipped build" in capsys.readouterr().out
    assert baselm.check_artifact(out) == (True, "ok")
    shipped = json.loads((baselm.SHIPPED_DIR / "passport.json").read_text())
    assert passport == shipped
    _flip_last_byte(out / "model.safetensors")  # damage is repaired from the shipped copy
    assert baselm.build(out_dir=out, quiet=True) == shipped
    assert baselm.check_artifact(out) == (True, "ok")


def test_damaged_shipped_build_names_the_fix(tmp_path, monkeypatch):
    bad = shutil.copytree(baselm.SHIPPED_DIR, tmp_path / "shipped")
    _flip_last_byte(bad / "model.safetensors")
    monkeypatch.setattr(baselm, "SHIPPED_DIR", bad)
    with pytest.raises(FileNotFoundError, match=r"git checkout -- helpers/data/baselm.*--rebuild"):
        baselm.build(out_dir=tmp_path / "art", quiet=True)


def test_a_tiny_rebuild_through_the_script_is_reused(root, tmp_path):
    """``./baselm.sh --rebuild`` (here the tiny profile: the full one is slow evidence, below)
    pretrains into ``$BASELM_DIR`` and a plain ``./baselm.sh`` then reuses the intact artifact."""
    env = dict(os.environ, BASELM_DIR=str(tmp_path / "rebuilt"))
    subprocess.run([str(root / "baselm.sh"), "--rebuild", "--profile", "tiny"], cwd=root, env=env,
                   check=True, capture_output=True)  # fmt: skip
    ok, reason = baselm.check_artifact(tmp_path / "rebuilt")
    assert ok, reason
    reuse = subprocess.run([str(root / "baselm.sh"), "--profile", "tiny"], cwd=root, env=env,
                           check=True, capture_output=True, text=True)  # fmt: skip
    assert "reusing" in reuse.stdout


REBUILD = ROOT / "course" / "records" / "baselm_rebuild.json"


def test_the_committed_full_rebuild_has_the_calibrated_properties():
    """A full rebuild from the seeded corpus (``python -m dev.records.baselm_rebuild``,
    which runs ``./baselm.sh --rebuild``; about 6 minutes, so its result is committed): the same
    corpus and config as the shipped build, made by today's helpers/baselm.py, and the calibrated
    properties (CALIBRATION: greedy pass rates in a band wide enough for every supported CPU, most
    K=8 groups informative, RAM). Its weights need not equal the shipped bits."""
    import hashlib

    rec = json.loads(REBUILD.read_text())
    now = hashlib.sha256((ROOT / "helpers" / "baselm.py").read_bytes()).hexdigest()
    assert rec["baselm_py_sha256"] == now, (
        "helpers/baselm.py changed since the rebuild record: python -m dev.records.baselm_rebuild"
    )
    p = rec["passport"]
    shipped = json.loads((baselm.SHIPPED_DIR / "passport.json").read_text())
    assert p["corpus"]["sha256"] == shipped["corpus"]["sha256"]
    assert p["config"] == shipped["config"]
    assert baselm.calibration_problems(p) == [], p["figures"]


def test_the_readme_quotes_the_shipped_build_time_and_the_rebuilds_bits():
    """README's BaseLM paragraph: the build time it quotes is the shipped passport's, and it calls
    the committed rebuild bit-identical only while the record's weights hash is the shipped one."""
    text = " ".join((ROOT / "README.md").read_text().split())
    shipped = json.loads((baselm.SHIPPED_DIR / "passport.json").read_text())
    assert f"records {shipped['build_seconds']:.0f} s" in text
    rebuilt = json.loads(REBUILD.read_text())["passport"]
    same = rebuilt["weights_sha256"] == shipped["weights_sha256"]
    assert ("bit-identical to the shipped build" in text) == same
