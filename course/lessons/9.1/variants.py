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


# %% bug p_info: log1p/expm1 on p itself, no symmetry (near p = 1, p**G = (1-q)**G rounds: 5e-9 off)
# Formerly listed as valid: it is exact only when q = 1 - p is a power of two (the old test used
# q = 2**-40). For q ~ 1e-9 / G the rounding of (1 - q)**G costs up to 5e-9 relative error, far
# from the docstring's 'about 1e-12'; the differential test draws such q.
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
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
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


# %% bug p_info: no G == 1 branch (1 - (1 - s) - s leaves residues such as 5.6e-17 for some p)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    return float(out) if out.ndim == 0 else out


# %% bug p_info: G == 1 writes the zeros into the caller's float64 array (np.asarray does not copy)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    if G == 1:
        arr[...] = 0.0
        return float(arr) if arr.ndim == 0 else arr
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    return float(out) if out.ndim == 0 else out


# %% bug p_info: keeps the input's float dtype (float32 p computed and returned in float32)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p)
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    if G == 1:
        out = np.zeros_like(arr)
    return float(out) if out.ndim == 0 else out


# %% bug p_info: accepts a bool G (True counts as G = 1, False raises)
def p_info(p, G):
    if not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    s = np.minimum(arr, 1.0 - arr)
    with np.errstate(divide="ignore"):
        out = np.clip(-np.expm1(G * np.log1p(-s)) - s**G, 0.0, 1.0) + 0.0
    if G == 1:
        out = np.zeros_like(arr)
    return float(out) if out.ndim == 0 else out


# %% valid p_info: the binomial sum of the mixed outcomes (positive terms, another rounding order)
def p_info(p, G):
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError("G must be an integer >= 1")
    G = int(G)
    arr = np.array(p, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    out = np.zeros_like(arr)
    for k in range(1, G):  # P(k successes) for 0 < k < G: no cancellation, ~G ulps of error
        out = out + math.comb(G, k) * arr**k * (1.0 - arr) ** (G - k)
    out = np.clip(out, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


# %% bug expected_draws: flattens a 2-D pool instead of raising (the docstring asks for shape (J,))
def expected_draws(success_rates, B, G):
    rates = np.ravel(np.asarray(success_rates, dtype=np.float64))
    if rates.size == 0 or not B > 0:
        raise ValueError("bad input")
    mean_info = float(np.mean(p_info(rates, G)))
    return math.inf if mean_info == 0.0 else float(B) / mean_info


# %% valid expected_draws: B * J / sum of P_info over the sorted pool (another rounding order)
def expected_draws(success_rates, B, G):
    rates = np.asarray(success_rates, dtype=np.float64)
    if rates.ndim != 1 or len(rates) == 0:
        raise ValueError("need a non-empty 1-D pool")
    if B <= 0 or B != B:
        raise ValueError("B must be positive")
    total = float(np.sort(p_info(rates, G)).sum())
    return math.inf if total == 0.0 else float(B) * len(rates) / total


# %% bug verify_strict: rule 6 with str.strip (a tail such as "$ ." strips to " " and is refused)
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
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if response[last_close + 1 :].strip().strip(".$"):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: rule 6 allows " \n\t.$" only (str.isspace also allows a no-break space)
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
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if any(ch not in " \n\t.$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return float(r.reward), str(r.category)


# %% bug verify_strict: rule 7 reports only "correct" or "wrong" (invalid_reference is never read)
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
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(
        response, reference, rel_tol=rel_tol, abs_tol=abs_tol, max_chars=max_chars
    )
    return (1.0, "correct") if r.reward == 1.0 else (0.0, "wrong")


# %% bug verify_strict: max_chars used for rule 2 only, not passed on to verify_numeric_answer
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
    if any(v != values[0] for v in values):
        return 0.0, "multiple_answers"
    if not all(ch.isspace() or ch in ".$" for ch in response[last_close + 1 :]):
        return 0.0, "trailing_text"
    r = verify_numeric_answer(response, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    return float(r.reward), str(r.category)


# Mutants of the references that no test can kill (tests/grading/mutation.py); each argument says
# why no input the docstring allows tells the mutant from the reference.

# %% equivalent p_info: e7b9bcef50 np.clip(..., 0.0, 1.0) -> np.clip(..., -1.0, 1.0)
# The lower clip is never active. For G >= 2 and s = min(p, 1 - p) in (0, 0.5],
# 1 - (1-s)**G = s * sum_{k<G} (1-s)**k >= G s (1-s)**(G-1) >= G s**G, so the true value
# 1 - (1-s)**G - s**G is at least (1 - 1/G) >= 1/2 of one_minus_big, and the computed
# one_minus_big - s**G, a few ulps off, stays positive; at s = 0 it is 0.0 - 0.0 = +0.0 (log1p(-0.0) = -0.0, -expm1(-0.0) = +0.0).
# G == 1 is replaced by zeros afterwards. A sweep of 20,000 random (p, G <= 300) gave a minimum of
# 3.9e-120 > 0.

# %% equivalent p_info: bb9d056000 np.clip(..., 0.0, 1.0) -> np.clip(..., 0.0, 2.0)
# The upper clip is never active: expm1(x) lies in [-1, 0] for x <= 0, so one_minus_big lies in
# [0, 1], and subtracting s**G >= 0 cannot exceed 1. NaN cannot reach this line (p is validated).

# %% equivalent p_info: 6c04d1dff5 np.clip(...) + 0.0 -> np.clip(...) - 0.0
# No -0.0 ever reaches this line (at s = 0: -expm1(G * log1p(-0.0)) = -(-0.0) = +0.0, and
# +0.0 - 0.0**G = +0.0), so x - 0.0 and x + 0.0 are the same float for every value produced here;
# even a -0.0 would equal 0.0 in every comparison the docstring's "exactly 0.0" asks for.

# %% equivalent p_info: feff011fc0 (arr >= 0.0) & (arr <= 1.0) -> (arr >= 0.0) // (arr <= 1.0)
# On bool arrays floor division is truthy exactly when both are True (True // True = 1;
# False // True = 0; x // False = 0, with a RuntimeWarning, which is stderr and never graded), so
# np.all(...) is the same and the same p raise (below 0, above 1, NaN).

# %% equivalent p_info: 0699c07d53 (arr >= 0.0) & (arr <= 1.0) -> (arr >= 0.0) * (arr <= 1.0)
# Multiplying NumPy bool arrays is the logical AND: the same mask, the same np.all.

# %% equivalent p_info: a246a320a0 if G == 1: -> if G <= 1:
# G < 1 has already raised ValueError two lines above, so G <= 1 holds exactly when G == 1.

# %% equivalent p_info: 2715167fcd out.ndim == 0 -> out.ndim <= 0
# ndim is never negative.

# %% equivalent expected_draws: bc02da190e rates.size == 0 -> rates.size <= 0
# size is never negative.

# %% equivalent expected_draws: 751a364ec7 mean_info == 0.0 -> mean_info <= 0.0
# mean_info is a mean of p_info values, which lie in [0, 1] (p_info's contract; p and G are
# validated by p_info, so no NaN), hence never below 0.

# %% equivalent verify_strict: b58c758aba v != values[0] -> v != values[-1]
# "every value equals the first" and "every value equals the last" are the same statement (both say
# all values are equal); the list is non-empty here.

# %% equivalent verify_strict: a32b602864 if depth == 0: -> if depth <= 0:
# The scan starts on the box's own "{" (depth 1 after it) and moves depth by at most 1 per
# character, breaking the first time it is 0, so the test runs only on depth >= 0: <= 0 and == 0
# fire on the same character.
