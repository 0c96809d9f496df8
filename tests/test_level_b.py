"""Level B (``helpers.level_b``): real TRL GRPOTrainer steps with LoRA on BaseLM, on a CPU.

- Layout: helpers.level_b is a package of one-concept modules, each with a docstring, and
  ``from helpers.level_b import X`` reaches every public name any of them defines.
- Configuration: every objective-shaping GRPOConfig field is passed explicitly, TRL keeps the
  value, and every GRPOConfig field that TRL's loss and rollout code read is either set here or
  declared not applicable with a reason (so a new TRL knob fails this test until it is decided).
- Data and reward: the dataset's columns reach the reward function; the verifier scores chat and
  plain completions alike.
- Training (slow): a few real GRPOTrainer steps on BaseLM's tiny profile (built in seconds). The
  untrained tiny model never earns the verifier's reward, so these runs use a shaped stand-in
  reward (the share of digits in a completion) to get informative groups; the verifier path is
  covered by the CLI smoke run. LoRA weights move, base weights do not; TRL's logged metrics reach
  the course dashboard unchanged; TRL's advantages follow the convention lesson 9.2 states
  (n - 1 std, eps 1e-4) and, without scaling, equal lesson 9.3's ``dr_grpo_advantages``.
- Colab cell: its pins are the locked versions (inside pyproject.toml's ranges, installed); it needs
  no edit: its Python part, run on a temporary folder standing in for Colab's /content, finds the
  student bundle (the archive the instructor's bundle command writes) or asks for an upload (a stub
  google.colab), unpacks it with tarfile's "data" filter into the folder pip installs, refuses an
  archive with a member outside its folder, and names the bundle file when it is missing; (slow,
  needs PyPI) pip resolves the pins.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import level_b as lb
from helpers.level_b import colab

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def tiny_baselm(tmp_path_factory) -> Path:
    """BaseLM's tiny profile (seconds to build), shared by the level-B tests of this session."""
    from helpers import baselm

    out = tmp_path_factory.getbasetemp() / "baselm_tiny"
    baselm.build(seed=0, out_dir=out, profile="tiny", quiet=True)
    return out


# ---------------------------------------------------------------------------------------------
# Layout


def _public_names(path: Path) -> set[str]:
    """The public names a module defines at its top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def test_package_modules_have_docstrings_and_every_public_name_is_reexported():
    pkg = Path(lb.__file__).parent
    where: dict[str, list[str]] = {}
    for path in sorted(pkg.glob("*.py")):
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name}: no module docstring"
        if path.name not in ("__init__.py", "__main__.py"):
            for name in _public_names(path):
                where.setdefault(name, []).append(path.stem)
    twice = {n: m for n, m in where.items() if len(m) > 1}
    assert not twice, f"defined in more than one module: {twice}"
    assert sorted(lb.__all__) == sorted(where), "helpers/level_b/__init__.py: re-export and list"
    for name, (module,) in where.items():
        home = importlib.import_module(f"helpers.level_b.{module}")
        assert getattr(lb, name) is getattr(home, name), name


# ---------------------------------------------------------------------------------------------
# Configuration


def test_default_profiles():
    cpu = lb.default_config(None, smoke=True, device="cpu")
    assert cpu.model_id is None and cpu.precision == "fp32" and cpu.device == "cpu"
    assert cpu.global_batch % cpu.num_generations == 0 and cpu.max_steps <= 3
    t4 = lb.default_config(lb.QWEN_ID, smoke=True, device="cuda")
    assert t4.precision == "fp16", "a T4 has no bf16: the T4 profile must use fp16"
    assert t4.conversational and t4.enable_thinking is False
    assert t4.global_batch % t4.num_generations == 0
    assert lb.default_config(lb.QWEN_ID, device="cpu").precision == "fp32"
    assert lb.default_config(lb.QWEN_ID, smoke=False, device="cuda").max_steps > t4.max_steps


@pytest.mark.parametrize("model_id", [None, lb.QWEN_ID])
def test_every_objective_field_is_explicit_and_kept(model_id):
    from trl import GRPOConfig

    fields = {f.name: f for f in dataclasses.fields(GRPOConfig)}
    unknown = [k for k in lb.OBJECTIVE_FIELDS if k not in fields]
    assert not unknown, f"not GRPOConfig fields in TRL {__import__('trl').__version__}: {unknown}"
    cfg = lb.default_config(model_id, smoke=True, device="cpu")
    kw = lb.grpo_kwargs(cfg)
    missing = [k for k in lb.OBJECTIVE_FIELDS if k not in kw]
    assert not missing, f"left to TRL's defaults: {missing}"
    args = lb.grpo_config(cfg)
    changed = {
        k: (kw[k], getattr(args, k)) for k in lb.OBJECTIVE_FIELDS if getattr(args, k) != kw[k]
    }
    assert not changed, f"TRL changed explicit values (given, held): {changed}"

    # The explicit values that differ from this TRL's dataclass defaults (informative, and a guard
    # that the comparison is real): TRL's loss_type default is dapo, ours is explicit either way.
    def default(name):
        f = fields[name]
        return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default

    differ = {k for k in lb.OBJECTIVE_FIELDS if default(k) != kw[k]}
    assert {"beta", "epsilon_high", "mask_truncated_completions", "max_steps"} & differ


def test_every_field_trl_reads_is_decided():
    """Each GRPOConfig field read by TRL's loss or rollout code is set here or declared
    not applicable (with a reason). A field new in a later TRL fails here until decided."""
    from trl import GRPOConfig, GRPOTrainer

    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    read = set()
    for fn in (GRPOTrainer._compute_loss, GRPOTrainer._generate_and_score_completions):
        src = inspect.getsource(fn)
        read |= set(re.findall(r"self\.args\.(\w+)", src)) | set(re.findall(r"self\.(\w+)", src))
    undecided = sorted((read & fields) - set(lb.OBJECTIVE_FIELDS) - set(lb.NOT_APPLICABLE))
    assert not undecided, f"GRPOConfig fields TRL reads that level B does not decide: {undecided}"
    assert "loss_type" in read and "epsilon_high" in read  # the scan sees the source


def test_lora_config_matches_cfg():
    cfg = lb.default_config(None, device="cpu")
    lc = lb.lora_config(cfg)
    assert (lc.r, lc.lora_alpha, lc.lora_dropout) == (cfg.lora_r, cfg.lora_alpha, cfg.lora_dropout)
    assert set(lc.target_modules) == set(cfg.lora_target_modules) and lc.bias == "none"


def test_passport_holds_objective_args_and_versions():
    cfg = lb.default_config(None, device="cpu")
    p = lb.passport(cfg)
    held = p["extra"]["grpo_config"]
    assert set(lb.OBJECTIVE_FIELDS) <= set(held)
    assert held["loss_type"] == cfg.loss_type and held["beta"] == cfg.beta
    assert held["scale_rewards"] == cfg.scale_rewards
    for lib in ("torch", "transformers", "peft", "trl", "datasets", "accelerate"):
        assert p["versions"][lib], lib
    assert p["config"]["lora_target_modules"] == cfg.lora_target_modules
    assert p["verifier"]["name"] == cfg.verifier and p["config_hash"]


# ---------------------------------------------------------------------------------------------
# Data and reward


def test_dataset_columns_and_split():
    ds = lb.make_dataset("arithmetic_choice", 6, "train", seed=3)
    assert ds.column_names == ["prompt", "answer", "family", "split", "meta"]
    assert all(p.startswith("Q: ") for p in ds["prompt"])
    assert ds["prompt"] == lb.make_dataset("arithmetic_choice", 6, "train", seed=3)["prompt"]
    meta = json.loads(ds["meta"][0])
    assert meta["split"] == "train" and len(meta["options"]) == 2
    chat = lb.make_dataset("arithmetic", 3, "heldout", conversational=True)
    assert chat["prompt"][0][0]["role"] == "user" and chat["split"] == ["heldout"] * 3


def test_reward_function_scores_plain_and_chat_completions():
    from helpers.verifiers import NUMERIC, verify_arithmetic

    ds = lb.make_dataset("arithmetic_choice", 2, seed=0)
    f = lb.reward_function(verify_arithmetic)
    ans = ds["answer"]
    logged = {}
    r = f(
        prompts=ds["prompt"],
        completions=[f" {ans[0]}", " no idea"],
        answer=ans,
        family=ds["family"],
        meta=ds["meta"],
        log_metric=lambda k, v: logged.__setitem__(k, v),
    )
    assert r == [1.0, 0.0] and logged == {"verifier/correct": 0.5, "verifier/no_answer": 0.5}
    chat = lb.make_dataset("arithmetic", 2, conversational=True)
    g = lb.reward_function(NUMERIC)
    comps = [[{"role": "assistant", "content": f"so \\boxed{{{a}}}"}] for a in chat["answer"]]
    assert g(chat["prompt"], comps, chat["answer"], chat["family"], chat["meta"]) == [1.0, 1.0]


# ---------------------------------------------------------------------------------------------
# The dashboard from TRL's log history


def test_history_to_dashboard_maps_and_gaps():
    log = [
        {"step": 1, "reward": 0.5, "reward_std": 0.4, "frac_reward_zero_std": 0.25,
         "entropy": 1.2, "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.1,
         "completions/mean_length": 7.0, "completions/clipped_ratio": 0.5, "loss": 0.01,
         "verifier/no_answer": 0.25, "verifier/parse_error": 0.125},
        {"step": 2, "loss": 0.02, "entropy": 1.1, "clip_ratio/low_mean": 0.05,
         "clip_ratio/high_mean": 0.0},
        {"step": 2, "train_runtime": 1.0, "train_loss": 0.015},
    ]  # fmt: skip
    h = lb.history_to_dashboard(log).history
    assert h["step"] == [1.0, 2.0]
    assert h["informative_rate"][0] == 0.75 and math.isnan(h["informative_rate"][1])
    assert h["clip_low"] == [0.0, 0.05] and h["clip_high"] == [0.1, 0.0]
    assert h["truncation_rate"][0] == 0.5 and h["len_mean"][0] == 7.0
    assert h["parse_fail_rate"][0] == 0.375
    assert "kl" not in h, "beta = 0: TRL logs no kl, the dashboard must not invent one"


# ---------------------------------------------------------------------------------------------
# Real training steps (slow)


def digit_share(completions, **kwargs) -> list[float]:
    """Test stand-in reward: the share of digits in a completion (varies within a group even for
    an untrained model, so the advantages and the LoRA gradient are not zero)."""
    texts = [c if isinstance(c, str) else str(c) for c in completions]
    return [sum(ch.isdigit() for ch in t) / max(1, len(t)) for t in texts]


def _cfg(tiny_baselm, tmp_path, **changes):
    cfg = lb.default_config(str(tiny_baselm), smoke=True, device="cpu")
    cfg.output_dir = str(tmp_path / "trl")
    cfg.mask_truncated_completions = False  # the tiny model never stops: keep its completions
    cfg.temperature = 1.5  # more spread in the untrained model's samples
    return dataclasses.replace(cfg, **changes)


@pytest.mark.slow
def test_trl_steps_move_lora_only_and_fill_the_dashboard(tiny_baselm, tmp_path):
    torch.set_num_threads(1)
    cfg = _cfg(tiny_baselm, tmp_path, max_steps=3, beta=0.04, num_iterations=2)
    res = lb.run(cfg, reward_funcs=[digit_share])
    w = res["weights"]
    assert w["base_before"] == w["base_after"], "a base weight changed: only LoRA may train"
    assert w["lora_tensors"] == 4 and w["lora_changed"] >= 2, w  # B matrices at least
    trainer = res["trainer"]
    assert all(("lora_" in n) == p.requires_grad for n, p in trainer.model.named_parameters())

    log = [r for r in res["log_history"] if "train_runtime" not in r]
    hist = res["history"]
    assert len(log) == cfg.max_steps == len(hist["step"])
    for course, trl_key in (("reward", "reward"), ("reward_std", "reward_std"),
                            ("entropy", "entropy"), ("kl", "kl"),
                            ("clip_low", "clip_ratio/low_mean"),
                            ("clip_high", "clip_ratio/high_mean"),
                            ("len_mean", "completions/mean_length"),
                            ("truncation_rate", "completions/clipped_ratio")):  # fmt: skip
        assert course in hist, f"{course} missing from the dashboard ({trl_key})"
        trl_vals = [r.get(trl_key, math.nan) for r in log]
        np.testing.assert_array_equal(hist[course], np.array(trl_vals, dtype=float))
    inf = np.array(hist["informative_rate"])
    zero_std = np.array([r.get("frac_reward_zero_std", math.nan) for r in log], dtype=float)
    np.testing.assert_allclose(inf, 1 - zero_std)
    assert np.nanmax(inf) > 0, "no informative group: the run had no signal"
    assert hist["kl"][0] >= 0 and all(e > 0 for e in hist["entropy"])
    # num_iterations = 2: steps 1, 3 sample; step 2 reuses step 1's rollout (no reward logged)
    assert not math.isnan(hist["reward"][0]) and math.isnan(hist["reward"][1])
    assert res["passport"]["extra"]["grpo_config"]["num_iterations"] == 2
    num = res["numerics"]  # fp32 on a CPU: nothing overflows, no step is skipped
    assert num["ok"] and num["skipped_optimizer_steps"] == [] and num["steps"] == cfg.max_steps, num

    # TRL's advantages: (r - group mean) / (std with G - 1 + 1e-4), float32.
    F = _course_functions()
    G = cfg.num_generations
    rewards = np.array(trainer._logs["rewards"]["digit_share"], dtype=np.float64).reshape(-1, G)
    adv = np.array(trainer._logs["advantages"], dtype=np.float64).reshape(-1, G)
    centred = rewards - rewards.mean(1, keepdims=True)
    np.testing.assert_allclose(adv, centred / (rewards.std(1, ddof=1, keepdims=True) + 1e-4),
                               atol=1e-5)  # fmt: skip
    # Lesson 9.2's group_advantages (population std, eps 1e-6) differ by sqrt((G - 1) / G)
    # when eps is negligible against the std: the factor its docstring states.
    ok = rewards.std(1) > 0.05
    np.testing.assert_allclose(
        adv[ok], F["group_advantages"](rewards)[ok] * math.sqrt((G - 1) / G), rtol=2e-3, atol=1e-4
    )


@pytest.mark.slow
def test_trl_step_dr_grpo_sequence_no_kl(tiny_baselm, tmp_path):
    """scale_rewards="none" is lesson 9.3's dr_grpo_advantages; beta = 0 logs no KL."""
    torch.set_num_threads(1)
    cfg = _cfg(tiny_baselm, tmp_path, max_steps=1, beta=0.0, num_iterations=1,
               scale_rewards="none", loss_type="dr_grpo", importance_sampling_level="sequence")  # fmt: skip
    res = lb.run(cfg, reward_funcs=[digit_share])
    assert "kl" not in res["history"]
    trainer = res["trainer"]
    G = cfg.num_generations
    rewards = np.array(trainer._logs["rewards"]["digit_share"], dtype=np.float64).reshape(-1, G)
    adv = np.array(trainer._logs["advantages"], dtype=np.float64).reshape(-1, G)
    np.testing.assert_allclose(adv, _course_functions()["dr_grpo_advantages"](rewards), atol=1e-6)
    assert res["weights"]["base_before"] == res["weights"]["base_after"]


@pytest.mark.slow
def test_cli_smoke_with_the_verifier(tiny_baselm, tmp_path):
    """``python -m helpers.level_b --model DIR --smoke``: the entry of course/level_b/gpu_smoke.sh."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "helpers.level_b", "--model", str(tiny_baselm), "--smoke",
           "--device", "cpu", "--out", str(out)]  # fmt: skip
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    passport = json.loads((out / "passport.json").read_text())
    assert passport["extra"]["grpo_config"]["loss_type"] == "dapo"
    assert passport["extra"]["measured"]["wall_s"] > 0
    assert passport["extra"]["measured"]["numerics"]["ok"], passport["extra"]["measured"]
    assert "numerics ok (fp32)" in proc.stdout
    assert json.loads((out / "dashboard.json").read_text())["history"]["reward"]


def _course_functions():
    from test_trl_equivalence import course_functions

    return course_functions()


# ---------------------------------------------------------------------------------------------
# The Colab set-up cell


def _requirements() -> dict:
    import tomllib

    from packaging.requirements import Requirement

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {Requirement(line).name.lower(): Requirement(line).specifier for line in deps}


def test_colab_pins_are_the_locked_versions_inside_requirements_and_installed():
    from importlib import metadata

    reqs = _requirements()
    locked = dict(ln.split("==") for ln in (ROOT / "requirements.lock").read_text().splitlines()
                  if "==" in ln and not ln.startswith("#"))  # fmt: skip
    pins = {}
    for line in lb.colab_pip_lines():
        pins.update(dict(re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', line)))
    assert pins == lb.PINS and "torch" not in pins, "Colab keeps its own CUDA torch"
    for name, version in pins.items():
        assert name in reqs, f"{name} is pinned for Colab but not a dependency in pyproject.toml"
        assert reqs[name].contains(version), f"{name}=={version} outside requirements {reqs[name]}"
        assert locked.get(name) == version, f"{name}: requirements.lock has {locked.get(name)}"
        assert metadata.version(name) == version, f"{name}: tested with {metadata.version(name)}"


PROSE_NAMES = {"trl": "TRL", "peft": "PEFT", "transformers": "Transformers", "datasets": "Datasets",
               "accelerate": "Accelerate", "tokenizers": "Tokenizers"}  # fmt: skip
PROSE = [
    "course/lessons/9.5/lesson.py",
    "course/level_b/README.md",
    "course/docs/Module_9_Sources.md",
]


@pytest.mark.parametrize("doc", PROSE)
def test_prose_names_the_pinned_versions(doc):
    """Where the lesson and the docs say which versions level B is tested with, they name the pins
    (a "Name X.Y.Z" with another version of a pinned library is allowed only next to the word
    "snapshot": the dated snapshot the module was first specified against)."""
    assert set(PROSE_NAMES) == set(lb.PINS)
    text = re.sub(r"\s+", " ", (ROOT / doc).read_text().replace("#", " "))
    for name, version in lb.PINS.items():
        shown = PROSE_NAMES[name]
        assert f"{shown} {version}" in text, f"{doc} does not name {shown} {version} (the pin)"
        for m in re.finditer(rf"\b{shown} (\d+\.\d+\.\d+)", text):
            if m.group(1) != version:
                near = text[max(0, m.start() - 300) : m.end() + 100]
                assert "snapshot" in near, f"{doc}: {m.group(0)} is not the pin {version}"


@pytest.fixture(scope="module")
def bundle_tarball(tmp_path_factory) -> Path:
    """The student bundle's archive, written by the instructor's bundle command."""
    from course.instructor import bundle

    return bundle(tmp_path_factory.mktemp("bundle"))


TARBALL = colab._ARCHIVE


def _colab_code(content: Path, setup_only: bool = True) -> str:
    """The cell's Python with Colab's /content replaced by ``content``; ``setup_only``: up to the
    pip lines (finding and unpacking the bundle), without the imports and the T4 profile."""
    code = lb.colab_python()
    line = f'CONTENT = "{colab._COLAB_CONTENT}"'
    assert code.count(line) == 1, "the cell looks for the bundle in Colab's folder, once"
    code = code.replace(line, f"CONTENT = {str(content)!r}")
    return code.split("import torch,")[0] if setup_only else code


def _no_colab(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", None)  # `from google.colab import` fails


def _fake_colab(monkeypatch, uploads: dict[str, bytes]) -> list:
    """A stub ``google.colab.files`` whose ``upload()`` returns ``uploads`` (name -> bytes, as
    Colab's does); the list it returns records the calls."""
    import types

    calls: list = []
    names = ("google", "google.colab", "google.colab.files")
    google, gcolab, files = (types.ModuleType(n) for n in names)
    files.upload = lambda: calls.append("upload") or dict(uploads)
    gcolab.files, google.colab = files, gcolab
    for name, mod in zip(names, (google, gcolab, files)):
        monkeypatch.setitem(sys.modules, name, mod)
    return calls


def test_colab_cell_needs_no_edit_and_installs_only_the_student_bundle():
    cell = lb.COLAB_SETUP
    for leak in ("COURSE_SOURCE", "git+", "github.com", "pip wheel", "YOUR-ORG"):
        assert leak not in cell, f"the cell must not point at the course repository ({leak})"
    assert 'filter="data"' in cell and "extractall" in cell, "the bundle is unpacked by tarfile"
    assert not [ln for ln in lb.colab_pip_lines() if "tar " in ln] and "!tar" not in cell
    pip = lb.colab_pip_lines()
    assert len(pip) == 2 and pip[0].startswith('pip install -q "') and "--no-deps" not in pip[0]
    # IPython expands {COURSE_DIR} in a `!` line: the folder the Python part found or unpacked
    assert pip[1].startswith("pip install -q --no-deps") and pip[1].endswith('"{COURSE_DIR}"')
    # google.colab is imported only in the upload branch (indented), so the cell's Python runs
    # anywhere until it needs an upload
    imports = [ln for ln in cell.splitlines() if "google.colab" in ln and "import" in ln]
    assert imports and all(ln.startswith(" ") for ln in imports)


def test_colab_cell_finds_and_unpacks_the_bundle_then_runs(tmp_path, bundle_tarball, monkeypatch):
    _no_colab(monkeypatch)
    content = tmp_path / "content"
    (content / "drive" / "MyDrive").mkdir(parents=True)
    shutil.copy2(bundle_tarball, content / "drive" / "MyDrive" / TARBALL)  # anywhere under it
    ns: dict = {}
    exec(_colab_code(content, setup_only=False), ns)
    folder = Path(ns["COURSE_DIR"])
    assert folder == content / colab._BUNDLE_NAME, "unpacked into Colab's folder"
    assert (folder / "pyproject.toml").is_file() and (folder / "helpers" / "level_b").is_dir()
    assert "course-admin" not in (folder / "pyproject.toml").read_text()
    assert not (folder / "course").exists() and not (folder / "tests").exists()
    assert ns["cfg"].model_id == lb.QWEN_ID
    # rerun: the unpacked folder is used as it is, with or without the archive
    (content / "drive" / "MyDrive" / TARBALL).unlink()
    ns = {}
    exec(_colab_code(content), ns)
    assert Path(ns["COURSE_DIR"]) == folder


def test_colab_cell_prefers_the_archive_nearest_to_content(tmp_path, bundle_tarball, monkeypatch):
    _no_colab(monkeypatch)
    content = tmp_path / "content"
    for sub in ("b/c", "a/x/y", ""):
        (content / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy2(bundle_tarball, content / sub / TARBALL)
    (content / "b" / "c" / TARBALL).write_bytes(b"not a tarball")  # deeper than the good one
    (content / "a" / "x" / "y" / TARBALL).write_bytes(b"not a tarball")
    ns: dict = {}
    exec(_colab_code(content), ns)
    assert (Path(ns["COURSE_DIR"]) / "pyproject.toml").is_file()
    assert ns["found"][0] == str(content / TARBALL)


def test_colab_cell_without_a_bundle_outside_colab_names_the_file(tmp_path, monkeypatch):
    _no_colab(monkeypatch)
    (tmp_path / "content").mkdir()
    with pytest.raises(FileNotFoundError, match=rf"{re.escape(TARBALL)} is not in .*not Colab"):
        exec(_colab_code(tmp_path / "content"), {})


def test_colab_cell_asks_for_the_bundle_on_colab(tmp_path, bundle_tarball, monkeypatch, capsys):
    content = tmp_path / "content"
    content.mkdir()
    # Colab renames a second upload of the same file "name (1).tar.gz"
    calls = _fake_colab(
        monkeypatch, {f"{colab._BUNDLE_NAME} (1).tar.gz": bundle_tarball.read_bytes()}
    )
    ns: dict = {}
    exec(_colab_code(content), ns)
    assert calls == ["upload"] and f"Upload the course bundle {TARBALL}" in capsys.readouterr().out
    assert (Path(ns["COURSE_DIR"]) / "helpers" / "level_b" / "colab.py").is_file()


@pytest.mark.parametrize(
    "uploads, err, message",
    [
        ({}, FileNotFoundError, "nothing was uploaded: rerun this cell and upload"),
        ({"notes.txt": b"hello"}, ValueError, "notes.txt cannot be unpacked safely"),
    ],
)
def test_colab_cell_upload_of_something_else_names_the_file(
    tmp_path, monkeypatch, uploads, err, message
):
    (tmp_path / "content").mkdir()
    _fake_colab(monkeypatch, uploads)
    with pytest.raises(err, match=rf"(?s){re.escape(message)}.*{re.escape(TARBALL)}"):
        exec(_colab_code(tmp_path / "content"), {})
    assert sorted(p.name for p in (tmp_path / "content").iterdir()) == [], "nothing written"


def _tarball(path: Path, members: list[tuple[str, bytes | str]]) -> Path:
    """A .tar.gz with the given members: (name, file bytes), (name, symlink target str) or
    (name, "hardlink:" + target)."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if isinstance(data, str):
                kind = tarfile.LNKTYPE if data.startswith("hardlink:") else tarfile.SYMTYPE
                info.type, info.linkname = kind, data.removeprefix("hardlink:")
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


GOOD = [
    (f"{colab._BUNDLE_NAME}/pyproject.toml", b"[project]\n"),
    (f"{colab._BUNDLE_NAME}/helpers/x.py", b""),
]


@pytest.mark.parametrize(
    "member, message",
    [
        ("../x", "lies outside rlvr-grpo-module9/"),
        (f"{colab._BUNDLE_NAME}/../../x", "lies outside rlvr-grpo-module9/"),
        ("/tmp/colab-cell-absolute-x", "lies outside rlvr-grpo-module9/"),
        ("elsewhere/x", "lies outside rlvr-grpo-module9/"),
        ((f"{colab._BUNDLE_NAME}/link", "/etc/passwd"), "is a link or a device"),
        ((f"{colab._BUNDLE_NAME}/link", "../../x"), "is a link or a device"),
        # a link that stays inside /content, then a member written through it (the "data" filter
        # alone lets the link in): refused before anything is unpacked
        ((f"{colab._BUNDLE_NAME}/lnk", "../other"), "is a link or a device"),
        (
            (f"{colab._BUNDLE_NAME}/hard", f"hardlink:{colab._BUNDLE_NAME}/pyproject.toml"),
            "is a link or a device",
        ),  # fmt: skip
    ],
)
def test_colab_cell_refuses_an_archive_escaping_its_folder(tmp_path, monkeypatch, member, message):
    _no_colab(monkeypatch)
    content = tmp_path / "content"
    content.mkdir()
    bad = member if isinstance(member, tuple) else (member, b"escaped")
    _tarball(content / TARBALL, [*GOOD, bad])
    with pytest.raises(ValueError, match=rf"(?s){re.escape(TARBALL)} .*{re.escape(message)}"):
        exec(_colab_code(content), {})
    assert not (tmp_path / "x").exists() and not Path("/tmp/colab-cell-absolute-x").exists()
    assert sorted(p.name for p in content.iterdir()) == [TARBALL]  # refused before any unpacking


def test_colab_cell_refuses_an_archive_too_large_to_be_the_bundle(tmp_path, monkeypatch):
    _no_colab(monkeypatch)
    content = tmp_path / "content"
    content.mkdir()
    _tarball(content / TARBALL, [*GOOD, (f"{colab._BUNDLE_NAME}/big.bin", b"0" * 4096)])
    code = _colab_code(content)
    assert code.count("MAX_BYTES = 256 * 2**20") == 1
    with pytest.raises(ValueError, match=rf"(?s){re.escape(TARBALL)} .*more than 0 MiB"):
        exec(code.replace("MAX_BYTES = 256 * 2**20", "MAX_BYTES = 1024"), {})
    assert sorted(p.name for p in content.iterdir()) == [TARBALL]


@pytest.mark.parametrize("kind", ["not a tarball", "no pyproject"])
def test_colab_cell_refuses_what_is_not_the_bundle(tmp_path, monkeypatch, kind):
    _no_colab(monkeypatch)
    content = tmp_path / "content"
    content.mkdir()
    if kind == "not a tarball":
        (content / TARBALL).write_bytes(b"<html>a download page, not the archive</html>")
        err, message = ValueError, "cannot be unpacked safely"
    else:
        _tarball(content / TARBALL, [GOOD[1]])
        err, message = FileNotFoundError, "is not the course bundle: .* holds no pyproject"
    with pytest.raises(err, match=rf"(?s){re.escape(TARBALL)}.*{message}.*{re.escape(TARBALL)}"):
        exec(_colab_code(content), {})


def test_numerics_report_flags_nonfinite_losses_and_persistent_skips():
    rows = [{"step": i, "loss": 0.1, "grad_norm": 1.0} for i in range(1, 11)]
    rep = lb.numerics_report(rows + [{"step": 10, "train_runtime": 1.0}], [], "fp32")
    assert rep["ok"] and rep["steps"] == 10 and rep["problems"] == []
    bad = [dict(r) for r in rows]
    bad[3]["loss"] = float("nan")
    bad[4]["grad_norm"] = float("inf")
    rep = lb.numerics_report(bad, [], "fp32")
    assert not rep["ok"] and rep["nonfinite_loss_steps"] == [4]
    assert rep["nonfinite_grad_norm_steps"] == [5] and len(rep["problems"]) == 2
    # fp16: an inf gradient norm is a skipped step (the scaler's business), two early skips are fine
    fp16 = [dict(r) for r in rows]
    fp16[0]["grad_norm"] = fp16[1]["grad_norm"] = float("inf")
    assert lb.numerics_report(fp16, [1, 2], "fp16")["ok"]
    rep = lb.numerics_report(fp16, [1, 2, 5, 7], "fp16")
    assert not rep["ok"] and "4 of 10 optimiser steps skipped" in rep["problems"][0]


@pytest.mark.slow
def test_colab_pins_resolve_on_pypi(tmp_path):
    """pip resolves every pinned version (metadata only; skipped without PyPI)."""
    pins = [f"{k}=={v}" for k, v in lb.PINS.items()]
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
           "--quiet", "--target", str(tmp_path / "t"), *pins]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("PyPI did not answer within 120 s")
    if proc.returncode and re.search(
        r"connection|resolve|network|Temporary failure", proc.stderr, re.I
    ):
        pytest.skip(f"PyPI not reachable: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_readme_holds_the_colab_cell_and_the_files_exist():
    readme = (ROOT / "course" / "level_b" / "README.md").read_text()
    assert lb.COLAB_SETUP.rstrip() in readme, "course/level_b/README.md: paste COLAB_SETUP again"
    for name in ("EQUIVALENCE.md", "T4_ESTIMATE.md", "LEVEL_C.md", "level_c_accelerate.yaml",
                 "gpu_smoke.sh"):  # fmt: skip
        assert (ROOT / "course" / "level_b" / name).is_file(), name
    assert "UNVERIFIED" in (ROOT / "course" / "level_b" / "T4_ESTIMATE.md").read_text()
    proc = subprocess.run(["bash", "-n", str(ROOT / "course" / "level_b" / "gpu_smoke.sh")])
    assert proc.returncode == 0


def test_level_c_accelerate_yaml_is_a_multi_gpu_config():
    import yaml

    cfg = yaml.safe_load((ROOT / "course" / "level_b" / "level_c_accelerate.yaml").read_text())
    assert cfg["distributed_type"] == "MULTI_GPU" and cfg["num_processes"] > 1
    assert cfg["use_cpu"] is False and cfg["mixed_precision"] in ("bf16", "fp16")
