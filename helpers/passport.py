"""Run passports: what a run was, written down before it starts, so another run can be compared.

Lesson 9.5, sections 9.5.1-9.5.2: a reproducible run records its data and verifier contract and its
rollout/update settings; "the defaults of the library version I remember" is not a record. Here a
passport is one JSON object:

    config        the run's config dataclass (or dict) serialised      -> ``config_hash``
    verifier      the verifier's own passport (name, version, rules, config, config_hash)
    versions      python and the library versions that decide numerics and defaults
    machine       the CPU, the OS kernel and torch's CPU kernel path (the last bits of a float run
                  depend on them: a record from another machine is compared by tolerance)
    git           the commit of this repository and whether the tree was dirty
    hashes        sha256 of given files and tensors (an artifact, a LoRA state, a task list)
    extra         anything the caller adds (the train_step's name, the task split rule, ...)

Departures from the lesson: the rollout passport (per-rollout tokens, old log-probs, rewards) is not
stored here; a run keeps its rollouts in memory and ``diagnostics.Dashboard`` keeps the per-step
numbers. A hash is the first 16 hex digits of sha256: enough to tell runs apart, short enough to read.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import os
import platform
import subprocess
import tempfile
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

PASSPORT_VERSION = 1
LIBRARIES = ("torch", "transformers", "peft", "trl", "numpy", "datasets", "accelerate", "nbgrader")
_REPO = Path(__file__).resolve().parent.parent


def library_versions() -> dict[str, str | None]:
    """Python and the installed versions of the libraries that matter; None = not installed.

    Read from package metadata, so nothing heavy (trl, torch) is imported to ask.
    """
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``; elsewhere what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict[str, Any]:
    """The machine a run's floats came from: CPU model, architecture, OS kernel, cores, and the
    CPU kernel path torch dispatches to (``ATEN_CPU_CAPABILITY`` changes it on one machine)."""
    cpu = cpu_model()
    try:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    except ImportError:
        capability = None
    return {
        "cpu": cpu,
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        "cores": os.cpu_count(),
        "torch_cpu_capability": capability,
        "aten_cpu_capability_env": os.environ.get("ATEN_CPU_CAPABILITY"),
    }


def to_jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON types: dataclasses and dicts -> dicts, tuples/sets -> lists,
    callables -> ``"module.qualname"``, numpy/torch scalars -> numbers, paths -> strings.

    Raises TypeError for anything else, so a passport never silently drops a field.
    """
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)  # 'nan', 'inf': canonical and valid JSON
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, set | frozenset):
        return sorted((to_jsonable(v) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, enum.Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy arrays/scalars, torch tensors
        return to_jsonable(obj.tolist())
    if callable(obj):
        module = getattr(obj, "__module__", None) or "?"
        name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
        return f"{module}.{name}"
    raise TypeError(f"cannot put a {type(obj).__name__} into a passport: {obj!r}")


def canonical_json(obj: Any) -> str:
    """The one JSON text of ``obj``: sorted keys, no spaces. Equal configs give equal text."""
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def config_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``, first 16 hex digits."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:16]


def tensor_hash(t: Any) -> str:
    """sha256 of a tensor's (or array's) dtype, shape and bytes, first 16 hex digits."""
    import numpy as np

    if hasattr(t, "detach"):  # torch: bytes of a contiguous CPU copy; bf16 viewed as int16
        t = t.detach().cpu().contiguous()
        dtype, shape = str(t.dtype), tuple(t.shape)
        raw = t.view(-1).view(_int_view(t)).numpy().tobytes() if t.numel() else b""
    else:
        a = np.ascontiguousarray(t)
        dtype, shape, raw = str(a.dtype), a.shape, a.tobytes()
    h = hashlib.sha256(f"{dtype}{shape}".encode())
    h.update(raw)
    return h.hexdigest()[:16]


def _int_view(t):
    import torch

    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]


def file_hash(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes, first 16 hex digits."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def git_state(repo: str | os.PathLike = _REPO) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` of the repository holding ``helpers``."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, timeout=5, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def verifier_passport(verifier: Any) -> dict | None:
    """The verifier's ``.passport`` dict; a dict is taken as the passport itself; a plain function
    without one gets ``{"name": ..., "passport": None}`` so the gap is visible, not hidden."""
    if verifier is None:
        return None
    if isinstance(verifier, dict):
        return to_jsonable(verifier)
    passport = getattr(verifier, "passport", None)
    if passport is None:
        return {
            "name": to_jsonable(verifier) if callable(verifier) else repr(verifier),
            "passport": None,
        }
    return to_jsonable(passport)


def make_passport(
    config: Any,
    *,
    verifier: Any = None,
    extra: dict | None = None,
    tensors: dict[str, Any] | None = None,
    files: list[str | os.PathLike] | None = None,
) -> dict:
    """The passport of a run (see the module docstring for the fields).

    config:   a dataclass instance or a dict (serialised with ``to_jsonable``).
    verifier: a verifier with a ``.passport`` dict, or a passport dict, or None.
    extra:    extra fields (JSON-able) stored under "extra".
    tensors:  name -> tensor/array; stored as name -> ``tensor_hash``.
    files:    paths; stored as path -> ``file_hash``.
    """
    cfg = to_jsonable(config)
    return {
        "passport_version": PASSPORT_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": cfg,
        "config_hash": config_hash(cfg),
        "verifier": verifier_passport(verifier),
        "versions": library_versions(),
        "machine": machine(),
        "git": git_state(),
        "hashes": {
            "tensors": {k: tensor_hash(v) for k, v in (tensors or {}).items()},
            "files": {str(p): file_hash(p) for p in (files or [])},
        },
        "extra": to_jsonable(extra or {}),
    }


def save_passport(passport: dict, path: str | os.PathLike) -> Path:
    """Write ``passport`` as indented JSON; atomic (a temp file renamed over ``path``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_jsonable(passport), indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_passport(path: str | os.PathLike) -> dict:
    """Read a passport written by ``save_passport``."""
    with open(path) as f:
        return json.load(f)


def diff_passports(a: dict, b: dict, ignore: tuple[str, ...] = ("created",)) -> dict[str, tuple]:
    """Fields that differ between two passports: ``{"config.kl_coef": (0.05, 0.0), ...}``.

    Nested dicts are compared key by key (dotted names); ``ignore`` lists top-level fields to skip.
    Use it to check that two runs differ in exactly the variable the experiment changes.
    """
    out: dict[str, tuple] = {}

    def walk(x: Any, y: Any, name: str) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k), y.get(k), f"{name}.{k}" if name else k)
        elif to_jsonable(x) != to_jsonable(y):
            out[name] = (x, y)

    walk(
        {k: v for k, v in a.items() if k not in ignore},
        {k: v for k, v in b.items() if k not in ignore},
        "",
    )
    return out
