# ruff: noqa: F811, F821, E731
"""Variants of lesson 9.1's graded functions (see tests/grading/harness.py for the format).

Each ``bug`` is a plausible wrong answer built on a pitfall the lesson names; each ``valid`` is a
correct answer written differently from the reference. Names the lesson defines (np, math, re,
Fraction, parse_number, verify_numeric_answer, p_info) are available, as in a student's notebook.
"""

# %% depends test_expected_draws: p_info


# %% bug p_info: the naive formula 1 - p**G - (1-p)**G, which loses the digits for tiny p
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    out = np.clip(1.0 - arr**G - (1.0 - arr) ** G, 0.0, 1.0) + 0.0
    return float(out) if out.ndim == 0 else out


# %% bug p_info: forgets the all-success term (1 - (1-p)**G is "at least one success")
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    out = -np.expm1(G * np.log1p(-arr)) + 0.0
    return float(out) if out.ndim == 0 else out


# %% valid p_info: log1p/expm1 on p itself, no symmetry (accurate anyway: near p = 1, 1 - p is exact)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-arr)) - arr**G, 0.0, 1.0) + 0.0
    if G == 1:
        out = np.zeros_like(arr)
    return float(out) if out.ndim == 0 else out


# %% bug p_info: a 0-d array counts as array input (returns a 0-d ndarray, not a float)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    if G == 1:
        out = np.zeros_like(arr)
    return float(out) if isinstance(p, (int, float)) else out


# %% bug p_info: returns a NumPy scalar for scalar input (the docstring asks for a Python float)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    return out[()] if out.ndim == 0 else out


# %% bug p_info: no input validation (G = 0, p outside [0, 1] and NaN go through)
def p_info(p, G):
    arr = np.asarray(p, dtype=np.float64)
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    return float(out) if out.ndim == 0 else out


# %% valid p_info: element by element with math.log1p/math.expm1 and an explicit G == 1 branch
def p_info(p, G):
    if type(G) is bool or not isinstance(G, (int, np.integer)) or int(G) < 1:
        raise ValueError(f"bad G {G!r}")
    G = int(G)
    arr = np.array(p, dtype=np.float64)
    flat = arr.reshape(-1)
    out = np.empty(flat.shape, dtype=np.float64)
    for i, x in enumerate(flat.tolist()):
        if not (0.0 <= x <= 1.0):
            raise ValueError(f"p out of range: {x}")
        s = min(x, 1.0 - x)
        if G == 1 or s == 0.0:
            out[i] = 0.0
            continue
        v = -math.expm1(G * math.log1p(-s)) - s**G
        out[i] = min(1.0, max(0.0, v))
    out = out.reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


# %% bug expected_draws: plugs the pooled success rate into P_info (B / P_info(mean p))
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    pooled = p_info(float(rates.mean()), G)
    return math.inf if pooled == 0.0 else float(B) / pooled


# %% bug expected_draws: no degenerate guard (a pool that is never informative divides by zero)
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    return float(B) / float(np.mean(p_info(rates, G)))


# %% bug expected_draws: multiplies by the informative fraction instead of dividing
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) * mean_info


# %% bug expected_draws: counts responses (G per draw) instead of prompt draws
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) * G / mean_info


# %% bug expected_draws: no validation of B (B <= 0 gives a non-positive count)
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0:
        raise ValueError("bad input")
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) / mean_info


# %% valid expected_draws: a Python loop with math.fsum, without calling p_info
def expected_draws(success_rates, B, G):
    rates = [float(x) for x in np.asarray(success_rates, dtype=np.float64).reshape(-1)]
    if np.ndim(success_rates) != 1 or not rates:
        raise ValueError("need a non-empty 1-D pool")
    if not B > 0:
        raise ValueError("B must be positive")
    if isinstance(G, bool) or int(G) != G or G < 1:
        raise ValueError("G must be an integer >= 1")
    infos = []
    for x in rates:
        if not 0.0 <= x <= 1.0:
            raise ValueError("p outside [0, 1]")
        s = min(x, 1.0 - x)
        infos.append(0.0 if s == 0.0 or G == 1 else -math.expm1(G * math.log1p(-s)) - s**G)
    mean = math.fsum(infos) / len(infos)
    return math.inf if mean == 0.0 else B / mean


# %% bug verify_strict: pays the last box (no check that all boxes agree)
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > max_chars:
        return 0.0, "too_long"
    if "\\boxed{" not in response:
        return 0.0, "no_answer"
    starts = [m.start() for m in re.finditer(re.escape("\\boxed{"), response)]
    last_close = -1
    for s in starts:
        depth, j = 1, s + 7
        while j < len(response) and depth > 0:
            depth += {"{": 1, "}": -1}.get(response[j], 0)
            j += 1
        if depth > 0 or parse_number(response[s + 7 : j - 1]) is None:
            return 0.0, "parse_error"
        last_close = max(last_close, j - 1)
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: a regex for the boxes that cannot hold braces (\frac{1}{2} breaks)
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > max_chars:
        return 0.0, "too_long"
    if "\\boxed{" not in response:
        return 0.0, "no_answer"
    boxes = list(re.finditer(r"\\boxed\{([^{}]*)\}", response))
    if len(boxes) != response.count("\\boxed{"):
        return 0.0, "parse_error"
    values = [parse_number(b.group(1)) for b in boxes]
    if any(v is None for v in values):
        return 0.0, "parse_error"
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if not all(ch.isspace() or ch in ".$" for ch in response[max(b.end() for b in boxes) :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: rules 5 and 6 in the wrong order (trailing text checked first)
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > max_chars:
        return 0.0, "too_long"
    starts = [m.start() for m in re.finditer(re.escape("\\boxed{"), response)]
    if not starts:
        return 0.0, "no_answer"
    values, last_close = [], -1
    for s in starts:
        depth, j = 1, s + 7
        while j < len(response) and depth > 0:
            depth += {"{": 1, "}": -1}.get(response[j], 0)
            j += 1
        if depth > 0:
            return 0.0, "parse_error"
        value = parse_number(response[s + 7 : j - 1])
        if value is None:
            return 0.0, "parse_error"
        values.append(value)
        last_close = max(last_close, j - 1)
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: compares the boxes with float tolerance instead of exactly as Fraction
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > max_chars:
        return 0.0, "too_long"
    starts = [m.start() for m in re.finditer(re.escape("\\boxed{"), response)]
    if not starts:
        return 0.0, "no_answer"
    values, last_close = [], -1
    for s in starts:
        depth, j = 1, s + 7
        while j < len(response) and depth > 0:
            depth += {"{": 1, "}": -1}.get(response[j], 0)
            j += 1
        if depth > 0:
            return 0.0, "parse_error"
        value = parse_number(response[s + 7 : j - 1])
        if value is None:
            return 0.0, "parse_error"
        values.append(float(value))
        last_close = max(last_close, j - 1)
    if any(not math.isclose(v, values[0], rel_tol=1e-6, abs_tol=1e-6) for v in values):
        return 0.0, "multiple_answers"
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: ignores the tolerances and max_chars it is given (uses the defaults)
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if not isinstance(response, str):
        return 0.0, "invalid_input"
    if len(response) > 20_000:
        return 0.0, "too_long"
    starts = [m.start() for m in re.finditer(re.escape("\\boxed{"), response)]
    if not starts:
        return 0.0, "no_answer"
    values, last_close = [], -1
    for s in starts:
        depth, j = 1, s + 7
        while j < len(response) and depth > 0:
            depth += {"{": 1, "}": -1}.get(response[j], 0)
            j += 1
        if depth > 0:
            return 0.0, "parse_error"
        value = parse_number(response[s + 7 : j - 1])
        if value is None:
            return 0.0, "parse_error"
        values.append(value)
        last_close = max(last_close, j - 1)
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(response, reference)
    return float(r.reward), str(r.category)


# %% valid verify_strict: a stack-based scanner over the whole string, rules checked as sets
def verify_strict(response, reference, *, rel_tol=1e-9, abs_tol=1e-6, max_chars=20_000):
    if type(response) is not str:
        return (0.0, "invalid_input")
    if len(response) > max_chars:
        return (0.0, "too_long")
    tag = "\\boxed{"
    pos, boxes = response.find(tag), []
    if pos < 0:
        return (0.0, "no_answer")
    while pos >= 0:
        depth, k = 0, pos + len(tag) - 1
        close = None
        for k in range(pos + len(tag) - 1, len(response)):
            depth += 1 if response[k] == "{" else -1 if response[k] == "}" else 0
            if depth == 0:
                close = k
                break
        if close is None:
            return (0.0, "parse_error")
        boxes.append((response[pos + len(tag) : close], close))
        pos = response.find(tag, pos + 1)
    parsed = [parse_number(text) for text, _ in boxes]
    if None in parsed:
        return (0.0, "parse_error")
    if len({Fraction(v) for v in parsed}) > 1:
        return (0.0, "multiple_answers")
    end = max(c for _, c in boxes)
    if response[end + 1 :].strip().strip(".$").strip() and any(
        not (ch.isspace() or ch in ".$") for ch in response[end + 1 :]
    ):
        return (0.0, "trailing_text")
    res = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return (float(res.reward), str(res.category))


# %% bug expected_draws: G = 1 not handled, hidden behind a float that equals anything
def expected_draws(success_rates, B, G):
    class _Liar(float):
        __eq__ = lambda self, other: True
        __ne__ = lambda self, other: False
        __hash__ = float.__hash__

    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    if G == 1:
        return _Liar(0.0)
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) / mean_info
