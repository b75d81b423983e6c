"""The corpus (tests/corpus/): naive kernels written the way other people write them —
textbooks, PolyBench, the paper's macros, llm.c, the OpenCL SDK, image filters — each held to
the expectations its own header states.

A corpus file says in lit-style comment lines at its top what an expert expects of naiveopt:

    // EXPECT-PASSES: thread-block-merge, thread-merge     passes that must fire (all kernels)
    // EXPECT-PASSES(atax_kernel2): coalesce|vectorize     for one kernel; a|b: either fires
    // EXPECT-PASSES: none                                  no optimization pass fires
    // EXPECT: verified                                     every kernel verified on PoCL
    // OPTIONS: --cost-model=unlimited                      run with these options

and, where naiveopt falls short today, which expectation fails and the reason naiveopt gives:

    // XFAIL: rejected: <the error message>                 the file is not accepted at all
    // XFAIL: verified: <the verification detail>           a kernel is not verified
    // XFAIL: thread-merge: <the pass's missed remark>      an expected pass does not fire
    // XFAIL(kernel): ...                                   the same, for one kernel

Each file is optimized once per output dialect (CUDA files also to OpenCL). The test fails
when an expectation without an XFAIL fails, when an XFAIL'd expectation fails for a reason
other than the one written (the XFAIL text must appear in what naiveopt says), and when an
XFAIL'd expectation now holds ("unexpectedly passes: remove the XFAIL line"), so that fixes
show up; a file whose only failures are its XFAILs is reported as xfailed.

``python tests/test_corpus.py`` prints the README's table of XFAILs from the headers alone
(the tests keep the headers true).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field

import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.passes.pipeline import optimization_pass_names

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
FILES = sorted(f for f in os.listdir(CORPUS) if f.endswith((".cu", ".cl")))

#: The optimization passes an EXPECT-PASSES term may name.
PASSES = tuple(optimization_pass_names())

_LINE = re.compile(r"^// (EXPECT-PASSES|EXPECT|XFAIL|OPTIONS)(?:\((\w+)\))?: (.*)$")
#: The command-line options an OPTIONS line may give, and the API option each sets.
_OPTIONS = {"--cost-model=unlimited": ("cost_model", "unlimited")}


@dataclass
class Expectations:
    """What a corpus file's header promises: pass terms per kernel scope (None: every kernel
    without a scope of its own), whether verification is expected, and the XFAIL lines as
    (kernel scope, expectation, reason)."""

    passes: dict[str | None, list[str]] = field(default_factory=dict)
    verified: bool = False
    options: dict[str, str] = field(default_factory=dict)   # the OPTIONS line's, for the API
    xfails: list[tuple[str | None, str, str]] = field(default_factory=list)


def parse_header(text: str) -> Expectations:
    """The EXPECT/XFAIL lines of a corpus file; raises ValueError for a malformed one."""
    exp = Expectations()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            if re.match(r"^//\s*(EXPECT|XFAIL)", line):
                raise ValueError(f"malformed expectation line: {line!r}")
            continue
        key, scope, value = m.group(1), m.group(2), m.group(3).strip()
        if key == "EXPECT-PASSES":
            terms = [t.strip() for t in value.split(",")]
            for term in terms:
                names = term.split("|")
                if term != "none" and not all(n in PASSES for n in names):
                    raise ValueError(f"unknown pass in {line!r}")
            if "none" in terms and len(terms) > 1:
                raise ValueError(f"'none' with other passes in {line!r}")
            if scope in exp.passes:
                raise ValueError(f"second EXPECT-PASSES line for {scope or 'all kernels'}")
            exp.passes[scope] = terms
        elif key == "OPTIONS":
            for word in value.split():
                if word not in _OPTIONS or scope:
                    raise ValueError(f"unknown option in {line!r} (known: "
                                     f"{', '.join(_OPTIONS)})")
                exp.options.__setitem__(*_OPTIONS[word])
        elif key == "EXPECT":
            if value != "verified" or scope:
                raise ValueError(f"unknown expectation {line!r} (EXPECT: verified)")
            exp.verified = True
        else:
            what, sep, reason = value.partition(": ")
            if not sep or not reason.strip():
                raise ValueError(f"XFAIL without 'EXPECTATION: reason': {line!r}")
            exp.xfails.append((scope, what, reason.strip()))
    stated = {"rejected"} | ({"verified", "unannotated"} if exp.verified else set())
    for terms in exp.passes.values():
        stated.update(terms)
    for scope, what, _ in exp.xfails:
        if what not in stated:
            raise ValueError(f"XFAIL for '{what}', which the file does not expect")
        if what == "rejected" and scope is not None:
            raise ValueError("XFAIL(kernel): rejected: a file is rejected as a whole")
    return exp


@dataclass
class KernelOutcome:
    """What naiveopt did to one kernel: passes that fired, verification, missed remarks per
    pass."""

    name: str
    passes: list[str]
    verified: bool
    verification: str                     # the detail: why not verified, or what matched
    missed: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Outcome:
    """A file's run: the error when rejected, else one KernelOutcome per kernel."""

    error: str | None = None
    kernels: list[KernelOutcome] = field(default_factory=list)


def outcome_of(result) -> Outcome:
    """An Outcome from a naiveopt.OptimizeResult."""
    kernels = []
    for k in result.kernels:
        missed: dict[str, list[str]] = {}
        for r in result.remarks:
            if r.kind == "missed" and r.kernel in (k.name, "*"):
                missed.setdefault(r.pass_name, []).append(r.message)
        kernels.append(KernelOutcome(k.name, list(k.passes), k.verified,
                                     " ".join((k.verification.detail or
                                               k.verification.status).split()), missed))
    kernels += [KernelOutcome(name, [], False, why, {}) for name, why in unread(result)]
    return Outcome(None, kernels)


def unread(result) -> list[tuple[str, str]]:
    """(name, why) of each kernel naiveopt did not read and wrote as it is: neither optimized
    nor verified (frontend/verbatim.py)."""
    out = []
    for why, _, _ in result.left_as_written:
        name = re.match(r"kernel '(\w+)'", why)
        if name:
            out.append((name.group(1), " ".join(why.split())))
    return out


def judge(exp: Expectations, out: Outcome) -> tuple[list[str], list[str]]:
    """(problems, expected failures): a problem fails the test; expected failures are the
    XFAIL'd expectations that failed for the reason written."""
    problems: list[str] = []
    xfailed: list[str] = []
    used: set[int] = set()

    def xfail_for(kernel: str | None, what: str) -> tuple[int, str] | None:
        for i, (scope, w, reason) in enumerate(exp.xfails):
            if w == what and scope in (None, kernel):
                return i, reason
        return None

    def check(kernel: str | None, what: str, holds: bool, said: list[str]) -> None:
        label = f"{kernel}: {what}" if kernel else what
        found = xfail_for(kernel, what)
        if found is None:
            if not holds:
                problems.append(f"{label}: expectation fails: {' | '.join(said) or '(no reason given)'}")
            return
        index, reason = found
        used.add(index)
        if holds:
            problems.append(f"{label}: unexpectedly passes: remove the XFAIL line "
                            f"'{what}: {reason}'")
        elif any(reason in " ".join(s.split()) for s in said):
            xfailed.append(f"{label}: {reason}")
        else:
            problems.append(f"{label}: fails for another reason than the XFAIL line says "
                            f"('{reason}'): {' | '.join(said) or '(no reason given)'}")

    check(None, "rejected", out.error is None, [out.error or ""])
    if out.error is None:
        names = {k.name for k in out.kernels}
        for scope in exp.passes:
            if scope is not None and scope not in names:
                problems.append(f"EXPECT-PASSES({scope}): no kernel of that name")
        for k in out.kernels:
            terms = exp.passes.get(k.name, exp.passes.get(None))
            if terms is None:
                problems.append(f"{k.name}: no EXPECT-PASSES line covers this kernel")
                terms = []
            for term in terms:
                if term == "none":
                    check(k.name, term, not k.passes, [f"fired: {', '.join(k.passes)}"])
                else:
                    names_ = term.split("|")
                    said = [m for n in names_ for m in k.missed.get(n, [])]
                    check(k.name, term, any(n in k.passes for n in names_), said)
            if exp.verified:
                check(k.name, "verified", k.verified, [k.verification])
    for i, (scope, what, reason) in enumerate(exp.xfails):
        if i not in used and out.error is None and what != "unannotated":
            problems.append(f"XFAIL{f'({scope})' if scope else ''}: {what}: {reason}: "
                            "matches no expectation that was checked")
    return problems, xfailed


def _read(name: str) -> str:
    with open(os.path.join(CORPUS, name), encoding="utf-8") as fh:
        return fh.read()


def _cases() -> list:
    cases = []
    for name in FILES:
        targets = ("cuda", "opencl") if name.endswith(".cu") else ("opencl",)
        cases += [pytest.param(name, t, id=f"{name}-{t}") for t in targets]
    return cases


def test_corpus_is_large_mixed_and_well_formed():
    assert len(FILES) >= 50, len(FILES)
    assert sum(f.endswith(".cl") for f in FILES) >= 10
    for name in FILES:
        text = _read(name)
        exp = parse_header(text)
        assert exp.passes, f"{name}: no EXPECT-PASSES line"
        assert exp.verified, f"{name}: no 'EXPECT: verified' line"
        assert re.search(r"^#pragma naiveopt .*sizes\(", text, re.M), f"{name}: no sizes pragma"
        assert not os.path.exists(os.path.join(CORPUS, name.rsplit(".", 1)[0] + ".toml")), \
            f"{name}: corpus files carry their facts in pragmas, not metadata"


def test_readme_table_matches_the_headers():
    with open(os.path.join(CORPUS, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    assert xfail_table() in readme, "tests/corpus/README.md: paste `python tests/test_corpus.py`"


@pytest.mark.parametrize("name, target", _cases())
def test_corpus_file_meets_its_expectations(name, target):
    text = _read(name)
    exp = parse_header(text)
    try:
        result = naiveopt.optimize(text, filename=os.path.join(CORPUS, name), target=target,
                                   options=exp.options)
        out = outcome_of(result)
    except NaiveoptError as err:
        out = Outcome(" ".join(err.message.split()))
    problems, xfailed = judge(exp, out)
    if problems:
        pytest.fail(f"{name} [{target}]:\n  " + "\n  ".join(problems), pytrace=False)
    if xfailed:
        pytest.xfail("; ".join(xfailed))


def strip_annotations(text: str) -> str:
    """The file as a user without naiveopt's annotations writes it: no ``#pragma naiveopt``."""
    return re.sub(r"^#pragma naiveopt.*\n", "", text, flags=re.M)


@pytest.mark.parametrize("name", FILES)
def test_corpus_file_verifies_without_annotations(name):
    """Verified by default (verify/infer.py): every kernel of every accepted file verifies
    with its pragmas removed, at the sizes, thread space and shapes naiveopt infers (two size
    sets), in the file's own dialect; where it cannot, ``// XFAIL: unannotated: <reason>``
    says why, and the reason must be naiveopt's."""
    text = _read(name)
    exp = parse_header(text)
    if any(what == "rejected" for _, what, _ in exp.xfails):
        pytest.skip("the file is rejected (its XFAIL: rejected line)")
    xfail = {scope: reason for scope, what, reason in exp.xfails if what == "unannotated"}
    result = naiveopt.optimize(strip_annotations(text), filename=os.path.join(CORPUS, name),
                               options=exp.options)
    problems, expected = [], []
    for k in result.kernels:
        v = k.verification
        reason = xfail.get(k.name, xfail.get(None))
        said = " ".join((v.detail or v.status).split())
        if v.status == "passed":
            assert [c.split(" ")[0] for c in v.checks][:1] == ["inferred"], v.checks
            if reason is not None:
                problems.append(f"{k.name}: unexpectedly verified: remove 'XFAIL: "
                                f"unannotated: {reason}'")
        elif reason is not None and v.status == "skipped" and reason in said:
            expected.append(f"{k.name}: {reason}")
        else:
            problems.append(f"{k.name}: {v.status}: {said}")
    for name_, why in unread(result):
        reason = xfail.get(name_, xfail.get(None))
        if reason is not None and reason in why:
            expected.append(f"{name_}: {reason}")
        else:
            problems.append(f"{name_}: not read: {why}")
    if problems:
        pytest.fail(f"{name} (no annotations):\n  " + "\n  ".join(problems), pytrace=False)
    if expected:
        pytest.xfail("; ".join(expected))


# The judge itself, on made-up outcomes: each way a corpus file can go wrong is caught.

_HEADER = """// EXPECT-PASSES: thread-block-merge, coalesce|vectorize
// EXPECT: verified
"""


def _kernel(passes=("thread-block-merge", "coalesce"), verified=True, **missed):
    return KernelOutcome("k", list(passes), verified, "pragma (n=5): C match naive kernel"
                         if verified else "cannot check: shape unknown",
                         {p.replace("_", "-"): [m] for p, m in missed.items()})


def test_an_options_line_sets_api_options():
    exp = parse_header("// OPTIONS: --cost-model=unlimited\n// EXPECT-PASSES: stencil\n")
    assert exp.options == {"cost_model": "unlimited"}
    assert parse_header("// EXPECT-PASSES: stencil\n").options == {}


def test_judge_passes_a_file_that_meets_its_expectations():
    assert judge(parse_header(_HEADER), Outcome(None, [_kernel()])) == ([], [])


def test_judge_fails_an_unmarked_failure_and_accepts_a_marked_one():
    out = Outcome(None, [_kernel(passes=["coalesce"],
                                 thread_block_merge="1-D kernel: nothing shared")])
    problems, _ = judge(parse_header(_HEADER), out)
    assert problems and "thread-block-merge: expectation fails: 1-D kernel" in problems[0]
    marked = _HEADER + "// XFAIL: thread-block-merge: 1-D kernel: nothing shared\n"
    assert judge(parse_header(marked), out) == ([], ["k: thread-block-merge: 1-D kernel: "
                                                     "nothing shared"])


def test_judge_reports_an_xfail_that_now_holds():
    marked = _HEADER + "// XFAIL: verified: cannot check: shape unknown\n"
    problems, _ = judge(parse_header(marked), Outcome(None, [_kernel()]))
    assert problems == ["k: verified: unexpectedly passes: remove the XFAIL line "
                        "'verified: cannot check: shape unknown'"]
    marked = _HEADER + "// XFAIL: rejected: unknown type name 'size_t'\n"
    problems, _ = judge(parse_header(marked), Outcome(None, [_kernel()]))
    assert problems[0].startswith("rejected: unexpectedly passes")


def test_judge_reports_a_failure_for_another_reason():
    marked = _HEADER + "// XFAIL: rejected: unknown type name 'size_t'\n"
    problems, _ = judge(parse_header(marked), Outcome("atomics are not supported"))
    assert problems and "another reason" in problems[0]
    assert judge(parse_header(marked), Outcome("unknown type name 'size_t'")) == (
        [], ["rejected: unknown type name 'size_t'"])


def test_judge_holds_none_to_no_pass_and_either_to_one_of_them():
    none = "// EXPECT-PASSES: none\n// EXPECT: verified\n"
    problems, _ = judge(parse_header(none), Outcome(None, [_kernel(passes=["vectorize"])]))
    assert problems == ["k: none: expectation fails: fired: vectorize"]
    either = "// EXPECT-PASSES: coalesce|vectorize\n// EXPECT: verified\n"
    assert judge(parse_header(either), Outcome(None, [_kernel(passes=["vectorize"])])) == ([], [])


def test_judge_scopes_expectations_to_kernels():
    text = ("// EXPECT-PASSES(k): coalesce\n// EXPECT-PASSES(other): none\n"
            "// EXPECT: verified\n")
    problems, _ = judge(parse_header(text), Outcome(None, [_kernel()]))
    assert problems == ["EXPECT-PASSES(other): no kernel of that name"]
    problems, _ = judge(parse_header("// EXPECT-PASSES(j): none\n// EXPECT: verified\n"),
                        Outcome(None, [_kernel()]))
    assert "k: no EXPECT-PASSES line covers this kernel" in problems


@pytest.mark.parametrize("bad", [
    "// EXPECT-PASSES: coalesec\n",                          # a misspelt pass
    "// EXPECT-PASSES: none, stencil\n",
    "// EXPECT: fast\n",
    "// XFAIL: stencil: not a stencil\n// EXPECT-PASSES: coalesce\n",   # not expected
    "// XFAIL: no reason\n// EXPECT-PASSES: coalesce\n",
    "// XFAIL(k): rejected: parse error\n// EXPECT-PASSES: none\n",
    "//EXPECT-PASSES: none\n",
    "// OPTIONS: --merge=2:2\n// EXPECT-PASSES: none\n",       # not an option headers give
])
def test_malformed_headers_are_refused(bad):
    with pytest.raises(ValueError):
        parse_header(bad)


def xfail_table() -> str:
    """The README's table: the counts, then each XFAIL reason with the expectation it fails
    and its files (from the headers, which the tests above keep true)."""
    rows: dict[tuple[str, str], set[str]] = {}
    counts = {"files": 0, "accepted": 0, "verified": 0, "unannotated": 0, "passes": 0}
    for name in FILES:
        whats = set()
        for _, what, reason in parse_header(_read(name)).xfails:
            whats.add(what)
            rows.setdefault((what, reason), set()).add(name)
        counts["files"] += 1
        counts["accepted"] += "rejected" not in whats
        counts["verified"] += not whats & {"rejected", "verified"}
        counts["unannotated"] += not whats & {"rejected", "unannotated"}
        counts["passes"] += not whats - {"verified", "unannotated"}
    lines = [f"{counts['files']} files: {counts['accepted']} accepted, {counts['verified']} "
             f"verified (every kernel), {counts['unannotated']} verified with their pragmas "
             f"removed, {counts['passes']} with every expected pass fired.",
             "", "| expectation | reason naiveopt gives | files |", "| --- | --- | --- |"]
    order = {"rejected": "0", "verified": "1"}
    for (what, reason), names in sorted(rows.items(), key=lambda kv: (
            order.get(kv[0][0], "2" + kv[0][0]), -len(kv[1]), kv[0][1])):
        cell = reason.replace("|", "&#124;")
        lines.append(f"| {what.replace('|', ' or ')} | {cell} | {', '.join(sorted(names))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(xfail_table() + "\n")


OPENCL_FILES = sorted(f for f in os.listdir(CORPUS) if f.endswith(".cl"))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH: CUDA outputs of "
                    "the OpenCL files not compiled")
@pytest.mark.parametrize("name", OPENCL_FILES)
def test_cuda_output_of_each_opencl_file_compiles(name, tmp_path):
    """An OpenCL kernel's CUDA output compiles with nvcc: the translation's built-ins, and
    OpenCL's component-wise vector operators (``a * x[i] + y[i]`` on float4), which CUDA
    lacks and the output brings (ir/vector.cuda_operators)."""
    from conftest import compile_cuda

    with open(os.path.join(CORPUS, name), encoding="utf-8") as fh:
        source = fh.read()
    result = naiveopt.optimize(source, filename=name, target="cuda", verify=False)
    path = tmp_path / (name[:-3] + ".cu")
    path.write_text(result.code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
