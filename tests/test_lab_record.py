"""The BaseLM lab's figures in the claims registry come from the committed record, which one
command produced (``python -m dev.records.baselm_lab``); the record carries what is needed
to judge it (weights hash, seeds, CPU, versions, paired intervals). The lab runs with three seeds
(LoRA seed of every run; trainer seed of every run but the format smoke run, which keeps 0);
the contrasts the lesson teaches must hold for each of them on the recording machine (issue 13)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dev import current_command
from dev.records import baselm_lab as mlr
from helpers.baselm import SHIPPED_DIR
from helpers.stats import holm, paired_difference, paired_p_value

ROOT = Path(__file__).resolve().parent.parent

RECORD = json.loads(mlr.OUT.read_text())


def registry_row(rid: str) -> str:
    text = (ROOT / "course" / "docs" / "Module_9_Sources.md").read_text()
    m = re.search(rf"^\| {re.escape(rid)} \|.*$", text, re.M)
    assert m, rid
    return m.group(0)


def test_record_is_of_the_shipped_baselm_and_names_its_machine():
    shipped = json.loads((SHIPPED_DIR / "passport.json").read_text())
    assert RECORD["baselm_weights_sha256"] == shipped["weights_sha256"]
    # the command that made it (the record keeps it; dev.MOVED maps a moved script to today's)
    assert current_command(RECORD["command"]) == mlr.COMMAND
    assert RECORD["machine"]["cpu"] and RECORD["versions"]["torch"].startswith("2.13.0")
    assert RECORD["seeds"]["trainer_and_lora"] == list(mlr.SEEDS)
    assert set(RECORD["runs"]) == {str(s) for s in mlr.SEEDS}
    for runs in RECORD["runs"].values():
        assert set(runs) == set(mlr.RUNS + mlr.SWEEP)


def _rates(run):
    yield from run["rates"].items()
    if "audit" in run:
        yield "exact (audit)", run["audit"]["exact"]


def test_every_rate_carries_a_consistent_paired_interval():
    for seed, runs in RECORD["runs"].items():
        for name, run in runs.items():
            for v, x in _rates(run):
                n = run["n_heldout"]
                # the counts reproduce the interval: rebuild outcomes with the same margins
                kept = round(x["before"] * n) - x["lost"]
                before = [1] * kept + [1] * x["lost"] + [0] * x["gained"]
                after = [1] * kept + [0] * x["lost"] + [1] * x["gained"]
                pad = n - len(before)
                d = paired_difference(before + [0] * pad, after + [0] * pad)
                assert (round(d.low, 4), round(d.high, 4)) == tuple(x["ci95"]), (seed, name, v)
                assert d.excludes_zero == x["excludes_zero"] and abs(d.after - x["after"]) < 1e-9


def test_secondary_family_is_the_no_kl_and_k_sweep_contrasts_with_holm_over_all_of_them():
    """The Holm family is every secondary interval the registry reports (beta = 0 and K = 2, 8, 16
    on every seed), its p-values agree with the recorded intervals (p < 0.05 exactly where the
    interval excludes 0), and Holm runs over the whole family at once."""
    fam = mlr.secondary_contrasts(RECORD)
    assert [(s, c) for s, c, *_ in fam] == [
        (str(s), c) for s in mlr.SEEDS for c in ("beta = 0", "K=2", "K=8", "K=16")
    ]
    for seed, c, x, p, _ in fam:
        n = RECORD["runs"][seed]["arith_main"]["n_heldout"]
        assert p == paired_p_value(n, x["gained"], x["lost"])
        assert (p < 0.05) == x["excludes_zero"], (seed, c, p)
    assert [h for *_, h in fam] == holm([p for *_, p, _ in fam], mlr.HOLM_ALPHA)
    for seed, runs in RECORD["runs"].items():  # the p-values agree with every recorded interval
        for name, run in runs.items():
            for v, x in _rates(run):
                p = paired_p_value(run["n_heldout"], x["gained"], x["lost"])
                if abs(p - 0.05) > 1e-6:
                    assert (p < 0.05) == x["excludes_zero"], (seed, name, v)


def test_registry_row_quotes_the_record():
    row = registry_row("9.5-11")
    missing = [p for p in mlr.figures(RECORD) if p not in row]
    assert not missing, f"9.5-11 does not quote the record: {missing}"


def test_format_smoke_trainer_seed_is_the_one_the_record_names():
    """The format smoke run's trainer seed is fixed in the lesson (only its LoRA seed follows
    COURSE_LAB_SEED); figures() names it, so the two must agree."""
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    m = re.search(r"fmt_cfg = TrainerConfig\((.*?)\)", text, re.S)
    assert m, "the lesson's format smoke config"
    assert re.search(rf"\bseed={mlr.FORMAT_TRAINER_SEED}\b", m.group(1)), m.group(1)
    assert "lora_seed" not in m.group(1)


def test_initial_pass_rates_are_in_the_data_passport():
    for runs in RECORD["runs"].values():
        ipr = runs["arith_main"]["initial_pass_rate"]
        assert ipr and ipr["k"] == 8 and sum(ipr["histogram"]) == ipr["prompts"]


def test_the_recorded_contrasts_hold_for_every_seed():
    """Issue 13's bar, checked on the committed record: held-out learning of at least 0.15 with a
    paired interval above 0; the sloppy run exploited (the sloppy rule pays more than the patched
    rule, and exploiting completions are found) while the patched rule's pass rate stalls or
    falls (its paired interval does not lie above 0); the patched run shows no exploit."""
    for seed, r in RECORD["runs"].items():
        main = r["arith_main"]["rates"]["strict"]
        assert main["diff"] >= 0.15 and main["ci95"][0] > 0, seed
        assert r["arith_main"]["n_heldout"] >= 190
        sloppy = r["arith_sloppy"]["audit"]
        assert sloppy["exploit_rate"] > 0.1 and sloppy["exploit_examples"], seed
        assert sloppy["sloppy_after"] > sloppy["exact"]["after"] + 0.1, seed
        assert sloppy["exact"]["ci95"][0] <= 0, f"seed {seed}: the intended rate rose measurably"
        patched = r["arith_patched"]["audit"]
        assert patched["exploit_rate"] < 0.02, seed
        assert patched["exact"]["diff"] >= 0.15 and patched["exact"]["ci95"][0] > 0, seed


def test_what_the_lesson_says_of_the_audits_holds_on_every_seed():
    """The record paragraph's audit claims, seed by seed: the main run gains on the prompts held
    out in both orders, from a lower start; the sloppy run's patched-rule pass rate collapses (to
    0.25 or less, its interval below 0) and the third rule sees a smaller fall; among exploiting
    completions the two rules part over the stutters alone (no exploit of kind "other"); on seeds 0
    and 2 the collapse came after the sloppy run had first gained as the main run did (above its
    start by more than 0.15 at step 124, below 0.3 at step 186), on seed 1 it fell from the first
    evaluation on."""
    for seed, r in RECORD["runs"].items():
        main = r["arith_main"]
        both = main["both_orders"]["both_heldout"]
        assert both["ci95"][0] > 0 and both["before"] < main["rates"]["strict"]["before"], seed
        sloppy, n = r["arith_sloppy"]["audit"], r["arith_sloppy"]["n_heldout"]
        assert sloppy["exact"]["after"] <= 0.25 and sloppy["exact"]["ci95"][1] < 0, seed
        # "the third rule sees a fall on every seed too, a smaller one than the patched rule's"
        judge = sloppy["judge"]
        assert judge["ci95"][1] < 0 and judge["after"] < judge["before"] - 0.2, seed
        assert sloppy["exact"]["diff"] < judge["diff"], seed
        kinds = sloppy["exploit_kinds"]
        assert kinds["other"] == 0 and sum(kinds.values()) == round(sloppy["exploit_rate"] * n)
        assert (
            round((sloppy["exploit_rate"] - sloppy["judge_exploit_rate"]) * n) == kinds["stutter"]
        )
        curve = sloppy["curve"]
        assert curve["step"][2:4] == [124, 186] and curve["step"][-1] == main["steps"]
        if seed in ("0", "2"):
            assert curve["exact"][2] > curve["exact"][0] + 0.15 and curve["exact"][3] < 0.3, seed
            # "time to overtake the honest skill": by the end the exploiting completions outnumber
            # the completions the patched rule pays
            assert sloppy["exploit_rate"] > curve["exact"][-1], seed
        else:
            assert all(b < a for a, b in zip(curve["exact"][:4], curve["exact"][1:4])), seed
    # "the K = 2 run's seeds 1 and 2 miss each other too, by less than 0.01"
    k2 = {seed: r["sweep_K2"]["rates"]["strict"]["ci95"] for seed, r in RECORD["runs"].items()}
    assert 0 < k2["2"][0] - k2["1"][1] < 0.01
    # "seed 1's gain lies outside seed 0's interval"; the K = 16 run's seeds 0 and 1 "do not even
    # overlap"
    runs = RECORD["runs"]
    assert (
        runs["1"]["arith_main"]["rates"]["strict"]["diff"]
        > (runs["0"]["arith_main"]["rates"]["strict"]["ci95"][1])
    )
    k16 = {seed: r["sweep_K16"]["rates"]["strict"]["ci95"] for seed, r in runs.items()}
    assert k16["0"][0] > k16["1"][1]
    # the main run's own curve: 124 is where it had learned (above 0.9 on every seed)
    assert all(r["arith_main"]["audit"]["curve"]["exact"][2] > 0.9 for r in RECORD["runs"].values())


def test_each_record_names_the_clean_commit_and_the_lab_code_it_ran():
    """The lab code hash (the notebook's code cells and helpers/) of each record is that of its
    commit, whose tree was clean when the record was made, so "the same lab code" in the
    replication's provenance rests on two recomputable hashes (skipped where the checkout lacks
    the commit, as a shallow clone does)."""
    import subprocess

    missing = []
    for rec in (RECORD, REPLICATION):
        commit = rec["git"]["commit"]
        assert rec["git"]["dirty"] is False, rec["command"]
        known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                               capture_output=True).returncode == 0  # fmt: skip
        if not known:
            missing.append(commit[:7])
            continue
        assert mlr.lab_code_sha256(commit) == rec["lab_code_sha256"], rec["command"]
    if missing:
        pytest.skip(f"commits {missing} are not in this checkout")


def test_the_k8_tally_counts_gains_ties_and_losses_apart():
    import copy

    def tally(diffs) -> str:
        rep = copy.deepcopy(REPLICATION)
        for x, d in zip(rep["runs"].values(), diffs):
            x["sweep_K8"]["rates"]["strict"]["diff"] = d
        return next(p for p in mlr.replication_phrases(rep, RECORD) if p.startswith("over "))

    assert tally([0.1, 0.1, 0.1]).endswith("and no losses")
    assert ", 1 tie and 1 loss" in tally([0.1, 0.0, -0.1])
    assert ", 2 ties and no losses" in tally([0.0, 0.0, 0.1])


def test_a_contrast_disagrees_with_itself_where_two_seeds_intervals_do_not_overlap():
    import copy
    import random

    rnd = random.Random(20)
    for _ in range(200):  # generated intervals, touching ends included
        rep = copy.deepcopy(REPLICATION)
        ivs = {c: [] for c in mlr.SECONDARY}
        for x in rep["runs"].values():
            for c, rate in (("beta = 0", x["arith_no_kl"]["rates"]["strict"]),
                            *((f"K={k}", x[f"sweep_K{k}"]["rates"]["strict"]) for k in (2, 8, 16))):  # fmt: skip
                lo = rnd.choice([-0.2, -0.1, 0.0, 0.1])
                rate["ci95"] = [lo, lo + rnd.choice([0.1, 0.2])]
                ivs[c].append(rate["ci95"])
        want = [c for c in mlr.SECONDARY
                if max(lo for lo, _ in ivs[c]) > min(hi for _, hi in ivs[c])]  # fmt: skip
        assert mlr.self_disagreeing(rep) == want, ivs
        phrase = next(
            p
            for p in mlr.replication_phrases(rep, RECORD)
            if p.startswith("Of the secondary contrasts,")
        )
        assert ("disagrees with itself" if len(want) <= 1 else "themselves") in phrase, phrase
        assert (" none disagrees" in phrase) == (not want), phrase
    # four seeds: a pair that is not adjacent in seed order still counts
    rep = copy.deepcopy(REPLICATION)
    rep["runs"]["6"] = copy.deepcopy(rep["runs"]["5"])
    for seed, iv in zip(rep["runs"], ([0.0, 0.1], [0.05, 0.15], [0.08, 0.2], [0.11, 0.3])):
        rep["runs"][seed]["sweep_K8"]["rates"]["strict"]["ci95"] = iv
    assert "K=8" in mlr.self_disagreeing(rep)
    # the connective follows both lists; three names are listed with commas
    both, seeds = ["K=2", "K=16"], ["0", "1", "2"]
    assert mlr.disagreeing_phrase(["K=16"], both, seeds).endswith(
        "do not overlap), as K = 2 and K = 16 did on seeds 0, 1 and 2"
    )
    assert mlr.disagreeing_phrase([], both, seeds) == (
        "Of the secondary contrasts, none disagrees with itself here (two seeds' intervals that do "
        "not overlap), though K = 2 and K = 16 did on seeds 0, 1 and 2"
    )
    assert mlr.disagreeing_phrase(["K=16"], [], seeds).endswith("; none did on seeds 0, 1 and 2")
    assert mlr.disagreeing_phrase([], [], seeds) == (
        "Of the secondary contrasts, none disagrees with itself here (two seeds' intervals that do "
        "not overlap); none did on seeds 0, 1 and 2"
    )
    assert mlr.disagreeing_phrase(["beta = 0", "K=2", "K=16"], both, seeds).startswith(
        "Of the secondary contrasts, the no-KL run, K = 2 and K = 16 disagree with themselves here"
    )
    # the records: on seeds 0-2 the K = 2 and K = 16 runs, on seeds 3-5 the K = 16 run alone
    assert mlr.self_disagreeing(RECORD) == ["K=2", "K=16"]
    assert mlr.self_disagreeing(REPLICATION) == ["K=16"]


def test_provenance_names_what_differs_between_the_records():
    """The replication's provenance phrase: "only the seeds and the held-out stream changed" only
    when CPU model, kernel path, core count, lab code, versions and weights all match; otherwise
    each difference named, and a record without a lab code hash said to lack it."""
    import copy

    same = mlr.provenance(REPLICATION, RECORD)
    assert same.endswith("only the seeds and the held-out stream changed")
    cases = {
        ("machine", "cpu"): "the CPU model (the record above: ",
        ("machine", "torch_cpu_capability"): "the kernel path (the record above: ",
        ("machine", "cores"): "the core count (the record above: ",
        ("lab_code_sha256",): "and the lab code changed",
        ("versions", "torch"): "and the library versions changed",
        ("baselm_weights_sha256",): "and BaseLM's weights changed",
    }
    for path, said in cases.items():
        other = copy.deepcopy(REPLICATION)
        node = other
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = "something else"
        got = mlr.provenance(other, RECORD)
        assert said in got and "only the seeds" not in got, (path, got)
    other = copy.deepcopy(REPLICATION)
    del other["lab_code_sha256"]
    got = mlr.provenance(other, RECORD)
    assert got.endswith("the lab code of one of them was not recorded") and "only" not in got


def test_the_format_runs_score_the_whole_heldout_pool():
    """Registry 9.5-11: "30 format items, the whole held-out pool, each once"."""
    from helpers.tasks import format_pool_tasks

    n = len(format_pool_tasks("heldout"))
    assert n == 30 and "30 format items, the whole held-out pool, each once" in registry_row(
        "9.5-11"
    )
    for rec in (RECORD, REPLICATION):
        assert {r["format_smoke"]["n_heldout"] for r in rec["runs"].values()} == {n}


def test_the_lesson_quotes_the_record():
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    flat = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    missing = [p for p in mlr.lesson_phrases(RECORD) if p not in flat]
    assert not missing, f"lesson 9.5 does not quote the record: {missing}"


def test_lab_timing_is_recorded_and_in_benchmarks():
    t = RECORD["timing"]
    assert t["required_seconds"] > 0 and t["kernel_peak_rss_mb"] > 0
    assert t["optional_seconds"], "the optional exercises are timed separately"
    assert all("optional" in h.lower() for h in t["optional_seconds"])
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert mlr.timing_table(RECORD) in text, (
        "BENCHMARKS.md's BaseLM lab section is not the record's: rerun python -m dev.records.baselm_lab"
    )


REPLICATION = json.loads(mlr.REPLICATION.read_text())


def test_the_replication_is_fresh_seeds_on_a_fresh_heldout_stream():
    """Issue 20: the lab's configuration was chosen on seeds 0-2 and held-out stream 0; the
    replication runs seeds none of those runs used, judged on held-out prompts none of which the
    tuning or BaseLM's build read (lesson 9.5's heldout_tasks drops stream 0's first TUNING_DRAWS
    draws)."""
    rep = REPLICATION
    assert current_command(rep["command"]) == mlr.COMMAND + " --replication"
    assert rep["baselm_weights_sha256"] == RECORD["baselm_weights_sha256"]
    assert rep["seeds"]["trainer_and_lora"] == list(mlr.REPLICATION_SEEDS)
    assert not set(mlr.REPLICATION_SEEDS) & set(mlr.SEEDS)
    assert rep["heldout_stream"] == mlr.REPLICATION_STREAM != 0
    assert set(rep["runs"]) == {str(s) for s in mlr.REPLICATION_SEEDS}
    # the lesson's constants, and the stream they give: as many prompts as the record judged on
    lesson = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    n_eval = int(re.search(r"^N_EVAL = 32 if SMOKE else (\d+)", lesson, re.M).group(1))
    draws = int(re.search(r"^TUNING_DRAWS = (\d+)", lesson, re.M).group(1))
    assert draws >= 240, "the settings probe read stream 0's first 240 draws"
    from helpers.tasks import make_tasks

    def question(t) -> str:
        return t.prompt.split("=?")[0]

    tuned = {question(t) for t in make_tasks("arithmetic_choice", draws, "heldout", 0)}
    stream0 = {t.prompt for t in make_tasks("arithmetic_choice", n_eval, "heldout", 0)}
    fresh = make_tasks("arithmetic_choice", 10 * n_eval, "heldout", rep["heldout_stream"])
    assert len({t.prompt for t in fresh if question(t) not in tuned}) >= len(stream0)
    assert {r["arith_main"]["n_heldout"] for r in rep["runs"].values()} == {len(stream0)}


def test_the_lesson_quotes_the_replication():
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    flat = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    missing = [p for p in mlr.replication_phrases(REPLICATION, RECORD) if p not in flat]
    assert not missing, f"lesson 9.5 does not quote the replication record: {missing}"


def test_what_the_lesson_says_replicates_holds_on_every_seed():
    """The replication paragraph's claims: the main and patched runs gain measurably on every
    fresh seed (no exploit in the patched run); the sloppy run finds the exploit on every seed, its
    sloppy-rule rate rises, and on all six seeds its patched-rule pass rate ends below the patched
    run's; the K = 8 run gains on every fresh seed and the K = 16 run has intervals on both sides
    of 0."""
    for seed, r in REPLICATION["runs"].items():
        assert r["arith_main"]["rates"]["strict"]["ci95"][0] > 0, seed
        # "and on the prompts held out in both orders too"
        assert r["arith_main"]["both_orders"]["both_heldout"]["ci95"][0] > 0, seed
        patched = r["arith_patched"]["audit"]
        assert patched["exact"]["ci95"][0] > 0 and round(patched["exploit_rate"], 2) == 0.0, seed
        assert r["arith_sloppy"]["audit"]["exploit_rate"] > 0.1, seed
        assert r["sweep_K8"]["rates"]["strict"]["ci95"][0] > 0, seed
    for seed, r in [*RECORD["runs"].items(), *REPLICATION["runs"].items()]:
        sloppy = r["arith_sloppy"]
        assert sloppy["rates"]["sloppy"]["ci95"][0] > 0, f"seed {seed}: the sloppy reward rose"
        assert sloppy["audit"]["exact"]["after"] < r["arith_patched"]["audit"]["exact"]["after"], (
            seed
        )
    k8 = [r["sweep_K8"]["rates"]["strict"] for r in [*RECORD["runs"].values(),
                                                      *REPLICATION["runs"].values()]]  # fmt: skip
    assert (sum(x["diff"] > 0 for x in k8), sum(x["diff"] < 0 for x in k8)) == (6, 0)
    assert sum(x["diff"] > 0 and x["ci95"][0] <= 0 for x in k8) == 1
    # "the K = 16 run has one interval wholly above 0 and one wholly below" (seeds 3 and 4)
    k16 = {
        seed: r["sweep_K16"]["rates"]["strict"]["ci95"] for seed, r in REPLICATION["runs"].items()
    }
    assert k16["3"][0] > 0 > k16["4"][1]
    assert sum(lo > 0 for lo, _ in k16.values()) == 1 and sum(hi < 0 for _, hi in k16.values()) == 1
    # a 250-step run's main and patched gains keep their sign on all six seeds
    for seed, r in [*RECORD["runs"].items(), *REPLICATION["runs"].items()]:
        assert r["arith_main"]["rates"]["strict"]["diff"] > 0, seed
        assert r["arith_patched"]["audit"]["exact"]["diff"] > 0, seed
    # "stutters on seed 3 and runs of digits that contain the sum on seeds 4 and 5": the kind of
    # more than half of each seed's exploiting completions
    top = {seed: max(k := r["arith_sloppy"]["audit"]["exploit_kinds"], key=k.get)
           for seed, r in REPLICATION["runs"].items()}  # fmt: skip
    assert top == {"3": "stutter", "4": "digit_run", "5": "digit_run"}, top
    for seed, r in REPLICATION["runs"].items():
        kinds = r["arith_sloppy"]["audit"]["exploit_kinds"]
        assert 2 * kinds[top[seed]] > sum(kinds.values()), seed
    # "the third rule reads seed 3 otherwise": a measured rise where the patched rule measured none
    three = REPLICATION["runs"]["3"]["arith_sloppy"]["audit"]
    assert three["judge"]["ci95"][0] > 0 and not three["exact"]["excludes_zero"]
    # "seeds 3 and 4 collapsed during training and partly recovered before the end"
    for seed in ("3", "4"):
        curve = REPLICATION["runs"][seed]["arith_sloppy"]["audit"]["curve"]["exact"]
        assert min(curve) < 0.15 and curve[-1] > min(curve) + 0.25, seed
    assert min(REPLICATION["runs"]["5"]["arith_sloppy"]["audit"]["curve"]["exact"]) > 0.5
    # "Seed 5 shows the two at once: its patched-rule rate rose by 0.22 while 0.12 of its
    # generations exploited the rule"
    five = REPLICATION["runs"]["5"]["arith_sloppy"]["audit"]
    assert five["exact"]["ci95"][0] > 0 and five["exploit_rate"] > 0.1
    text = (ROOT / "course" / "lessons" / "9.5" / "lesson.py").read_text()
    flat = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    assert (f"rose by {five['exact']['diff']:.2f} while {five['exploit_rate']:.2f} of its "
            "generations exploited") in flat  # fmt: skip


def _fake_runs(root: Path) -> dict:
    """A runs/ folder as the lesson's cells write it, with small made-up outcomes."""
    import random

    rng = random.Random(5)
    # the first 6 prompts are held out in both orders (both operands multiples of 7)
    prompts = [f"Q: {a}+{b}=? Options: 1 or 2. A:" for a, b in [(14, 21), (21, 14), (28, 35),
               (35, 42), (49, 56), (63, 70), (11, 13), (13, 11), (12, 20), (20, 12), (30, 17),
               (16, 44)]]  # fmt: skip
    outcome = {}
    for name in mlr.RUNS + mlr.SWEEP:
        d = root / name
        d.mkdir(parents=True)
        v = "format" if name == "format_smoke" else "strict"
        before = [rng.randint(0, 1) for _ in prompts]
        after = [rng.randint(0, 1) for _ in prompts]
        outcome[name] = (before, after)
        (d / "heldout.json").write_text(json.dumps(
            {"prompts": prompts, "before": {v: before}, "after": {v: after}}))  # fmt: skip
        (d / "passport.json").write_text(json.dumps({"extra": {"steps_run": 3, "data": {
            "prompts": {"heldout_hash": f"hash-{name}"}, "initial_pass_rate": None}}}))  # fmt: skip
        (d / "history.json").write_text(
            json.dumps({"history": {"groups": [2, 2], "skipped": [0, 1]}})
        )
    sweep = {str(k): {"degenerate_frac": 0.25, "after_strict": outcome[f"sweep_K{k}"][1],
                      "prompts": prompts, "vs_K2": {"diff": 0.0}} for k in (2, 8, 16)}  # fmt: skip
    (root / "sweep.json").write_text(json.dumps(sweep))
    exact = vars(paired_difference([0, 1, 0], [1, 1, 0]))
    audit = {n: {"reward_verifier": "v", "exact": exact, "sloppy_after": 0.5, "exploit_rate": 0.25,
                 "exploit_examples": []} for n in mlr.AUDITED}  # fmt: skip
    audit["arith_sloppy"]["exploit_kinds"] = {"stutter": 1, "hedge": 2, "digit_run": 0, "other": 0}
    audit["arith_sloppy"]["curve"] = {"step": [0, 3], "exact": [0.5, 0.25], "strict": [0.5, 0.5]}
    audit["arith_sloppy"]["judge"] = vars(paired_difference([1, 1, 0], [0, 1, 0]))
    audit["arith_sloppy"]["judge_exploit_rate"] = 0.125
    (root / "audit.json").write_text(json.dumps(audit))
    return outcome


def test_summarise_records_the_both_orders_split_the_k_contrasts_and_the_kinds(tmp_path):
    outcome = _fake_runs(tmp_path)
    out = mlr.summarise(tmp_path)
    for name in mlr.RUNS + mlr.SWEEP:
        assert out[name]["heldout_hash"] == f"hash-{name}"
    before, after = outcome["arith_main"]
    split = out["arith_main"]["both_orders"]
    assert split["both_heldout"] == mlr._rate(paired_difference(before[:6], after[:6]))
    assert split["swapped_in_train"] == mlr._rate(paired_difference(before[6:], after[6:]))
    assert "both_orders" not in out["format_smoke"]  # not an arithmetic run
    for k1, k2 in mlr.K_CONTRASTS:  # K = k2 minus K = k1, paired on the same prompts
        got = out[f"sweep_K{k2}"]["k_contrasts"][f"vs_K{k1}"]
        want = paired_difference(outcome[f"sweep_K{k1}"][1], outcome[f"sweep_K{k2}"][1])
        assert got == mlr._rate(want)
    assert out["sweep_K8"]["sweep"] == {"degenerate_frac": 0.25}  # per-prompt lists left out
    assert out["arith_sloppy"]["audit"]["exploit_kinds"]["hedge"] == 2
    assert out["arith_sloppy"]["audit"]["curve"]["exact"] == [0.5, 0.25]
    assert "exploit_kinds" not in out["arith_main"]["audit"]  # older notebooks: no kinds
    assert "curve" not in out["arith_main"]["audit"]
    judge = out["arith_sloppy"]["audit"]["judge"]  # the third rule, as the notebook saved it
    assert judge == mlr._rate(paired_difference([1, 1, 0], [0, 1, 0])) and judge["lost"] == 1
    assert out["arith_sloppy"]["audit"]["judge_exploit_rate"] == 0.125
    assert "judge" not in out["arith_main"]["audit"]  # older notebooks: no third rule


def test_registry_row_quotes_the_cross_seed_summaries_and_the_replication():
    row = registry_row("9.5-11")
    rep = json.loads(mlr.REPLICATION.read_text())
    missing = [p for p in mlr.registry_summary(RECORD, rep) if p not in row]
    assert not missing, f"registry 9.5-11 does not quote: {missing}"
    # "the exploit found on every seed; ... though the patched-rule curves over training show
    # seeds 3 and 4 collapsing during training and partly recovering" (the curves: the test above)
    assert "the exploit found on every seed;" in row and "seeds 3 and 4 collapsing during" in row
    assert all(x["arith_sloppy"]["audit"]["exploit_rate"] > 0 for x in rep["runs"].values())
    assert "so these three seeds are not a fresh replication (the replication's are)" in row
