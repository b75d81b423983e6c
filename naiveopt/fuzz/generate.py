"""Random naive kernels within the subset naiveopt models, for differential fuzzing.

A generated kernel is what users write (one output element per thread, loops over global
memory), drawn at random: 1-D or 2-D thread spaces, bounds guards (or none, with a launch that
covers the thread space exactly), nested loops with constant, triangular, strided and reversed
bounds, guards inside loops, several arrays, reductions into locals and into global elements,
affine indices in thread ids and loop iterators (offsets, strides, reversal, sums), helper
functions, file-scope ``__constant__`` coefficient tables, clamped taps (``min(max(i - 1, 0),
N - 1)`` and the other ways image filters clamp at the border, inline or through a local), and
odd problem sizes; a share of
cases are launch-geometry kernels instead (:func:`geometry_file`: z batches, blockIdx-only
axes, thread spaces like ``N - 2``). It carries ``#pragma naiveopt`` lines with its sizes, array
shapes, thread space and block, but most cases whose kernels bound their own thread space
lose that line, and a few lose its sizes: naiveopt must then infer what verification needs
(verify/infer.py) and still verify them (see ``unverifiable``).

The kernel is correct by construction, which is what makes a failed verification a miscompile:

- every index stays inside its array (the coefficient table too: constant indices, variables
  whose range fits its length, or a variable modulo its length): an array dimension is ``mult * SIZE + pad`` and is
  indexed only by expressions whose range fits (a variable ranging over ``[0, SIZE)``, plus an
  offset up to ``pad``, reversed, doubled when ``mult`` is 2, clamped into ``[0, SIZE)``, or a
  constant);
- there are no races: an array the kernel writes is accessed (read or written) only at
  elements the thread owns, i.e. with its thread ids as the index of the dimensions that
  span the thread space.

Kernels as others write them (``spell``, a stream of its own too: the canonicalization passes'
forms): loop iterators declared before their loops (C89, shared by sibling loops, sometimes
read after the loop), steps ``++k``, ``k += 1``, ``k = k + 1``, ``k = 1 + k``, ``k -= 1``,
``<=`` bounds, while loops with a counter, thread ids built from locals (``int tx =
threadIdx.x;``), through a cast, or assigned after their C89 declaration, early returns one per
id (the bound on either side, or the size through a cast: ``i >= (long)N``) and nested
guards; and a share of cases are grid-stride kernels (:func:`grid_stride_file`). A share of
cases name their sizes with -D (:func:`sized`), so that passes deciding by the sizes of
interest (split-reduction) fire on them.

Spellings (``forms``, a random stream of its own so the kernels' shapes stay those of the
plain generator): literals are written in every C form of the same value (``0.25f`` as
``2.5e-1f``, ``0x1p-2f``, ``25E-2F``, a double or long double; index constants and offsets as
octal, hex, suffixed or character literals: the value, hence the in-range guarantee, is
unchanged), and locals and sizes sometimes take names that the other dialect reserves
(``half``, ``local`` in CUDA; ``new``, ``threadIdx`` in OpenCL).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from ..passes.options import PipelineOptions

#: Problem sizes drawn for a dimension: small, odd, around block and tile multiples.
SIZES = (1, 2, 3, 5, 7, 13, 16, 17, 31, 32, 33, 45, 47, 63, 64, 65, 67, 70)
#: Extra sizes for the x thread dimension of a 1-D kernel (several blocks).
WIDE_SIZES = (129, 200, 255, 257, 300)
BLOCKS_1D = ((32, 1), (64, 1), (128, 1), (256, 1))
BLOCKS_2D = ((16, 16), (32, 8), (8, 8), (16, 4), (32, 4))
#: Share of the generated indices of a dimension that are clamped taps
#: (:meth:`KernelGenerator.clamped_tap`).
TAP_SHARE = 0.12
#: Share of kernels that also sum a clamped neighbourhood of a new input array
#: (:meth:`KernelGenerator.clamped_stencil`).
STENCIL_SHARE = 0.25
#: Share of the clamped taps declared as locals that are clamped with if-statements instead
#: (:meth:`KernelGenerator.clamp_if`).
CLAMP_IF_SHARE = 0.4
#: Share of a case's plain loop bounds written clamped to a cap, ``k < min(K, 48)``.
MIN_BOUND_SHARE = 0.15
#: Names for a file's arrays (I, J, K, L, M, N, O are taken by iterators and sizes).
ARRAY_NAMES = "ABCDEFGHPQRSTUVWXY"


def array_name(index: int) -> str:
    """The file's ``index``-th array name: a letter, then letters with a digit (``A2``) once
    the letters are used up (two kernels of many arrays: seed 20271126 case 394 ran out)."""
    letters = len(ARRAY_NAMES)
    return ARRAY_NAMES[index % letters] + ("" if index < letters else str(index // letters + 1))


@dataclass(frozen=True)
class Dim:
    """An array dimension of extent ``mult * size + pad``; ``owner`` names the thread variable
    that indexes it alone when the array is written (None for a free dimension)."""

    size: str
    mult: int = 1
    pad: int = 0
    owner: str | None = None

    def extent(self) -> str:
        text = self.size if self.mult == 1 else f"{self.mult} * {self.size}"
        return f"({text} + {self.pad})" if self.pad else text


@dataclass
class Array:
    name: str
    dims: list[Dim]
    written: bool = False
    const: bool = False
    restrict: bool = False


@dataclass
class Var:
    """An integer variable ranging over [0, size) (at most)."""

    name: str
    size: str


@dataclass
class Kernel:
    """One generated kernel and what verification needs to know about it."""

    name: str
    arrays: list[Array]
    threads: tuple[str, ...]
    guarded: bool
    has_alpha: bool
    body: list[str] = field(default_factory=list)
    c89: list[str] = field(default_factory=list)     # iterators declared at the top


@dataclass
class Case:
    """A generated file and the options to optimize it with."""

    seed: int
    index: int
    source: str
    dialect: str
    target: str
    arch: str
    options: PipelineOptions
    # -D NAME=VALUE given with the file: its pragma's sizes, as a user names the sizes of
    # interest (split-reduction decides by them; verification runs at exactly them)
    defines: dict[str, str] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"fuzz_{self.seed}_{self.index}." + ("cu" if self.dialect == "cuda" else "cl")

    def arguments(self) -> str:
        """The naiveopt command-line options that optimize this case as the campaign does."""
        parts = ["--target", self.target, "--arch", self.arch]
        parts += [f"-D {name}={value}" for name, value in self.defines.items()]
        parts += [f"--disable-pass={name}" for name in self.options.disable]
        if self.options.merge:
            parts.append("--merge={}:{}".format(*self.options.merge))
        if self.options.register_tile:
            parts.append("--register-tile={}:{}".format(*self.options.register_tile))
        if self.options.pipeline_stages:
            parts.append(f"--pipeline-stages={self.options.pipeline_stages}")
        if self.options.memory != "global":
            parts.append(f"--memory={self.options.memory}")
        if self.options.cost_model != "default":
            parts.append(f"--cost-model={self.options.cost_model}")
        return " ".join(parts)

    def command(self) -> str:
        """The naiveopt command line that reproduces this case."""
        return f"naiveopt {self.filename} {self.arguments()}"


#: Spellings of the float constants the generator writes, all of exactly the same value.
FLOAT_SPELLINGS = {
    "0.25f": ["2.5e-1f", "25E-2F", "0x1p-2f", "0X1.0P-2F", ".25f", "0.25", "2.5e-1", "0.25L",
              "0x.4p0f", "(1.0f / sizeof(float))"],
    "2.0f": ["2e+0f", "0x1p+1f", "2.F", "20e-1f", "2.0", "2e0L", "0X2P0F", "(float)sizeof(short)"],
    "1.5f": ["15e-1f", "0x1.8p+0f", "1.5E0F", "1.5", "15E-1L"],
}
#: Identifiers one dialect allows and the other reserves (passes.functional.names).
RESERVED_ELSEWHERE = {
    "cuda": ["half", "local", "global", "constant", "kernel", "uint", "uchar", "float8",
             "barrier", "read_only", "sampler_t", "image2d_t"],
    "opencl": ["new", "class", "threadIdx", "blockDim", "dim3", "warpSize", "template", "this",
               "typename", "delete", "namespace"],
}


class KernelGenerator:
    """Draws one file of random naive kernels (see the module docstring)."""

    forms: random.Random | None = None     # literal and name spellings (None: plain ones)
    spell: random.Random | None = None     # loop, id and guard spellings (None: plain ones)
    taps: random.Random | None = None      # clamped tap indices (None: none)

    def __init__(self, rng: random.Random, dialect: str,
                 extra: random.Random | None = None) -> None:
        self.rng = rng
        self.dialect = dialect
        self.guarded = False
        self.stencils = 0                   # clamped neighbourhoods drawn (clamped_stencil)
        self.sizes: dict[str, int] = {}
        self.arrays: dict[str, Array] = {}
        self.helper = False
        # forms added later draw from their own stream, so that the choices above (and the
        # cases of earlier campaigns) stay as they were
        self.extra = extra if extra is not None else random.Random(0)
        self.table = self.constant_table()
        # the stream that picks ids indexed by a block constant (``blockIdx.x * BLOCK_X +
        # threadIdx.x``, BLOCK_X #defined as the naive block): None keeps every id as before
        self.block_constants: random.Random | None = None
        # the stream that writes some clamped tap locals as if-statements: None, never
        self.clamp_ifs: random.Random | None = None
        self.block_macros: dict[str, int] = {}
        # the stream that leaves an unguarded kernel's threads(...) out of its pragma
        self.open_threads: random.Random | None = None
        # the stream that names the file-scope table as the other dialect reserves
        self.table_names: random.Random | None = None
        # whether the helper is a __device__ function template (CUDA; generate_case draws it)
        self.helper_template = False

    # ------------------------------------------------------------------ file
    def file(self) -> str:
        """The source text: helper, pragmas, and one or two kernels."""
        rng = self.rng
        two_d = rng.random() < 0.45
        guarded = rng.random() < 0.85
        self.guarded = guarded
        block = rng.choice(BLOCKS_2D if two_d else BLOCKS_1D)
        self.block = block
        square = two_d and rng.random() < 0.3 and (guarded or block[0] == block[1])
        thread_sizes = ["N", "N"] if square else ["N", "M"][:2 if two_d else 1]
        for axis, name in enumerate(thread_sizes):
            if guarded:
                self.sizes[name] = rng.choice(SIZES + (() if two_d else WIDE_SIZES))
            else:                                # the launch must cover it exactly
                self.sizes[name] = block[axis] * rng.randint(1, 2 if two_d else 3)
        self.helper = rng.random() < 0.2
        count = 2 if guarded and rng.random() < 0.15 else 1
        kernels = [self.kernel(f"k{n}", tuple(thread_sizes), guarded) for n in range(count)]
        lines = list(self.table_lines())
        if self.helper:
            lines += self.helper_lines()
        lines.append(self.pragma(kernels, block, guarded))
        for kernel in kernels:
            lines += self.kernel_lines(kernel)
        lines = [f"#define {k} {v}" for k, v in sorted(self.block_macros.items())] + lines
        return self.reserved_names("\n".join(lines) + "\n")

    def pragma(self, kernels: list[Kernel], block: tuple[int, int], guarded: bool) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        parts = [f"sizes({sizes})"]
        threads = kernels[0].threads
        # A guarded kernel's thread space is read from its guard unless the pragma says it;
        # an unguarded one's, now and then, as a free extent sized to the pragma's arrays
        # (verify/infer.py; a stream of its own)
        open_space = not guarded and self.open_threads is not None and \
            self.open_threads.random() < OPEN_THREADS_SHARE
        if (not guarded and not open_space) or \
                (guarded and len(kernels) == 1 and self.rng.random() < 0.5):
            parts.append(f"threads({', '.join(threads)})")
        if self.rng.random() < 0.8 or not guarded:
            parts.append(f"block({block[0]}, {block[1]})" if len(threads) == 2
                         else f"block({block[0]})")
        for array in self.arrays.values():
            parts.append(f"array({array.name}, {', '.join(d.extent() for d in array.dims)})")
        if any(k.has_alpha for k in kernels):
            parts.append("scalar(alpha, 1.5)")
        return "#pragma naiveopt " + " ".join(parts)

    def helper_lines(self) -> list[str]:
        spec = "__device__ " if self.dialect == "cuda" else ""
        weight = "CT[1]" if self.table and self.extra.random() < 0.5 else "0.5f"
        if self.helper_template:
            # a __device__ function template (frontend/templates.py: one helper per instance
            # called), called with its argument explicit or deduced from casts
            return ["template <typename T>", "__device__ T combine(T a, T b)", "{",
                    f"    return a * b + {weight} * a;", "}", ""]
        return [f"{spec}float combine(float a, float b)", "{",
                f"    return a * b + {weight} * a;", "}", ""]

    # ------------------------------------------------------------ constant data
    def constant_table(self) -> dict | None:
        """In a share of the files, a file-scope coefficient table ``CT`` (issue 11): CUDA
        ``__constant__`` data filled by the host (verification fills it at random) or
        initialized; OpenCL program-scope ``__constant`` data (initialized: OpenCL has no
        host-filled symbols). Its length is a literal or a macro ``CW``."""
        extra = self.extra
        if extra.random() >= 0.25:
            return None
        length = extra.choice([3, 5, 8, 16, 33])
        host = self.dialect == "cuda" and extra.random() < 0.5
        values = None if host else [extra.choice(["0.25f", "0.5f", "-1.0f", "2.0f", "0.125f",
                                                  "1.5f", "-0.75f", "3.0f"])
                                    for _ in range(length)]
        return {"length": length, "macro": extra.random() < 0.5, "values": values}

    def table_lines(self) -> list[str]:
        if not self.table:
            return []
        t = self.table
        dim = "CW" if t["macro"] else str(t["length"])
        lines = [f"#define CW {t['length']}"] if t["macro"] else []
        space = "__constant__" if self.dialect == "cuda" else "__constant"
        init = f" = {{{', '.join(t['values'])}}}" if t["values"] else ""
        return lines + [f"{space} float CT[{dim}]{init};", ""]

    def table_read(self, scope: list[Var]) -> str:
        """``CT[index]`` with an index in range: a constant, a variable whose range fits
        the table (a loop iterator over K, say), or one taken modulo its length."""
        extra = self.extra
        length = self.table["length"]
        dim = "CW" if self.table["macro"] else str(length)
        fits = [v.name for v in scope if self.sizes.get(v.size, length + 1) <= length]
        roll = extra.random()
        if fits and roll < 0.5:
            return f"CT[{extra.choice(fits)}]"
        if roll < 0.8:
            return f"CT[{extra.choice(scope).name} % {dim}]"
        return f"CT[{extra.randint(0, length - 1)}]"

    # ------------------------------------------------------------------ kernel
    def size(self, name: str) -> str:
        """A loop size: a fresh name or one already in use (loops over the thread space)."""
        if name not in self.sizes:
            self.sizes[name] = self.rng.choice(SIZES)
        return name

    def kernel(self, name: str, threads: tuple[str, ...], guarded: bool) -> Kernel:
        rng = self.rng
        tvars = [Var("i", threads[0])] + ([Var("j", threads[1])] if len(threads) == 2 else [])
        kernel = Kernel(name, [], threads, guarded, rng.random() < 0.2)
        self.current = kernel
        self.kernel_arrays = kernel.arrays
        self.tvars = tvars
        self.temps = 0
        self.c89: list[str] = []
        self.pending: list[str] = []        # declarations of clamped taps (clamped_tap)
        self.tap_count = 0
        body = self.flushed(["float acc = 0.0f;" if rng.random() < 0.7
                             else f"float acc = {self.read(tvars, 0)};"])
        for _ in range(rng.randint(1, 2)):
            body += self.loop(tvars, 1)
        if self.forms and self.forms.random() < 0.3:
            body.append(f"acc += (float){self.int_literal(8, signed=False)} * "
                        f"{self.float_literal('0.25f')};")
        out = self.owned_array(tvars, [])
        body += self.flushed([f"{self.access(out, tvars, [])} = {rng.choice(['acc', 'acc', 'acc + ' + self.expr(tvars, 1)])};"])
        if self.taps is not None and self.taps.random() < STENCIL_SHARE and self.names_left():
            body[-1:-1] = self.flushed(self.clamped_stencil(tvars))
        kernel.body = body
        kernel.c89 = self.c89
        return kernel

    def loop(self, scope: list[Var], depth: int) -> list[str]:
        """A for loop (with the statements of its body) over a fresh iterator."""
        rng = self.rng
        it = "klmn"[depth - 1]
        outer = scope[-1]
        # Nested loops stay short so the naive kernel runs quickly.
        size = self.size(rng.choice(["K", "K", "L", scope[0].size]))
        shape = rng.random()
        if depth == 1 and shape < 0.12:
            header = f"for (int {it} = 0; {it} < {scope[0].name}; {it}++)"  # triangular
            var = Var(it, scope[0].size)
        elif depth > 1 and shape < 0.2:
            header = f"for (int {it} = 0; {it} <= {outer.name}; {it}++)"  # bound by outer
            var = Var(it, outer.size)
        elif shape < 0.3:
            header = f"for (int {it} = {size} - 1; {it} >= 0; {it}--)"
            var = Var(it, size)
        elif shape < 0.4:
            header = f"for (int {it} = 1; {it} < {size}; {it} += 2)"
            var = Var(it, size)
        else:
            header = f"for (int {it} = 0; {it} < {size}; {it}++)"
            var = Var(it, size)
        inner = scope + [var]
        lines: list[str] = []
        for _ in range(rng.randint(1, 3)):
            lines += self.statement(inner, depth)
        return self.spelled_loop(header, lines)

    def spelled_loop(self, header: str, body: list[str]) -> list[str]:
        """The loop ``for (int it = init; it OP bound; step) { body }`` as others write it
        (``spell``): another step spelling, a ``<=`` bound, the iterator declared at the top
        of the kernel (C89), then perhaps as a while loop (its bound perhaps in a local declared
        between the counter's initialisation and the loop), and its final value read after."""
        inside = ["    " + line for line in body]
        s = self.spell
        m = re.fullmatch(r"for \(int (\w+) = (.+?); \1 (<|<=|>=) (.+?); (.+)\)", header)
        if s is None or m is None:
            return [header + " {"] + inside + ["}"]
        it, init, op, bound, step = m.groups()
        steps = {f"{it}++": [f"++{it}", f"{it} += 1", f"{it} = {it} + 1", f"{it} = 1 + {it}"],
                 f"{it} += 2": [f"{it} = {it} + 2"], f"{it}--": [f"--{it}", f"{it} -= 1"]}
        if step in steps and s.random() < 0.5:
            step = s.choice(steps[step])
        if op == "<" and s.random() < 0.25:
            op, bound = "<=", f"{bound} - 1"
        m_b = getattr(self, "min_bounds", None)
        if op == "<" and re.fullmatch(r"[A-Z]\w*", bound) and m_b is not None and \
                m_b.random() < MIN_BOUND_SHARE:
            # a bound clamped to a cap, as code that stops at a block's worth writes it
            bound = f"min({bound}, {m_b.choice([16, 48, 100])})"
        if s.random() >= 0.35:
            return [f"for (int {it} = {init}; {it} {op} {bound}; {step}) {{"] + inside + ["}"]
        if it not in self.c89:
            self.c89.append(it)
        if op != ">=" and s.random() < 0.25:
            out = [f"{it} = {init};", f"while ({it} {op} {bound}) {{"] + inside + \
                [f"    {step};", "}"]
            if s.random() < 0.4:     # the bound in a local declared between init and loop
                self.ends = getattr(self, "ends", 0) + 1
                end = f"{it}_end{self.ends}"
                out[1:2] = [f"int {end} = {bound};", f"while ({it} {op} {end}) {{"]
        else:
            out = [f"for ({it} = {init}; {it} {op} {bound}; {step}) {{"] + inside + ["}"]
        if s.random() < 0.3:
            out.append(f"acc += (float){it};")      # the iterator's final value
        return out

    def flushed(self, lines: list[str]) -> list[str]:
        """``lines`` after the declarations of the clamped taps their reads use."""
        out, self.pending = self.pending + lines, []
        return out

    def statement(self, scope: list[Var], depth: int) -> list[str]:
        return self.flushed(self.plain_statement(scope, depth))

    def plain_statement(self, scope: list[Var], depth: int) -> list[str]:
        rng = self.rng
        roll = rng.random()
        it = scope[-1].name
        if roll < 0.12 and depth < 2:
            return self.loop(scope, depth + 1)
        if roll < 0.45:
            op = rng.choice(["+=", "+=", "-=", "= fmax(acc,"])
            value = self.expr(scope, 0)
            stmt = f"acc = fmax(acc, {value});" if op.startswith("=") else f"acc {op} {value};"
            if self.dialect == "cuda":
                stmt = stmt.replace("fmax(", "fmaxf(")
        elif roll < 0.6:
            out = self.owned_array(self.tvars, scope[len(self.tvars):])
            op = rng.choice(["=", "+="])
            stmt = f"{self.access(out, scope, scope[len(self.tvars):])} {op} {self.expr(scope, 0)};"
        elif roll < 0.7:
            stmt = f"acc = acc * 0.5f + {self.expr(scope, 0)};"
        elif roll < 0.8:
            self.temps += 1
            t = f"t{self.temps}"
            return [f"float {t} = {self.expr(scope, 0)};", f"acc += {t} * {t};"]
        else:
            stmt = f"acc += {self.expr(scope, 0)};"
        if rng.random() < 0.25:
            cond = rng.choice([f"{it} != {scope[0].name}", f"{it} < {scope[0].name}",
                               f"{it} % 3 == 1", f"{self.read(scope, 1)} > 0.0f"])
            return [f"if ({cond})", "    " + stmt]
        return [stmt]

    # ------------------------------------------------------------------ arrays
    def owned_array(self, tvars: list[Var], loops: list[Var]) -> Array:
        """An array the kernel writes: one dimension per thread variable (indexed by it
        alone), perhaps one free dimension indexed by a loop iterator or a constant."""
        rng = self.rng
        existing = [a for a in self.kernel_arrays if a.written]
        if existing and (rng.random() < 0.5 or self.names_left() == 0):
            return rng.choice(existing)
        dims = [Dim(v.size, pad=rng.choice([0, 0, 0, 1]), owner=v.name) for v in tvars]
        if len(tvars) == 2 and rng.random() < 0.3:
            dims.reverse()                        # a transposed write: out[i*M + j]
        if loops and rng.random() < 0.4:
            free = Dim(rng.choice(loops).size, pad=rng.choice([0, 1]))
            dims.insert(rng.randint(0, len(dims)), free)
        return self.new_array(dims, written=True)

    def names_left(self) -> int:
        """Array names not yet used in the file (a file stops adding arrays at the last)."""
        return max(0, len(ARRAY_NAMES) - len(self.arrays))

    def new_array(self, dims: list[Dim], written: bool) -> Array:
        name = array_name(len(self.arrays))
        array = Array(name, dims, written)
        if not written:
            array.const = self.rng.random() < 0.4
            array.restrict = self.rng.random() < 0.3
        self.arrays[name] = array
        self.kernel_arrays.append(array)
        return array

    def read(self, scope: list[Var], depth: int) -> str:
        """A read of an input array (new or existing), or of an owned element."""
        rng = self.rng
        written = [a for a in self.kernel_arrays if a.written]
        if written and rng.random() < 0.1:
            return self.access(rng.choice(written), scope, scope[len(self.tvars):])
        inputs = [a for a in self.kernel_arrays if not a.written]
        if inputs and (rng.random() < 0.6 or self.names_left() == 0):
            array = rng.choice(inputs)
        else:
            dims = []
            for _ in range(rng.choice([1, 2, 2, 2])):
                var = rng.choice(scope)
                dims.append(Dim(var.size, rng.choice([1, 1, 1, 2]), rng.choice([0, 0, 1, 2])))
            array = self.new_array(dims, written=False)
        return self.access(array, scope, [])

    def access(self, array: Array, scope: list[Var], loops: list[Var]) -> str:
        """``A[flat index]`` with an in-bounds index for every dimension."""
        index = []
        for dim in array.dims:
            if dim.owner is not None:
                index.append(dim.owner)
            else:
                index.append(self.dim_index(dim, loops if array.written else scope))
        flat = index[0]
        for dim, part in zip(array.dims[1:], index[1:]):
            flat = f"({flat}) * {dim.extent()} + {part}" if " " in flat else \
                f"{flat} * {dim.extent()} + {part}"
        return f"{array.name}[{flat}]"

    def dim_index(self, dim: Dim, scope: list[Var]) -> str:
        """An index expression whose values stay in [0, extent) of ``dim``."""
        rng = self.rng
        fits = [v.name for v in scope if v.size == dim.size]
        if not fits:
            return self.int_literal(rng.randint(0, dim.pad), signed=False)
        v = rng.choice(fits)
        forms = [v, v, v, f"{dim.size} - 1 - {v}"]
        if dim.pad:
            forms.append(f"{v} + {self.int_literal(rng.randint(1, dim.pad))}")
        if dim.mult == 2:
            forms += [f"2 * {v}", f"2 * {v} + {min(dim.pad + 1, rng.randint(0, 2))}"]
            if len(fits) > 1:
                forms.append(" + ".join(rng.sample(fits, 2)))
        index = rng.choice(forms)
        if self.taps is not None and self.taps.random() < TAP_SHARE:
            return self.clamped_tap(v, dim, scope)
        return index

    def clamped_tap(self, v: str, dim: Dim, scope: list[Var]) -> str:
        """``v`` moved by a constant or by another variable, clamped into [0, size) as image
        filters clamp at the border (``min(max(v - 1, 0), N - 1)``, swapped, OpenCL's
        ``clamp``, one-sided or as a ternary where the other side cannot be crossed), inline
        or through a local declared before the statement (``int tap1 = ...;``)."""
        t = self.taps
        others = [w.name for w in scope if w.name != v]
        if others and t.random() < 0.3:
            return self.clamped(v, f"{v} {t.choice('+-')} {t.choice(others)}", 0, dim.size)
        d = t.randint(-2, 2)
        return self.clamped(v, v if d == 0 else f"{v} {'+' if d > 0 else '-'} {abs(d)}", d,
                            dim.size)

    def clamped_stencil(self, tvars: list[Var]) -> list[str]:
        """``acc += `` a few taps of a new input array shaped as the thread space, around the
        thread's own element, each coordinate clamped at the border (or, at offset 0, now and
        then not): an image filter's neighbourhood, which the stencil pass stages. Drawn from
        the taps stream alone (the array too), so the kernel's other draws stay as they were."""
        t = self.taps
        self.stencils += 1
        axes = list(reversed(tvars))                  # row (j) first, then column (i)
        dims = [Dim(v.size) for v in axes]
        array = Array(array_name(len(self.arrays)), dims, const=t.random() < 0.5)
        self.arrays[array.name] = array
        self.kernel_arrays.append(array)
        taps = []
        for _ in range(t.randint(2, 5)):
            parts = []
            for v, dim in zip(axes, dims):
                d = t.randint(-2, 2)
                arg = v.name if d == 0 else f"{v.name} {'+' if d > 0 else '-'} {abs(d)}"
                parts.append(arg if d == 0 and t.random() < 0.5 else
                             self.clamped(v.name, arg, d, dim.size))
            flat = parts[-1]
            if len(parts) == 2:
                row = f"({parts[0]})" if " " in parts[0] else parts[0]
                flat = f"{row} * {dims[1].extent()} + {parts[1]}"
            taps.append(f"{array.name}[{flat}]")
        return [f"acc += {' + '.join(taps)};"]

    def clamped(self, v: str, arg: str, d: int, size: str) -> str:
        """``arg`` (``v`` plus ``d``, or plus another variable where ``d`` is 0) clamped into
        [0, size) in one of the forms of :meth:`clamped_tap`."""
        t = self.taps
        forms = [f"min(max({arg}, 0), {size} - 1)", f"max(min({arg}, {size} - 1), 0)",
                 f"max(0, min({size} - 1, {arg}))"]
        if self.dialect == "opencl":
            forms.append(f"clamp({arg}, 0, {size} - 1)")
        if d < 0:           # v + d <= size - 1 already
            forms += [f"max({arg}, 0)", f"({v} >= {-d} ? {arg} : 0)"]
        elif d > 0:         # v + d >= 0 already
            forms += [f"min({arg}, {size} - 1)", f"({arg} < {size} ? {arg} : {size} - 1)"]
        text = t.choice(forms)
        if t.random() < 0.4:
            self.tap_count += 1
            tap = f"tap{self.tap_count}"
            if self.clamp_ifs is not None and self.clamp_ifs.random() < CLAMP_IF_SHARE:
                self.pending += [f"int {tap} = {arg};", *self.clamp_if(tap, d, size)]
            else:
                self.pending.append(f"int {tap} = {text};")
            return tap
        return text

    def clamp_if(self, tap: str, d: int, size: str) -> list[str]:
        """The statements clamping the local ``tap`` into [0, size) as tutorials write it,
        with if-statements (the clamp-ifs canonicalization): both sides in a row or as an
        else-if, the bound on either side of the test, braced or not, now and then reflected
        instead of clamped; one side where the other cannot be crossed (``d``, the constant
        offset, as in :meth:`clamped`)."""
        c = self.clamp_ifs
        low = c.choice([f"{tap} < 0", f"0 > {tap}", f"{tap} <= -1"])
        high = c.choice([f"{tap} >= {size}", f"{tap} > {size} - 1", f"{size} <= {tap}"])

        def branch(test: str, value: str) -> str:
            body = f"{tap} = {value};"
            return f"if ({test}) {{ {body} }}" if c.random() < 0.3 else f"if ({test}) {body}"

        sides = [branch(low, "0"), branch(high, f"{size} - 1")]
        if d and self.sizes.get(size, 0) > abs(d) and c.random() < 0.3:
            # reflected at the border (OpenCV's BORDER_REFLECT_101), in range where the size
            # exceeds the offset
            sides = [branch(low, f"-{tap}"), branch(high, f"2 * {size} - {tap} - 2")]
        if d < 0 and c.random() < 0.5:
            return sides[:1]
        if d > 0 and c.random() < 0.5:
            return sides[1:]
        if c.random() < 0.5:
            sides.reverse()
        if c.random() < 0.4:
            return [f"{sides[0]} else {sides[1]}"]
        return sides

    def expr(self, scope: list[Var], depth: int) -> str:
        rng = self.rng
        roll = rng.random()
        if depth < 2 and roll < 0.35:
            op = rng.choice(["+", "-", "*", "*"])
            return f"{self.expr(scope, depth + 1)} {op} {self.expr(scope, depth + 1)}"
        if depth < 2 and self.helper and roll < 0.42:
            a, b = self.expr(scope, depth + 1), self.expr(scope, depth + 1)
            if self.helper_template:
                return f"combine<float>({a}, {b})" if len(a) % 2 else \
                    f"combine((float)({a}), (float)({b}))"
            return f"combine({a}, {b})"
        if roll < 0.85:
            if self.table and self.extra.random() < 0.3:
                return f"{self.table_read(scope)} * {self.read(scope, depth)}"
            return self.read(scope, depth)
        return self.float_literal(rng.choice(["0.25f", "2.0f", "alpha" if self.current.has_alpha
                                              else "1.5f", f"(float){rng.choice(scope).name}"]))

    # ------------------------------------------------------------- spellings
    def float_literal(self, text: str) -> str:
        """``text`` (a float literal or other operand) or a spelling of the same value."""
        if self.forms is None or text not in FLOAT_SPELLINGS or self.forms.random() < 0.5:
            return text
        spellings = FLOAT_SPELLINGS[text]
        if self.dialect == "opencl":
            # OpenCL's overloaded built-ins take no mixed float/double arguments (fmax(acc,
            # 0.25) is ambiguous: an invalid input, not a form to test), so float spellings only
            spellings = [t for t in spellings if t[-1] in "fF" or "sizeof" in t]
        return self.forms.choice(spellings)

    def int_literal(self, value: int, signed: bool = True) -> str:
        """A C integer literal of ``value`` >= 0: decimal, octal, hex, suffixed (unsigned only
        where ``signed`` is False: a constant index, not an offset added to a variable),
        character literal; digit separators and binary literals in CUDA only."""
        if self.forms is None or self.forms.random() < 0.4:
            return str(value)
        forms = [f"0{value:o}" if value else "00", f"0x{value:x}", f"0X{value:X}", f"{value}l",
                 f"{value}L"]
        if not signed:
            forms += [f"{value}u", f"{value}U", f"{value}ul", f"0x{value:x}u", f"0{value:o}U",
                      f"'\\{value:o}'"]
            if self.dialect == "cuda":
                forms += [f"{value}ull", f"{value}LLU", f"0b{value:b}", f"0'{value:o}"]
        return self.forms.choice(forms)

    def reserved_names(self, text: str) -> str:
        """The file with, sometimes, the accumulator, a size and the file-scope table named as
        the other dialect reserves (whole-word renames of names the generator alone uses)."""
        if self.forms is None:
            return text
        names = [n for n in RESERVED_ELSEWHERE[self.dialect]
                 if not re.search(rf"\b{n}\b", text)]
        self.forms.shuffle(names)
        if names and self.forms.random() < 0.3:
            text = re.sub(r"\bacc\b", names.pop(), text)
        sizes = [s for s in ("K", "L", "M", "N") if re.search(rf"\b{s}\b", text)]
        if names and sizes and self.forms.random() < 0.2:
            text = re.sub(rf"\b{self.forms.choice(sizes)}\b", names.pop(), text)
        # the file-scope table too (``__constant__ float half[5];``: an OpenCL kernel
        # argument or program-scope data there, renamed like a local)
        # (a stream of its own, so earlier campaigns' cases keep their names; not a type
        # name CUDA's headers declare at file scope: ``uint``, ``uchar``)
        table = [n for n in names if n not in ("uint", "uchar")]
        if self.table_names is not None and table and re.search(r"\bCT\b", text) and \
                self.table_names.random() < TABLE_RESERVED_SHARE:
            text = re.sub(r"\bCT\b", self.table_names.choice(table), text)
        return text

    # ------------------------------------------------------------------ text
    def kernel_lines(self, kernel: Kernel) -> list[str]:
        params = []
        space = "__global " if self.dialect == "opencl" else ""
        restrict = "__restrict__ " if self.dialect == "cuda" else "restrict "
        for array in kernel.arrays:
            params.append(f"{space}{'const ' if array.const else ''}float *"
                          f"{restrict if array.restrict else ''}{array.name}")
        if kernel.has_alpha:
            params.append("float alpha")
        params += [f"int {name}" for name in self.sizes]
        head = "__global__ void" if self.dialect == "cuda" else "__kernel void"
        lines = [f"{head} {kernel.name}({', '.join(params)})", "{"]
        lines += ["    " + line for line in self.thread_ids(kernel)]
        if kernel.c89:
            lines.append(f"    int {', '.join(kernel.c89)};")
        body = ["    " + line for line in kernel.body]
        s = self.spell
        if kernel.guarded:
            cond = " && ".join(f"{v} < {s}" for v, s in zip("ij", kernel.threads))
            if self.rng.random() < 0.3:
                neg = " || ".join(f"{v} >= {s}" for v, s in zip("ij", kernel.threads))
                if s is not None and s.random() < 0.5:     # one early return per id
                    for v, n in zip("ij", kernel.threads):
                        roll = s.random()   # the size through a cast, as size_t code does
                        test = f"{v} >= {n}" if roll < 0.35 else (
                            f"{v} >= (long){n}" if roll < 0.5 else f"{n} <= {v}")
                        lines += [f"    if ({test})", "        return;"]
                    lines += body
                else:
                    lines += [f"    if ({neg})", "        return;"] + body
            elif s is not None and len(kernel.threads) == 2 and s.random() < 0.25:
                lines += ["    if (i < " + kernel.threads[0] + ") {",
                          "        if (j < " + kernel.threads[1] + ") {"]
                lines += ["        " + b for b in body] + ["        }", "    }"]
            else:
                lines += [f"    if ({cond}) {{"] + ["    " + b for b in body] + ["    }"]
        else:
            lines += body
        return lines + ["}", ""]

    def thread_ids(self, kernel: Kernel) -> list[str]:
        out = []
        for var, axis in zip("ij", "xy"):
            if var == "j" and len(kernel.threads) < 2:
                break
            n = "xy".index(axis)
            if self.dialect == "cuda":
                expr = self.rng.choice([f"blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}",
                                        f"threadIdx.{axis} + blockIdx.{axis} * blockDim.{axis}",
                                        f"blockDim.{axis} * blockIdx.{axis} + threadIdx.{axis}"])
            else:
                expr = self.rng.choice([f"get_global_id({n})",
                                        f"get_group_id({n}) * get_local_size({n}) + "
                                        f"get_local_id({n})"])
            size = None
            if self.block_constants is not None and self.block_constants.random() < 0.25:
                # the CUDA samples' form: the block size as a macro, no blockDim (the
                # predefined pass takes the macro as the naive block, which it is here)
                size = f"BLOCK_{axis.upper()}"
                self.block_macros[size] = self.block[n]
                b, t = ((f"blockIdx.{axis}", f"threadIdx.{axis}") if self.dialect == "cuda"
                        else (f"get_group_id({n})", f"get_local_id({n})"))
                expr = self.block_constants.choice([f"{b} * {size} + {t}",
                                                    f"{t} + {size} * {b}"])
            out += self.spelled_id(var, axis, expr, size)
        return out

    def spelled_id(self, var: str, axis: str, expr: str, size: str | None = None
                   ) -> list[str]:
        """``int var = expr;`` as others write it (``spell``): the built-ins named first
        (``int tx = threadIdx.x;``), a cast to unsigned, or the id assigned after its C89
        declaration."""
        s = self.spell
        roll = s.random() if s is not None else 1.0
        n = "xy".index(axis)
        if roll < 0.15:
            if self.dialect == "cuda":
                t, b, dim = f"threadIdx.{axis}", f"blockIdx.{axis}", f"blockDim.{axis}"
            else:
                t, b, dim = f"get_local_id({n})", f"get_group_id({n})", f"get_local_size({n})"
            return [f"int t{axis} = {t};", f"int b{axis} = {b};",
                    f"int {var} = b{axis} * {size or dim} + t{axis};"]
        if roll < 0.25 and self.dialect == "cuda" and size is None:
            return [f"int {var} = (unsigned)blockIdx.{axis} * blockDim.{axis} + "
                    f"threadIdx.{axis};"]
        if roll < 0.35:
            return [f"int {var};", f"{var} = {expr};"]
        return [f"int {var} = {expr};"]


#: How often a case is a launch-geometry kernel (:func:`geometry_file`) instead.
GEOMETRY_SHARE = 0.2


def geometry_file(rng: random.Random, dialect: str) -> str:
    """A kernel whose launch geometry is the point (issue 11): a z batch dimension read from
    blockIdx.z, blockIdx.z * blockDim.z + threadIdx.z, get_group_id(2) or get_global_id(2)
    (with a naive block z of 2 or 4 for the threadIdx.z forms now and then), axes indexed by
    blockIdx alone (one thread per block there), and x thread spaces such as ``N - 2`` whose
    ceil-division needs parentheses. Correct by construction: arrays are (Z, M, N), each
    thread writes only its own element, reads in a loop stay in its row."""
    z = rng.random() < 0.8
    two_d = rng.random() < 0.6
    off = rng.choice([0, 1, 2])
    sizes = {"N": rng.choice((3, 5, 17, 33, 64, 65, 129, 200)), "M": rng.choice((1, 2, 7, 13)),
             "Z": rng.choice((1, 2, 3, 5))}
    x_block_only = rng.random() < 0.15
    y_block_only = two_d and rng.random() < 0.4
    z_form = rng.choice(["bid", "bid", "global", "global"])
    block_z = rng.choice([2, 4]) if z and z_form == "global" and rng.random() < 0.3 else 1

    def axis_id(n: int, block_only: bool, form: str = "global") -> str:
        a = "xyz"[n]
        if dialect == "cuda":
            if block_only or form == "bid":
                return f"blockIdx.{a}"
            return rng.choice([f"blockIdx.{a} * blockDim.{a} + threadIdx.{a}",
                               f"threadIdx.{a} + blockDim.{a} * blockIdx.{a}"])
        if block_only or form == "bid":
            return f"get_group_id({n})"
        return rng.choice([f"get_global_id({n})",
                           f"get_group_id({n}) * get_local_size({n}) + get_local_id({n})"])

    ids = [("i", axis_id(0, x_block_only))]
    ids.append(("j", axis_id(1, y_block_only)) if two_d else ("j", "0"))
    ids.append(("k", axis_id(2, False, z_form)) if z else ("k", "0"))
    extent = f"N - {off}" if off else "N"
    guard_z = z and (block_z > 1 or rng.random() < 0.7)
    conds = [f"i < {extent}"] + (["j < M"] if two_d else []) + (["k < Z"] if guard_z else [])
    threads = [extent, "M" if two_d else "1"] + (["Z"] if z else [])
    parts = [f"sizes({', '.join(f'{k}={v}' for k, v in sizes.items())})",
             "array(A, Z, M, N)", "array(B, Z, M, N)"]
    if (z and not guard_z) or rng.random() < 0.3:
        parts.append(f"threads({', '.join(threads)})")
    if block_z > 1:
        # one thread per block along an axis indexed by blockIdx alone
        parts.append(f"block({1 if x_block_only else rng.choice([16, 32])}, 1, {block_z})")
    elif not x_block_only and rng.random() < 0.4:
        parts.append(f"block({rng.choice([32, 64, 128])})")
    at = "(k * M + j) * N"
    body = [f"B[{at} + i] = 2.0f * A[{at} + i] + (float)k;"]
    if rng.random() < 0.5:
        body = ["float acc = 0.0f;", "for (int l = 0; l < N; l++) {",
                f"    acc += A[{at} + l] * 0.5f;", "}", f"B[{at} + i] = acc + (float)(k + j);"]
    space = "__global " if dialect == "opencl" else ""
    head = "__global__ void" if dialect == "cuda" else "__kernel void"
    lines = [f"#pragma naiveopt {' '.join(parts)}",
             f"{head} g0({space}const float *A, {space}float *B, int N, int M, int Z)", "{"]
    lines += [f"    int {v} = {e};" for v, e in ids]
    lines += [f"    if ({' && '.join(conds)}) {{"] + ["        " + b for b in body] + ["    }"]
    return "\n".join(lines + ["}", ""])


#: How often a case is a row or column reduction (:func:`reduction_file`) instead, its sizes
#: given with -D so that split-reduction's cost model sees few outputs and long loops.
REDUCTION_SHARE = 0.1


def reduction_file(rng: random.Random, dialect: str) -> str:
    """A 1-D kernel whose thread sums a long loop for its own output, as matrix-vector
    products, row norms and column sums are written: few outputs (N) and many iterations (M),
    what split-reduction splits over lanes. Rows (``A[i * M + j]``) or columns
    (``A[j * N + i]``); a bounds guard, an early return, or none (``threads(N)``); a float
    or an integer sum, a dot product with a vector, a subtraction, the loop counted down or
    stepped by 2, ``acc = acc + E``, statements after the loop, and a triangular bound
    (``j < i``) in a share of cases."""
    sizes = {"N": rng.choice((3, 17, 45, 67, 130)), "M": rng.choice((64, 257, 1001, 2049))}
    layout = rng.choice(["rows", "columns"])
    a = "A[i * M + j]" if layout == "rows" else "A[j * N + i]"
    shape = "array(A, N, M)" if layout == "rows" else "array(A, M, N)"
    acc_type = rng.choice(["float", "float", "float", "double", "int"])
    zero = {"float": "0.0f", "double": "0.0", "int": "0"}[acc_type]
    term = rng.choice([f"{a} * X[j]", a, f"{a} * {a}", f"X[j] - {a}",
                       f"({a} > X[j]) ? 1.0f : 0.0f"])
    if acc_type == "int":
        term = f"({a} > X[j]) ? 1 : 0"
    if "?" in term:
        term = f"({term})"
    update = rng.choice(["acc += T;", "acc = acc + T;", "acc -= T;"]).replace("T", term)
    bound = "j < i" if rng.random() < 0.15 else "j < M"
    loop = rng.choice([f"for (int j = 0; {bound}; j++)"] * 3 + [
        f"for (int j = 0; {bound}; ++j)", "for (int j = 1; j < M; j += 2)",
        "for (int j = M - 1; j >= 0; j--)"])
    if "j >= 0" in loop and bound != "j < M":
        loop = f"for (int j = 0; {bound}; j++)"
    after = rng.choice(["Y[i] = acc;", "Y[i] = acc * 0.5f;", "float r = acc;\n    Y[i] = r + 1.0f;"])
    if acc_type == "int":
        after = "Y[i] = (float)acc;"
    if dialect == "cuda":
        gid = "blockIdx.x * blockDim.x + threadIdx.x"
        head = "__global__ void red(const float *A, const float *X, float *Y, int N, int M)"
    else:
        gid = "get_global_id(0)"
        head = ("__kernel void red(__global const float *A, __global const float *X, "
                "__global float *Y, int N, int M)")
    guard = rng.choice(["if", "return", "none"])
    parts = [f"sizes(N={sizes['N']}, M={sizes['M']})", shape, "array(X, M)", "array(Y, N)"]
    if guard == "none":             # no guard: the thread space a multiple of the block
        block = rng.choice([32, 64])
        sizes["N"] = block * rng.choice([1, 2, 4])
        parts[0] = f"sizes(N={sizes['N']}, M={sizes['M']})"
        parts += ["threads(N)", f"block({block})"]
    body = [f"{acc_type} acc = {zero};", loop, f"    {update}", *after.split("\n")]
    lines = [f"#pragma naiveopt {' '.join(parts)}", head, "{", f"    int i = {gid};"]
    if guard == "if":
        lines += ["    if (i < N) {"] + ["        " + b.strip() if not b.startswith("    ")
                                          else "            " + b.strip() for b in body]
        lines += ["    }"]
    else:
        if guard == "return":
            lines += ["    if (i >= N)", "        return;"]
        lines += ["    " + b if not b.startswith("    ") else "        " + b.strip()
                  for b in body]
    return "\n".join(lines + ["}", ""])


#: How often a case is a grid-stride kernel (:func:`grid_stride_file`) instead.
GRID_STRIDE_SHARE = 0.12
#: Share of cases that force a register-tiled micro-tile (--register-tile)
REGISTER_TILE_SHARE = 0.12
#: Share of the cases with a clamped neighbourhood that force a register-blocked stencil
REGISTER_BLOCK_SHARE = 0.5
#: Share of cases that force an asynchronous tile pipeline (--pipeline-stages)
PIPELINE_SHARE = 0.15


def grid_stride_file(rng: random.Random, dialect: str) -> str:
    """A kernel with a grid-stride loop (``for (i = id; i < N; i += total threads)``): an
    elementwise map, a row walk (a dot product per row), or per-thread partial sums (each
    thread's share summed, written by thread id under a ``threads(T)`` launch). The id and the
    stride in every common spelling (in the header or through locals, C89 iterator, the index
    set before an empty init, ``i = i + stride``); the map and the row walk sometimes with a ``threads(...)`` launch of their own.
    Correct by construction on any launch: each element is touched by one thread, the
    partial sums only by the thread that owns them."""
    kind = rng.choice(["map", "map", "rows", "partial"])
    sizes = {"N": rng.choice((1, 5, 33, 65, 200, 1001)), "K": rng.choice((1, 3, 17, 33)),
             "T": rng.choice((32, 64, 100, 257))}
    if dialect == "cuda":
        gid = rng.choice(["blockIdx.x * blockDim.x + threadIdx.x",
                          "threadIdx.x + blockDim.x * blockIdx.x"])
        total = rng.choice(["blockDim.x * gridDim.x", "gridDim.x * blockDim.x"])
    else:
        gid = rng.choice(["get_global_id(0)",
                          "get_group_id(0) * get_local_size(0) + get_local_id(0)"])
        total = rng.choice(["get_global_size(0)", "get_num_groups(0) * get_local_size(0)"])
    head, decls = "", []
    if rng.random() < 0.3:
        decls.append(f"int stride = {total};")
        total = "stride"
    c89 = rng.random() < 0.3
    if c89:
        decls.append("int i;")
    if rng.random() < 0.3 and kind != "partial":
        decls.append(f"int tid = {gid};")
        gid = "tid"
    step = rng.choice([f"i += {total}", f"i = i + {total}"])
    start = "tid" if kind == "partial" else gid
    header = f"for ({'' if c89 else 'int '}i = {start}; i < N; {step})"
    arrays = ["array(A, N)", "array(B, N)"]
    threads = None
    if kind == "map":
        body = ["    B[i] = 2.0f * A[i] + 0.25f;"]
    elif kind == "rows":
        arrays = ["array(A, N, K)", "array(X, K)", "array(B, N)"]
        body = ["    float acc = 0.0f;", "    for (int l = 0; l < K; l++)",
                "        acc += A[i * K + l] * X[l];", "    B[i] = acc;"]
        if rng.random() < 0.4:
            # the OpenCL SDK's row pointer, declared anew in each iteration of the loop
            space_ = "__global " if dialect == "opencl" else ""
            body[1:3] = [f"    const {space_}float *row = A + i * K;",
                         "    for (int l = 0; l < K; l++)", "        acc += row[l] * X[l];"]
    else:
        arrays = ["array(A, N)", "array(P, T)"]
        decls.insert(0, f"int tid = {gid};")
        decls.append("float s = 0.0f;")
        body = ["    s += A[i];"]
        threads = "T"
    if threads is None and rng.random() < 0.3:
        threads = "T"             # a launch of its own: each thread keeps its share
    parts = [f"sizes({', '.join(f'{k}={v}' for k, v in sizes.items())})"] + arrays
    if threads:
        parts.append(f"threads({threads})")
    if rng.random() < 0.4:
        parts.append(f"block({rng.choice([32, 64, 128, 256])})")
    if not c89 and rng.random() < 0.45:     # drawn last: the other draws stay as they were
        # the index set before the loop, its init left empty (loop-inits)
        decls.append(f"int i = {start};")
        header = f"for (; i < N; {step})"
    names = [a.split("(")[1].split(",")[0] for a in arrays]
    space = "__global " if dialect == "opencl" else ""
    params = [f"{space}{'const ' if n in ('A', 'X') else ''}float *{n}" for n in names]
    kernel = "__global__ void" if dialect == "cuda" else "__kernel void"
    lines = [f"#pragma naiveopt {' '.join(parts)}",
             f"{kernel} gs0({', '.join(params)}, int N, int K, int T)", "{"]
    lines += ["    " + d for d in decls] + ["    " + header + " {"]
    lines += ["    " + b for b in body] + ["    }"]
    if kind == "partial":
        lines += ["    if (tid < T)", "        P[tid] = s;"]
    return "\n".join(lines + ["}", ""]) + head


#: How often a case is an elementwise map (:func:`map_file`) instead.
MAP_SHARE = 0.08


def map_file(rng: random.Random, dialect: str) -> str:
    """An elementwise map, 1-D or 2-D, as tutorials and libraries write them: one to three
    inputs read at the thread's own element (now and then one read at a neighbour, clamped,
    or a row-wise factor ``s[y]``), an in-place update (``y[i] = a * x[i] + y[i]``) now and
    then, a scalar argument, the guard as an if or an early return, unsigned or int ids.
    vectorize merges 4 lanes of these where the cost model estimates a gain (NVIDIA) or
    always (AMD); the neighbour read and the in-place update stay scalar. Correct by
    construction: each thread writes its own element."""
    two_d = rng.random() < 0.4
    sizes = {"N": rng.choice((1, 3, 4, 5, 31, 64, 100, 257, 1001))}
    if two_d:
        sizes["M"] = rng.choice((1, 2, 7, 13, 33))
    n_in = rng.choice([1, 1, 2, 3])
    inputs = ["x", "u", "w"][:n_in]
    in_place = rng.random() < 0.25
    at = "j * N + i" if two_d else "i"
    terms = [f"{v}[{at}]" for v in inputs]
    if rng.random() < 0.2:
        terms.append(f"x[{'j * N + ' if two_d else ''}(i + 1 < N ? i + 1 : i)]")
    if two_d and rng.random() < 0.3:
        terms[0] = f"s[j] * {terms[0]}"
    expr = rng.choice(["a * {0}", "{0} * {0}", "{0} > 0.0f ? {0} : 0.0f", "{0} + 1.5f"]
                      ).format(terms[0])
    expr = " + ".join([f"({expr})"] + terms[1:])
    if in_place:
        expr = f"{expr} + y[{at}]"
    space = "__global " if dialect == "opencl" else ""
    ctype = rng.choice(["int", "int", "unsigned int"])
    params = [f"{space}const float *{v}" for v in inputs] + \
        ([f"{space}const float *s"] if "s[j]" in expr else []) + \
        [f"{space}float *y", "float a", "int N"] + (["int M"] if two_d else [])
    shape = "M, N" if two_d else "N"
    arrays = " ".join(f"array({v}, {shape})" for v in inputs + ["y"]) + \
        (" array(s, M)" if "s[j]" in expr else "")
    head = "__global__ void" if dialect == "cuda" else "__kernel void"
    ids = {"cuda": ["blockIdx.x * blockDim.x + threadIdx.x", "blockIdx.y * blockDim.y + "
                    "threadIdx.y"], "opencl": ["get_global_id(0)", "get_global_id(1)"]}[dialect]
    lines = [f"#pragma naiveopt sizes({', '.join(f'{k}={v}' for k, v in sizes.items())}) "
             f"scalar(a, 0.75) {arrays}", f"{head} m0({', '.join(params)})", "{",
             f"    {ctype} i = {ids[0]};"] + ([f"    {ctype} j = {ids[1]};"] if two_d else [])
    cond = "i < N && j < M" if two_d else "i < N"
    if rng.random() < 0.4:
        out = "i >= N || j >= M" if two_d else "i >= N"
        lines += [f"    if ({out}) return;", f"    y[{at}] = {expr};"]
    else:
        lines += [f"    if ({cond})", f"        y[{at}] = {expr};"]
    text = "\n".join(lines + ["}", ""])
    if rng.random() < 0.3:          # drawn last: the other draws stay what they were
        text = _through_helpers(text, dialect, at, assigning=rng.random() < 0.5)
    return text


def _through_helpers(text: str, dialect: str, at: str, assigning: bool = False) -> str:
    """The map with its reads of x behind helpers, as image and tutorial code writes them
    (inline-helpers writes them out again): ``load(x, i)`` for ``x[i]``, the clamped
    neighbour through an if-return helper (``assigning``: one that assigns its parameter,
    ``if (v > n - 1) v = n - 1; return v;``), and in CUDA the x id through ``global_x()``."""
    device = "__device__ " if dialect == "cuda" else ""
    space = "__global " if dialect == "opencl" else ""
    clamp = ["        v = n - 1;", "    return v;"] if assigning else \
        ["        return n - 1;", "    return v;"]
    helpers = [f"{device}int clamp_hi(int v, int n)", "{", "    if (v > n - 1)", *clamp, "}",
               f"{device}float load({space}const float *p, int k)", "{",
               "    return p[k];", "}", ""]
    if dialect == "cuda":           # the id too, as CUDA tutorials write it
        helpers += ["__device__ int global_x()", "{",
                    "    return blockIdx.x * blockDim.x + threadIdx.x;", "}", ""]
        text = text.replace("= blockIdx.x * blockDim.x + threadIdx.x;", "= global_x();")
    text = text.replace("(i + 1 < N ? i + 1 : i)", "clamp_hi(i + 1, N)")
    text = text.replace(f"x[{at}]", f"load(x, {at})")
    return "\n".join(helpers) + text


#: How often a case is a coarsened kernel (:func:`coarsened_file`) instead.
COARSENED_SHARE = 0.06


def coarsened_file(rng: random.Random, dialect: str) -> str:
    """A 2-D kernel whose threads each cover several rows, as the NVIDIA blog's copy and
    transpose are written: ``y = blockIdx.y * TILE_Y + threadIdx.y`` and rows ``y + j`` for
    ``j`` from 0 to TILE_Y by ROWS, launched with ROWS-row blocks (the predefined pass reads
    the loop so: GPragma.coarsened). The index through a local or inline, the loop's iterator
    declared in it or C89-style with ``j = j + ROWS``, x by blockDim or a block constant, the
    output as the input's layout or transposed, guarded or covering the sizes exactly, the
    block in the pragma or not. Correct by construction: the rows of one thread are its own."""
    rows = rng.choice((2, 4, 8))
    tile = rows * rng.choice((1, 2, 4))
    bx = rng.choice((8, 16, 32))
    guarded = rng.random() < 0.7
    if guarded:
        sizes = {"H": rng.choice((1, 7, 31, 33, 64, 67, 96)),
                 "W": rng.choice((1, 5, 32, 37, 48, 65, 100))}
    else:                                    # the launch covers the sizes exactly
        sizes = {"H": tile * rng.randint(1, 3), "W": bx * rng.randint(1, 3)}
    cuda = dialect == "cuda"
    by_constant = rng.random() < 0.4
    if cuda:
        xid = f"blockIdx.x * {'TILE_X' if by_constant else 'blockDim.x'} + threadIdx.x"
        yid = "blockIdx.y * TILE_Y + threadIdx.y"
    else:
        xid = "get_group_id(0) * TILE_X + get_local_id(0)" if by_constant \
            else "get_global_id(0)"
        yid = "get_group_id(1) * TILE_Y + get_local_id(1)"
    inline = rng.random() < 0.25
    row = f"({yid} + j)" if inline else "(y + j)"
    transposed = rng.random() < 0.4
    at = f"{row} * W + x"
    value = rng.choice([f"in[{at}]", f"2.0f * in[{at}] + 1.0f", f"in[{at}] * in[{at}]"])
    out = f"out[x * H + {row}]" if transposed else f"out[{at}]"
    space = "__global " if dialect == "opencl" else ""
    defines = [f"#define TILE_Y {tile}", f"#define ROWS {rows}"] + \
        ([f"#define TILE_X {bx}"] if by_constant else [])
    pragma = [f"sizes({', '.join(f'{k}={v}' for k, v in sizes.items())})", "threads(W, H)",
              "array(in, H, W)", "array(out, W, H)" if transposed else "array(out, H, W)"]
    if rng.random() < 0.5 or not guarded:
        pragma.insert(2, f"block({bx}, {rows})")
    head = "__global__ void" if cuda else "__kernel void"
    lines = defines + ["#pragma naiveopt " + " ".join(pragma),
                       f"{head} c0({space}const float *in, {space}float *out, int H, int W)",
                       "{", f"    int x = {xid};"] + ([] if inline else [f"    int y = {yid};"])
    if rng.random() < 0.3:
        lines += ["    int j;", "    for (j = 0; j < TILE_Y; j = j + ROWS)"]
    else:
        lines += ["    for (int j = 0; j < TILE_Y; j += ROWS)"]
    store = f"{out} = {value};"
    if guarded:
        lines += [f"        if (x < W && {row} < H)", f"            {store}"]
    else:
        lines += [f"        {store}"]
    return "\n".join(lines + ["}", ""])


#: How often a case is a kernel with atomic updates (:func:`atomic_file`) instead.
ATOMIC_SHARE = 0.05


#: Share of atomic histograms whose bin is chosen by branches (:func:`atomic_file`).
BRANCH_BINS_SHARE = 0.3


def atomic_file(rng: random.Random, dialect: str) -> str:
    """A kernel that updates elements atomically, as histograms, sums into one value and
    row or column sums are written: a histogram of masked integers (``bins[v[i] & 63]``), a
    total, a maximum, row or column sums of a 2-D array, or a block's total gathered in a
    __shared__ scalar and added once per block; the element's address ``&A[i]``, ``A + i``
    or ``A``; CUDA's float atomicAdd where the dialect has one (OpenCL C 1.2 adds integers
    only). The passes keep such kernels as written: the case checks the front end, both
    translations (OpenCL's compare-and-swap helpers) and verification. Correct by
    construction: the updates commute (float sums within the check's tolerance)."""
    cuda = dialect == "cuda"
    form = rng.choice(["histogram", "total", "max", "rows", "cols", "block"])
    floating = cuda and form in ("total", "rows", "cols", "block") and rng.random() < 0.6
    elem = "float" if floating else "int"
    space = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    add = "atomicAdd" if cuda else rng.choice(["atomic_add", "atom_add"])

    def address(array: str, index: str) -> str:
        roll = rng.random()
        if index == "0" and roll < 0.4:
            return array
        if roll < 0.7 and index != "0":
            return f"{array} + ({index})" if " " in index else f"{array} + {index}"
        return f"&{array}[{index}]"

    n = rng.choice((1, 7, 100, 257, 1001))
    if form in ("rows", "cols"):
        h, w = rng.choice((1, 5, 33, 45)), rng.choice((1, 7, 32, 65))
        x = "blockIdx.x * blockDim.x + threadIdx.x" if cuda else "get_global_id(0)"
        y = "blockIdx.y * blockDim.y + threadIdx.y" if cuda else "get_global_id(1)"
        target = ("y", "r", "H") if form == "rows" else ("y", "c", "W")
        value = rng.choice(["A[r * W + c]", "2 * A[r * W + c]", "A[r * W + c] * A[r * W + c]"])
        lines = [f"#pragma naiveopt sizes(H={h}, W={w}) array(A, H, W) "
                 f"array(y, {target[2]})",
                 f"{head} a0({space}const {elem} *A, {space}{elem} *y, int H, int W)", "{",
                 f"    int c = {x};", f"    int r = {y};", "    if (r < H && c < W)",
                 f"        {add}({address('y', target[1])}, {value});", "}", ""]
        return "\n".join(lines)
    i = "blockIdx.x * blockDim.x + threadIdx.x" if cuda else "get_global_id(0)"
    arrays = {"histogram": "array(v, N) array(bins, 64)", "total": "array(v, N) array(out, 1)",
              "max": "array(v, N) array(out, 1)", "block": "array(v, N) array(out, 1)"}[form]
    out = "bins" if form == "histogram" else "out"
    lines = [f"#pragma naiveopt sizes(N={n}) {arrays}",
             f"{head} a0({space}const {elem} *v, {space}{'int' if form == 'histogram' else elem}"
             f" *{out}, int N)", "{", f"    int i = {i};"]
    if form == "histogram" and rng.random() < BRANCH_BINS_SHARE:
        # the bin chosen by branches, each a constant (an if chain or a switch), and no
        # array(bins, ...) in the pragma: its extent is the constants' range (verify/extents)
        lines[0] = lines[0].replace(" array(bins, 64)", "")
        if rng.random() < 0.5:
            chain = ["    int b;", "    if (v[i] < 2)", "        b = 0;", "    else if (v[i] < 4)",
                     "        b = 3;", "    else", "        b = 1;"]
        else:
            chain = ["    int b = 0;", "    switch (v[i] & 3) {", "    case 0:", "        b = 2;",
                     "        break;", "    case 1:", "    case 2:", "        b = 5;",
                     "        break;", "    default:", "        b = 1;", "    }"]
        lines += ["    if (i >= N)", "        return;"] + chain + \
            [f"    {add}({address('bins', 'b')}, 1);"]
    elif form == "histogram":
        bin_ = address("bins", "v[i] & 63")
        update = f"atomic_inc({bin_})" if not cuda and rng.random() < 0.5 else \
            f"{add}({bin_}, 1)"
        lines += ["    if (i < N)", f"        {update};"]
    elif form == "max":
        fn = "atomicMax" if cuda else "atomic_max"
        lines += ["    if (i < N)", f"        {fn}({address('out', '0')}, v[i]);"]
    elif form == "total":
        value = rng.choice(["v[i]", "v[i] * v[i]", "2 * v[i] + 1"])
        lines += ["    if (i < N)", f"        {add}({address('out', '0')}, {value});"]
    else:
        tid = "threadIdx.x" if cuda else "get_local_id(0)"
        shared = "__shared__" if cuda else "__local"
        sync = "__syncthreads();" if cuda else "barrier(CLK_LOCAL_MEM_FENCE);"
        lines += [f"    {shared} {elem} block_total;", f"    if ({tid} == 0)",
                  "        block_total = 0;", f"    {sync}", "    if (i < N)",
                  f"        {add}(&block_total, v[i]);", f"    {sync}", f"    if ({tid} == 0)",
                  f"        {add}({address('out', '0')}, block_total);"]
    return "\n".join(lines + ["}", ""])


#: How often a case keeps a block's values in dynamic shared memory
#: (:func:`dynamic_shared_file`) instead.
DYNAMIC_SHARED_SHARE = 0.04


def dynamic_shared_file(rng: random.Random, dialect: str) -> str:
    """A kernel whose shared scratch the launch sizes: CUDA's ``extern __shared__ T s[];``,
    OpenCL's ``__local T *s`` parameter (first, between or last): a block's tree sum
    (halving ``s >>= 1`` / ``s /= 2`` with sequential addressing, or doubling ``s *= 2``
    with interleaved addressing) with one result per block, a block-reversed copy, or a
    neighbour sum within the block. Threads past N load 0, so every element the kernel
    reads is written first. The passes keep such kernels as written: the case checks the
    front end, both translations and verification, which sizes the local memory from the
    accesses. Correct by construction: barriers separate the writes from the reads."""
    cuda = dialect == "cuda"
    form = rng.choice(["halving", "doubling", "reverse", "neighbour"])
    elem = rng.choice(["float", "float", "int"])
    g = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    tid, gid, bid, bdim = (("threadIdx.x", "blockIdx.x * blockDim.x + threadIdx.x",
                            "blockIdx.x", "blockDim.x") if cuda else
                           ("get_local_id(0)", "get_global_id(0)", "get_group_id(0)",
                            "get_local_size(0)"))
    sync = "__syncthreads();" if cuda else "barrier(CLK_LOCAL_MEM_FENCE);"
    name = rng.choice(["sdata", "tile", "scratch"])
    n = rng.choice((1, 7, 100, 257, 1001))
    zero = "0.0f" if elem == "float" else "0"
    params = [f"{g}const {elem} *v", f"{g}{elem} *out", "int N"]
    if not cuda:
        params.insert(rng.randrange(len(params) + 1), f"__local {elem} *{name}")
    lines = [f"#pragma naiveopt sizes(N={n}) threads(N)",
             f"{head} d0({', '.join(params)})", "{"]
    if cuda:
        lines.append(f"    extern __shared__ {elem} {name}[];")
    lines += [f"    int t = {tid};", f"    int i = {gid};",
              f"    {name}[t] = i < N ? v[i] : {zero};", f"    {sync}"]
    if form == "halving":
        step = rng.choice(["s >>= 1", "s /= 2"])
        lines += [f"    for (int s = {bdim} / 2; s > 0; {step}) {{", "        if (t < s)",
                  f"            {name}[t] += {name}[t + s];", f"        {sync}", "    }",
                  "    if (t == 0)", f"        out[{bid}] = {name}[0];"]
    elif form == "doubling":
        lines += [f"    for (int s = 1; s < {bdim}; s *= 2) {{",
                  "        if (t % (2 * s) == 0)",
                  f"            {name}[t] += {name}[t + s];", f"        {sync}", "    }",
                  "    if (t == 0)", f"        out[{bid}] = {name}[0];"]
    elif form == "reverse":
        lines += ["    if (i < N)", f"        out[i] = {name}[{bdim} - 1 - t];"]
    else:
        lines += ["    if (i < N)", f"        out[i] = {name}[t] + {name}[(t + 1) % {bdim}];"]
    return "\n".join(lines + ["}", ""])


#: How often a case branches by a switch (:func:`switch_file`) instead.
SWITCH_SHARE = 0.04


def switch_file(rng: random.Random, dialect: str) -> str:
    """A kernel that branches on a small integer by a switch: the key from an integer array,
    from a float's scaled value or through a local; grouped labels (``case 1: case 2:``),
    the default first, between or last, a braced case, a case that returns, a last case
    without break. The front end writes the if/else chain it means; for OpenCL input the
    naive program runs the switch itself, so verification checks that chain. Correct by
    construction: each thread writes its own element."""
    cuda = dialect == "cuda"
    g = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    gid = "blockIdx.x * blockDim.x + threadIdx.x" if cuda else "get_global_id(0)"
    n = rng.choice((1, 7, 100, 257))
    key = rng.choice(["k[i] & 3", "(int)(x[i] * 4.0f) & 3", "m"])
    groups = [["case 0:"], ["case 1:", "case 2:"] if rng.random() < 0.6 else ["case 1:"],
              ["default:"]]
    bodies = [["v = v * 2.0f;"], ["v = v + 1.0f;", "v = v * v;"], ["v = -v;"]]
    order = list(range(3))
    rng.shuffle(order)
    lines = [f"#pragma naiveopt sizes(N={n}) array(k, N) array(x, N) array(out, N)",
             f"{head} s0({g}const int *k, {g}const float *x, {g}float *out, int N)", "{",
             f"    int i = {gid};", "    if (i < N) {", "        float v = x[i];"]
    if key == "m":
        lines.append("        int m = k[i] & 3;")
    lines.append(f"        switch ({key}) {{")
    for position, g_ in enumerate(order):
        last = position == len(order) - 1
        stmts = list(bodies[g_])
        if rng.random() < 0.15 and g_ == 0:
            stmts = ["out[i] = 0.5f;", "return;"]
        elif not (last and rng.random() < 0.5):
            stmts.append("break;")
        lines += ["        " + label for label in groups[g_]]
        if rng.random() < 0.25:
            lines += ["        {"] + ["            " + st for st in stmts] + ["        }"]
        else:
            lines += ["            " + st for st in stmts]
    lines += ["        }", "        out[i] = v;", "    }", "}", ""]
    return "\n".join(lines)


#: How often a case reads through an index array (:func:`gather_file`) instead.
GATHER_SHARE = 0.05


def gather_file(rng: random.Random, dialect: str) -> str:
    """A kernel that reads through the values of an integer index array, as sparse and
    embedding code does: a gather (``x[idx[i]]``, through a local or a cast), an embedding
    row (``table[tok[i] * D + j]`` on a 2-D thread space), a CSR product (rows from
    ``rowptr[i]`` to ``rowptr[i + 1]``, the iterator declared C89-style or in the loop, the
    bounds through locals or not), an ELL product (``cols[rows * n + r]``). With the pragma's
    extents or, where a variant drops it, the ones verify/extents.py infers over index values
    in [0, FREE_VALUES). Correct by construction: each thread writes its own element."""
    cuda = dialect == "cuda"
    g = "__global " if not cuda else ""
    head = "__global__ void" if cuda else "__kernel void"
    x = "blockIdx.x * blockDim.x + threadIdx.x" if cuda else "get_global_id(0)"
    y = "blockIdx.y * blockDim.y + threadIdx.y" if cuda else "get_global_id(1)"
    form = rng.choice(["gather", "embed", "csr", "ell"])
    n, m = rng.choice((1, 7, 100, 257)), rng.choice((3, 33, 64, 90))
    if form == "gather":
        read = rng.choice(["idx[i]", "(int)idx[i]", "k"])
        value = rng.choice([f"x[{read}]", f"2.0f * x[{read}] + x[i % M]",
                            f"x[{read}] * x[{read}]"])
        lines = [f"#pragma naiveopt sizes(N={n}, M={m}) array(idx, N) array(x, M) "
                 "array(out, N)",
                 f"{head} g0({g}const int *idx, {g}const float *x, {g}float *out, int N, int M)",
                 "{", f"    int i = {x};", "    if (i < N) {"]
        lines += ["        int k = idx[i];"] if read == "k" else []
        lines += [f"        out[i] = {value};", "    }", "}", ""]
    elif form == "embed":
        d = rng.choice((1, 5, 32, 45))
        lines = [f"#pragma naiveopt sizes(N={n}, D={d}, V={m}) array(tok, N) array(table, V, D) "
                 "array(out, N, D)",
                 f"{head} g0({g}const int *tok, {g}const float *table, {g}float *out, int N, "
                 "int D)", "{", f"    int j = {x};", f"    int i = {y};",
                 "    if (i < N && j < D)",
                 "        out[i * D + j] = table[tok[i] * D + j] + 1.0f;", "}", ""]
    elif form == "csr":
        nnz = rng.choice((1, 50, 517))
        c89 = rng.random() < 0.4
        locals_ = rng.random() < 0.5
        lo, hi = ("start", "end") if locals_ else ("rowptr[i]", "rowptr[i + 1]")
        lines = [f"#pragma naiveopt sizes(N={n}, NNZ={nnz}, M={m}) array(rowptr, N + 1) "
                 "array(col, NNZ) array(val, NNZ) array(x, M) array(y, N)",
                 f"{head} g0({g}const int *rowptr, {g}const int *col, {g}const float *val, "
                 f"{g}const float *x, {g}float *y, int N)", "{", f"    int i = {x};",
                 "    if (i < N) {", "        float s = 0.0f;"]
        lines += ["        int start = rowptr[i];", "        int end = rowptr[i + 1];"] \
            if locals_ else []
        if c89:
            lines += ["        int j;", f"        for (j = {lo}; j < {hi}; j++)"]
        else:
            lines += [f"        for (int j = {lo}; j < {hi}; ++j)"]
        lines += ["            s += val[j] * x[col[j]];", "        y[i] = s;", "    }", "}", ""]
    else:
        w = rng.choice((1, 3, 8))
        lines = [f"#pragma naiveopt sizes(R={n}, W={w}, M={m}) array(cols, W, R) "
                 "array(vals, W, R) array(x, M) array(y, R)",
                 f"{head} g0(int R, int W, {g}const int *cols, {g}const float *vals, "
                 f"{g}const float *x, {g}float *y)", "{", f"    int r = {x};", "    if (r < R) {",
                 "        float s = 0.0f;", "        for (int n = 0; n < W; n++)",
                 "            s += vals[R * n + r] * x[cols[R * n + r]];", "        y[r] = s;",
                 "    }", "}", ""]
    return "\n".join(lines)


#: How often a case is a transposed write (:func:`transpose_file`) instead.
TRANSPOSE_SHARE = 0.08


def _global_ids(rng: random.Random, dialect: str) -> tuple[str, str]:
    """A 2-D kernel's global x and y ids, spelled as CUDA code spells them in either order."""
    if dialect != "cuda":
        return "get_global_id(0)", "get_global_id(1)"
    return (rng.choice(["blockIdx.x * blockDim.x + threadIdx.x",
                        "threadIdx.x + blockIdx.x * blockDim.x"]),
            rng.choice(["blockIdx.y * blockDim.y + threadIdx.y",
                        "threadIdx.y + blockDim.y * blockIdx.y"]))


def transpose_file(rng: random.Random, dialect: str) -> str:
    """A 2-D kernel whose last statement writes its value transposed (``out[x*H + y]``), as
    transposes, layout changes and column-major outputs are written: the value a read of the
    input at the thread's own element (scaled, summed with a second input, clamped to a
    neighbour, through a local), the ids in either order, the guard as an if or an early
    return, now and then an output pitch wider than H, x and y swapped before the write
    (``int t = x; x = y; y = t;``). coalesce-writes stages these through
    a tile, on 32-wide warps with several tile rows per thread where the model prefers it
    (at the 4096 it assumes for sizes no -D names). Correct by construction: each thread
    writes one element of its own."""
    sizes = {"H": rng.choice((1, 7, 31, 33, 45, 64, 67, 96)),
             "W": rng.choice((1, 5, 32, 37, 48, 65, 100))}
    pitch = rng.random() < 0.25
    ld = "P" if pitch else "H"
    if pitch:
        sizes["P"] = sizes["H"] + rng.choice((1, 3, 8))
    xid, yid = _global_ids(rng, dialect)
    two = rng.random() < 0.3
    at = "y * W + x"
    value = rng.choice([f"in[{at}]", f"2.0f * in[{at}] + 1.0f",
                        f"in[y * W + (x + 1 < W ? x + 1 : x)]",
                        f"in[{at}] - in[y * W + (x > 0 ? x - 1 : 0)]"])
    if two:
        value += f" + in2[{at}]"
    body = [f"out[x * {ld} + y] = {value};"]
    if rng.random() < 0.3:
        body = [f"float v = {value};", f"out[x * {ld} + y] = v;"]
    space = "__global " if dialect == "opencl" else ""
    restrict = rng.choice(["", "", " __restrict__"]) if dialect == "cuda" else ""
    params = [f"{space}const float *{restrict} in"] + \
        ([f"{space}const float *{restrict} in2"] if two else []) + \
        [f"{space}float *{restrict} out", "int H", "int W"] + (["int P"] if pitch else [])
    arrays = ["array(in, H, W)"] + (["array(in2, H, W)"] if two else []) + \
        [f"array(out, W, {ld})"]
    head = "__global__ void" if dialect == "cuda" else "__kernel void"
    lines = [f"#pragma naiveopt sizes({', '.join(f'{k}={v}' for k, v in sizes.items())}) "
             + " ".join(arrays), f"{head} t0({', '.join(params)})", "{"]
    ids = [f"    int x = {xid};", f"    int y = {yid};"]
    if rng.random() < 0.5:
        ids.reverse()
    lines += ids
    if rng.random() < 0.4:
        if len(body) == 2 and rng.random() < 0.4:
            # x and y swapped for the write, as transposes reuse them (split-locals)
            body = [body[0], "int t = x;", "x = y;", "y = t;", f"out[y * {ld} + x] = v;"]
        lines += ["    if (x >= W || y >= H)", "        return;"] + ["    " + b for b in body]
    else:
        lines += ["    if (x < W && y < H) {"] + ["        " + b for b in body] + ["    }"]
    return "\n".join(lines + ["}", ""])


LAUNCH_EXTENT_SHARE = 0.06


def launch_extent_file(rng: random.Random, dialect: str) -> str:
    """An unguarded 2-D kernel that reads its row width from its launch, as CUDA by Example
    (``int offset = x + y * blockDim.x * gridDim.x;``) and OpenCL tutorials
    (``in[y * get_global_size(0) + x]``) do: the width in a local or inline, the product in
    either order or through a cast, the write at the thread's own element (once, or as four
    channels ``out[offset * 4 + c]``), or transposed (``out[x * height + y]``, the height read
    from the launch too). Now and then the width is ``gridDim.x * BX`` with BX the block's
    literal width, which the passes cannot read as the thread space's extent (the kernel keeps
    its launch). The pragma gives the thread space (the launch covers it exactly, as the
    kernel needs), or only the arrays and sizes (inferred). Correct by construction: each
    thread writes elements of its own."""
    bx, by = rng.choice([(16, 16), (32, 8), (8, 8), (32, 4), (16, 4)])
    sizes = {"W": bx * rng.randint(1, 3), "H": by * rng.randint(1, 3)}
    cuda = dialect == "cuda"

    def launch(axis: int) -> str:
        a = "xy"[axis]
        if not cuda:
            return rng.choice([f"get_global_size({axis})",
                               f"(int)get_global_size({axis})",
                               f"get_num_groups({axis}) * get_local_size({axis})"])
        if axis == 0 and rng.random() < 0.15:
            return f"gridDim.x * {bx}"            # the block's width as a literal: kept launch
        return rng.choice([f"blockDim.{a} * gridDim.{a}", f"gridDim.{a} * blockDim.{a}",
                           f"(int)(blockDim.{a} * gridDim.{a})"])

    xid, yid = _global_ids(rng, dialect)
    width = launch(0)
    body = [f"    int x = {xid};", f"    int y = {yid};"]
    inline = rng.random() < 0.3
    if inline:
        offset = f"y * {width} + x" if "(" in width or rng.random() < 0.5 else \
            f"x + y * {width}"
    else:
        body.append(f"    int width = {width};")
        offset = "x + y * width"
    body.append(f"    int offset = {offset};")
    value = rng.choice(["in[offset]", "2.0f * in[offset] + 1.0f",
                        "in[offset] * in[offset] - 0.5f"])
    form = rng.choice(["map", "channels", "transpose"])
    arrays = ["array(in, H, W)"]
    if form == "map":
        body.append(f"    out[offset] = {value};")
        arrays.append("array(out, H, W)")
    elif form == "channels":
        body += [f"    float v = {value};"] + \
            [f"    out[offset * 4 + {c}] = v * {c + 1}.0f;" for c in range(4)]
        arrays.append("array(out, H, 4 * W)")
    else:
        body += [f"    int height = {launch(1)};", f"    out[x * height + y] = {value};"]
        arrays.append("array(out, W, H)")
    space = "__global " if not cuda else ""
    head = "__global__ void" if cuda else "__kernel void"
    pragma = f"#pragma naiveopt sizes(W={sizes['W']}, H={sizes['H']}) " + \
        (f"threads(W, H) block({bx}, {by}) " if rng.random() < 0.6 else f"block({bx}, {by}) ") \
        + " ".join(arrays)
    return "\n".join([pragma, f"{head} k0({space}const float *in, {space}float *out)", "{"]
                     + body + ["}", ""])


#: Share of cases with a compare-and-swap between partner threads (bitonic sort's step).
PARTNER_SHARE = 0.02


def partner_file(rng: random.Random, dialect: str) -> str:
    """Bitonic sort's step: thread i compares its element with its partner's, ``i ^ j``, and
    the lower of the pair swaps them (ascending or descending by ``i & k``): a guard whose
    bound moves with the thread (``ixj > i``), which is no thread space. The pragma gives the
    launch (N threads, N a power of two, so every partner is in the array). Correct by
    construction: each pair is handled by one thread."""
    cuda = dialect == "cuda"
    n = rng.choice((64, 128, 256, 512))
    j = rng.choice([p for p in (1, 2, 4, 8, 16, 32) if p < n])
    k = j * rng.choice((2, 4))
    gid = "threadIdx.x + blockDim.x * blockIdx.x" if cuda else "get_global_id(0)"
    kind = rng.choice(["unsigned int", "int"])
    partner = rng.choice(["ixj > i", "i < ixj"])
    space = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    swap = "{ float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }"
    return "\n".join([
        f"#pragma naiveopt sizes(N={n}, j={j}, k={k}) threads(N) array(a, N)",
        f"{head} k0({space}float *a, int j, int k)", "{",
        f"    {kind} i = {gid};", f"    {kind} ixj = i ^ j;", f"    if ({partner}) {{",
        "        if ((i & k) == 0) {", f"            if (a[i] > a[ixj]) {swap}",
        "        } else {", f"            if (a[i] < a[ixj]) {swap}", "        }", "    }",
        "}", ""])


#: Share of cases that are one step of an iterative solver (:func:`step_file`).
STEP_SHARE = 0.04


def step_file(rng: random.Random, dialect: str) -> str:
    """One launch of an iterative method, no pragma: LU's elimination step ``k`` (the ids
    bounded from below by it, ``i > k && j > k``) or a red-black Gauss-Seidel sweep (``(i +
    j) % 2 == color``, the colour a parameter). Inference must give the step a value inside
    the thread space and the colour one below the modulus, or no thread works and the check
    proves nothing (verify/infer._condition_role)."""
    cuda = dialect == "cuda"
    space = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    ids = [("blockIdx.x * blockDim.x + threadIdx.x", "blockIdx.y * blockDim.y + threadIdx.y")
           if cuda else ("get_global_id(0)", "get_global_id(1)")][0]
    if rng.random() < 0.5:
        lower = rng.choice(["(i > k) && (j > k)", "k < i && k < j", "i >= k + 1 && j > k"])
        return "\n".join([
            f"{head} lu_step({space}float *A, int n, int k)", "{",
            f"    int j = {ids[0]};", f"    int i = {ids[1]};",
            f"    if ({lower} && i < n && j < n)",
            "        A[i * n + j] -= A[i * n + k] * A[k * n + j];", "}", ""])
    test = rng.choice(["(i + j) % 2 == color", "color == (i + j) % 2", "(i + j + color) % 2 == 0"])
    return "\n".join([
        f"{head} rb_sweep({space}float *u, {space}const float *f, int nx, int ny, float h2, "
        "int color)", "{",
        f"    int i = {ids[0]};", f"    int j = {ids[1]};",
        "    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {", f"        if ({test})",
        "            u[j * nx + i] = 0.25f * (u[j * nx + i - 1] + u[j * nx + i + 1] + "
        "u[(j - 1) * nx + i] + u[(j + 1) * nx + i] + h2 * f[j * nx + i]);", "    }", "}", ""])


#: Share of cases that are a strided, padded, dilated 1-D convolution (:func:`window_file`).
WINDOW_SHARE = 0.04


def window_file(rng: random.Random, dialect: str) -> str:
    """A 1-D convolution as ML code writes one, no pragma: one thread per element of a
    flattened (batch,) channel, position output, a window of K taps at ``l * stride - pad + k
    * dilation`` (zero padding tested inside the taps). Inference must give the window's
    sizes small values (verify/infer._windows) and the outer factors of a three-factor
    thread space small ones, or the naive kernel runs past the arrays verification makes."""
    cuda = dialect == "cuda"
    space = "" if cuda else "__global "
    head = "__global__ void" if cuda else "__kernel void"
    gid = "blockIdx.x * blockDim.x + threadIdx.x" if cuda else "get_global_id(0)"
    batched = rng.random() < 0.5
    dilation = rng.random() < 0.5
    total = "N * C * LO" if batched else "C * LO"
    tap = "k * dilation" if dilation else "k"
    params = "int N, int C, int L, int LO, int K, int stride, int pad" + \
        (", int dilation" if dilation else "")
    guard = rng.choice([f"if (idx >= {total}) return;", f"if (idx < {total}) {{"])
    body = [f"    int l = idx % LO;", "    int c = (idx / LO) % C;" if batched else
            "    int c = idx / LO;"] + (["    int n = idx / (LO * C);"] if batched else []) + [
        "    float sum = 0.0f;", "    for (int k = 0; k < K; k++) {",
        f"        int pos = l * stride - pad + {tap};",
        "        if (pos >= 0 && pos < L)",
        "            sum += x[(" + ("n * C + c" if batched else "c") + ") * L + pos] * "
        "w[c * K + k];", "    }", "    y[idx] = sum;"]
    closing = ["}"] if guard.endswith("{") else []
    return "\n".join([
        f"{head} conv1d({space}const float *x, {space}const float *w, {space}float *y, "
        f"{params})", "{", f"    int idx = {gid};", f"    {guard}"] + body +
        [f"    {c}" for c in closing] + ["}", ""])


#: Share of CUDA cases whose kernel does its vector arithmetic with helper_math.h.
HELPER_MATH_SHARE = 0.05


def helper_math_file(rng: random.Random) -> str:
    """A CUDA kernel written with the CUDA samples' helper_math.h, as particle, n-body and
    shading code is: float3 or float4 arrays, the header's operators (``a + b * s``, ``-v``,
    ``v *= s``, ``p[i] += v``), its functions (dot, length, normalize, cross, lerp, clamp,
    fminf/fmaxf, floorf, fracf) and conversions (``make_float3(float4)``, ``make_float4(v,
    w)``, ``make_float3(s)``); now and then a loop over all elements (n-body). Correct by
    construction: each thread writes its own element; divisions by a length add a margin."""
    four = rng.random() < 0.4
    elem = "float4" if four else "float3"

    def value(p: str) -> str:
        return f"make_float3({p})" if four else p

    terms = [
        "a + b * s", "a - b", "-a + 2.0f * b", "a * b + make_float3(s)", "(a + b) / 2.0f",
        "lerp(a, b, 0.25f)", "clamp(a, -0.5f, 0.5f)", "fminf(a, b) + fmaxf(a, b)",
        "cross(a, b)", "normalize(a + make_float3(2.0f))", "a * dot(a, b)",
        "make_float3(length(a), dot(a, b), s)", "floorf(a * 4.0f) + fracf(b)",
    ]
    chosen = rng.sample(terms, rng.randint(1, 3))
    body = [f"        float3 a = {value('p[i]')};", f"        float3 b = {value('q[i]')};",
            "        float3 r = " + " + ".join(f"({t})" for t in chosen) + ";"]
    if rng.random() < 0.3:
        # (the force, not ``acc``: element_variant wraps an ``acc += x`` in a scalar sqrtf)
        body += ["        float3 f = make_float3(0.0f);",
                 "        for (int j = 0; j < n; j++) {",
                 f"            float3 d = {value('q[j]')} - a;",
                 "            float inv = rsqrtf(dot(d, d) + 0.01f);",
                 "            f += d * (inv * inv * inv);", "        }",
                 "        r += f * 0.001f;"]
    if rng.random() < 0.4:
        body.append(rng.choice(["        r *= s;", "        r -= b;", "        r /= 4.0f;"]))
    store = "make_float4(r, p[i].w)" if four else "r"
    body.append(f"        out[i] {rng.choice(['=', '+='])} {store};")
    guard = rng.choice(["if (i < n) {", "if (i >= n) return;\n    {"])
    lines = ['#include "helper_math.h"', "#pragma naiveopt sizes(n=" +
             str(rng.choice((33, 100, 257, 500))) + ")",
             f"__global__ void k0(const {elem} *p, const {elem} *q, {elem} *out, float s, int n)",
             "{", "    int i = blockIdx.x * blockDim.x + threadIdx.x;"]
    if guard.startswith("if (i >= n)"):
        lines += ["    if (i >= n) return;"] + [b[4:] for b in body]
    else:
        lines += ["    if (i < n) {"] + body + ["    }"]
    return "\n".join(lines + ["}", ""])


#: Share of cases with a 1-D kernel over a flattened 2-D space (a stream of their own).
FLATTENED_SHARE = 0.05


def flattened_file(rng: random.Random, dialect: str) -> str:
    """A 1-D kernel over a flattened matrix, as ML and tutorial code writes one thread per
    element: ``row = i / N; col = i % N`` (or ``col = i - row * N``) under ``if (i < M * N)``
    (an early return, a local ``total``, the product in either order, a grid-stride loop now
    and then) or under a guard on the row and column (``if (row < M && col < N)``, ``if (row
    >= M) return;``), the id in a local (int, or size_t with the product widened). A matrix product
    (the delinearize pass opens the tiling passes to it), a transpose (coalesce-writes), a
    map with a per-column bias, or a batched map over (B, M, N). Correct by construction:
    each thread writes one element of its own."""
    cuda = dialect == "cuda"
    kind = rng.choice(["matmul", "matmul", "transpose", "map", "batched"])
    sizes = {"M": rng.choice((1, 5, 17, 33, 40, 64)), "N": rng.choice((3, 16, 31, 33, 48, 65)),
             "K": rng.choice((1, 7, 16, 33))}
    if kind == "batched":
        sizes["B"] = rng.choice((1, 2, 3))
    wide = cuda and rng.random() < 0.2
    kind_t = "size_t" if wide else "int"
    if cuda:
        gid = rng.choice(["blockIdx.x * blockDim.x + threadIdx.x",
                          "threadIdx.x + blockIdx.x * blockDim.x"])
        if wide:
            gid = "(size_t)blockIdx.x * blockDim.x + threadIdx.x"
    else:
        gid = rng.choice(["get_global_id(0)",
                          "get_group_id(0) * get_local_size(0) + get_local_id(0)"])
    i = rng.choice(["i", "idx", "gid", "tid"])
    extent = {"batched": rng.choice(["B * M * N", "M * N * B"])}.get(
        kind, rng.choice(["M * N", "N * M"]))
    col = f"{i} % N" if rng.random() < 0.75 else f"{i} - row * N"
    inner = [f"    {kind_t} row = {i} / N;", f"    {kind_t} col = {col};"]
    space = "" if cuda else "__global "
    if kind == "matmul":
        params = f"{space}const float *A, {space}const float *Bm, {space}float *C"
        inner += ["    float sum = 0.0f;", "    for (int k = 0; k < K; k++)",
                  "        sum += A[row * K + k] * Bm[k * N + col];",
                  rng.choice([f"    C[{i}] = sum;", "    C[row * N + col] = sum;"])]
        arrays = ["array(A, M, K)", "array(Bm, K, N)", "array(C, M, N)"]
    elif kind == "transpose":
        params = f"{space}const float *in, {space}float *out"
        inner += [f"    out[col * M + row] = {rng.choice([f'in[{i}]', 'in[row * N + col]'])};"]
        arrays = ["array(in, M, N)", "array(out, N, M)"]
    elif kind == "map":
        params = f"{space}const float *in, {space}const float *bias, {space}float *out"
        inner += [f"    out[{i}] = 2.0f * in[{i}] + bias[col];"]
        arrays = ["array(in, M, N)", "array(bias, N)", "array(out, M, N)"]
    else:
        params = f"{space}const float *x, {space}const float *w, {space}float *y"
        inner = [f"    {kind_t} b = {i} / (M * N);", f"    {kind_t} m = ({i} / N) % M;",
                 f"    {kind_t} n = {i} % N;",
                 f"    y[{i}] = 2.0f * x[(b * M + m) * N + n] + w[m * N + n];"]
        arrays = ["array(x, B, M, N)", "array(w, M, N)", "array(y, B, M, N)"]
    params += ", int M, int N" + (", int K" if kind == "matmul" else "") + \
        (", int B" if kind == "batched" else "")
    form = rng.choice(["if", "if", "return", "total", "stride", "rows"])
    if form == "rows" and kind == "batched":
        form = "if"
    body = []
    if form == "stride":
        step = "blockDim.x * gridDim.x" if cuda else "get_global_size(0)"
        body += [f"  for ({kind_t} {i} = {gid}; {i} < {extent}; {i} += {step}) {{"] + inner + \
            ["  }"]
    else:
        body.append(f"  {kind_t} {i} = {gid};")
        bound = extent
        if form == "total":
            body.append(f"  {kind_t} total = {extent};")
            bound = "total"
        if form == "rows":
            # the guard on the row and column the kernel split the id into
            test = rng.choice(["row < M && col < N", "col < N && row < M", "row < M"])
            body += inner[:2]
            if rng.random() < 0.5:
                body += [f"  if ({test}) {{"] + inner[2:] + ["  }"]
            else:
                negated = test.replace("<", ">=").replace("&&", "||")
                body += [f"  if ({negated}) return;"] + inner[2:]
        elif form == "return":
            # now and then the work in a block of its own after the early return
            body += [f"  if ({i} >= {bound}) return;"] + (
                ["  {"] + inner + ["  }"] if rng.random() < 0.3 else inner)
        else:
            body += [f"  if ({i} < {bound}) {{"] + inner + ["  }"]
    head = "__global__ void" if cuda else "__kernel void"
    pragma = f"#pragma naiveopt sizes({', '.join(f'{k}={v}' for k, v in sizes.items())})" + \
        ("" if rng.random() < 0.4 else " " + " ".join(arrays))
    return "\n".join([pragma, f"{head} k0({params})", "{"] + body + ["}", ""])


#: The whole-file generators, in the order a case draws them: (stream, share, generator,
#: whether its kernels bound their own thread space, CUDA only).
WHOLE_FILES = (
    ("geometry", GEOMETRY_SHARE, geometry_file, False, False),
    ("grid-stride", GRID_STRIDE_SHARE, grid_stride_file, False, False),
    ("map", MAP_SHARE, map_file, True, False),
    ("transpose", TRANSPOSE_SHARE, transpose_file, True, False),
    ("launch-extent", LAUNCH_EXTENT_SHARE, launch_extent_file, False, False),
    ("flattened", FLATTENED_SHARE, flattened_file, True, False),
    ("partner", PARTNER_SHARE, partner_file, False, False),
    ("step", STEP_SHARE, step_file, True, False),
    ("window", WINDOW_SHARE, window_file, True, False),
    ("helper-math", HELPER_MATH_SHARE, lambda rng, dialect: helper_math_file(rng), True, True),
)


def generate_case(seed: int, index: int, pass_names: list[str], memories: tuple[str, ...]
                  ) -> Case:
    """Case ``index`` of the campaign seeded ``seed``: a random file and random options
    (dialect, target, arch, disabled passes among ``pass_names``, merge factors, memory)."""
    rng = random.Random(f"{seed}:{index}")
    dialect = rng.choice(["cuda", "opencl"])
    generator = KernelGenerator(rng, dialect, random.Random(f"{seed}:{index}:extra"))
    generator.forms = random.Random(f"{seed}:{index}:forms")
    generator.spell = random.Random(f"{seed}:{index}:spell")
    generator.taps = random.Random(f"{seed}:{index}:taps")
    generator.clamp_ifs = random.Random(f"{seed}:{index}:clamp-ifs")
    generator.min_bounds = random.Random(f"{seed}:{index}:min-bound")
    generator.block_constants = random.Random(f"{seed}:{index}:block-constant")
    generator.open_threads = random.Random(f"{seed}:{index}:open-threads")
    generator.table_names = random.Random(f"{seed}:{index}:table-names")
    generator.helper_template = dialect == "cuda" and \
        random.Random(f"{seed}:{index}:helper-template").random() < HELPER_TEMPLATE_SHARE
    source = generator.file()
    guarded = generator.guarded           # its kernels bound their own thread space
    # whole-file generators, each drawn from a stream of its own (the cases above keep their
    # draws); a later one that fires replaces an earlier one's file
    for stream, share, make, bounded, cuda_only in WHOLE_FILES:
        draw = random.Random(f"{seed}:{index}:{stream}")
        if draw.random() < share and (dialect == "cuda" or not cuda_only):
            source, guarded = make(draw, dialect), bounded
    coarsening = random.Random(f"{seed}:{index}:coarsened")
    if coarsening.random() < COARSENED_SHARE:
        source = coarsened_file(coarsening, dialect)
        guarded = False             # its pragma says the thread space: keep it
    reduction = random.Random(f"{seed}:{index}:reduction")
    reductions = reduction.random() < REDUCTION_SHARE
    if reductions:
        source = reduction_file(reduction, dialect)
        guarded = "threads(N)" not in source
        sizes = sized(source, rng, always=True)   # before a variant drops the pragma
    switching = random.Random(f"{seed}:{index}:switch")
    if switching.random() < SWITCH_SHARE:
        source, guarded, reductions = switch_file(switching, dialect), True, False
    gathering = random.Random(f"{seed}:{index}:gather")
    if gathering.random() < GATHER_SHARE:
        source, guarded, reductions = gather_file(gathering, dialect), True, False
    atomic = random.Random(f"{seed}:{index}:atomic")
    if atomic.random() < ATOMIC_SHARE:
        source, guarded, reductions = atomic_file(atomic, dialect), True, False
    dynamic = random.Random(f"{seed}:{index}:dynamic-shared")
    if dynamic.random() < DYNAMIC_SHARED_SHARE:
        source, guarded, reductions = dynamic_shared_file(dynamic, dialect), False, False
    source = element_variant(source, random.Random(f"{seed}:{index}:elements"), dialect)
    source = pointer_variant(source, random.Random(f"{seed}:{index}:pointers"), dialect)
    source = vector3_variant(source, random.Random(f"{seed}:{index}:vector3"), dialect)
    source = component_store_variant(source, random.Random(f"{seed}:{index}:component-store"),
                                     dialect)
    source = complex_variant(source, random.Random(f"{seed}:{index}:complex"), dialect)
    source = vload_variant(source, random.Random(f"{seed}:{index}:vload"), dialect)
    source = spelling_variant(source, random.Random(f"{seed}:{index}:typedefs"), dialect)
    source = unsigned_size_variant(source, random.Random(f"{seed}:{index}:unsigned-sizes"),
                                   dialect)
    source = constant_variant(source, random.Random(f"{seed}:{index}:constants"), dialect)
    source = cast_variant(source, random.Random(f"{seed}:{index}:casts"), dialect)
    source = local_table_variant(source, random.Random(f"{seed}:{index}:local-table"))
    source = position_variant(source, random.Random(f"{seed}:{index}:position"), dialect)
    source = reference_variant(source, random.Random(f"{seed}:{index}:references"), dialect)
    source = mad24_variant(source, random.Random(f"{seed}:{index}:mad24"), dialect)
    source = trailing_return_variant(source, random.Random(f"{seed}:{index}:trailing-return"))
    source = interior_else_variant(source, random.Random(f"{seed}:{index}:interior-else"))
    disabled = tuple(p for p in pass_names if rng.random() < 0.2)
    merge = (rng.choice([1, 2, 4]), rng.choice([1, 2, 4])) if rng.random() < 0.15 else None
    memory = rng.choice(memories) if rng.random() < 0.2 else "global"
    # register-tiled variants win only at large sizes: a share of cases forces one (its own
    # stream, so the other cases keep their draws)
    tiles = random.Random(f"{seed}:{index}:register-tile")
    register_tile = tiles.choice([(4, 4), (8, 4), (4, 8), (8, 8)]) \
        if merge is None and tiles.random() < REGISTER_TILE_SHARE else None
    # a stencil's register-blocked window (its copies fused, taps side by side outside the
    # flags) in a share of the cases that draw one (a stream of their own)
    blocking = random.Random(f"{seed}:{index}:register-block")
    if generator.stencils and merge is None and register_tile is None and \
            blocking.random() < REGISTER_BLOCK_SHARE:
        register_tile = blocking.choice([(4, 4), (4, 8), (8, 4)])
    # an asynchronous tile pipeline of a forced depth (the model picks one only where it
    # estimates a gain) in a share of the cases (a stream of their own)
    piping = random.Random(f"{seed}:{index}:pipeline")
    stages = piping.choice([2, 3, 4]) if piping.random() < PIPELINE_SHARE else None
    # a neighbourhood is staged wherever legal (the cost model keeps small filters as
    # written on sm_90, where L1 holds their taps): the campaign checks the staging
    cost_model = "unlimited" if generator.stencils else "default"
    source = unverifiable(source, seed, index, guarded)
    source = host_variant(source, random.Random(f"{seed}:{index}:host"), dialect)
    source = template_variant(source, random.Random(f"{seed}:{index}:template"), dialect)
    source = bounds_variant(source, random.Random(f"{seed}:{index}:launch-bounds"), dialect)
    source = struct_variant(source, random.Random(f"{seed}:{index}:struct"), dialect)
    source = aos_variant(source, random.Random(f"{seed}:{index}:aos"), dialect)
    source = extern_c_variant(source, random.Random(f"{seed}:{index}:extern-c"), dialect)
    source = work_group_variant(source, random.Random(f"{seed}:{index}:work-group"), dialect)
    source = host_constant_variant(source, random.Random(f"{seed}:{index}:host-constant"),
                                   dialect)
    source = array_param_variant(source, random.Random(f"{seed}:{index}:array-param"), dialect)
    source = sincos_variant(source, random.Random(f"{seed}:{index}:sincos"), dialect)
    source = unreadable_variant(source, random.Random(f"{seed}:{index}:unreadable"), dialect)
    target, arch = rng.choice(["cuda", "opencl"]), rng.choice(["sm_90", "sm_80", "gfx90a"])
    if stages:              # a pipeline is built only for CUDA output on sm_80 and later
        target, arch = "cuda", piping.choice(["sm_90", "sm_80"])
    return Case(seed, index, source, dialect, target, arch,
                PipelineOptions(disable=disabled, merge=merge, memory=memory,
                                register_tile=register_tile, pipeline_stages=stages,
                                cost_model=cost_model),
                sizes if reductions else sized(source, random.Random(f"{seed}:{index}:sizes")))


#: Share of cases that name their sizes with -D (the sizes of interest of the cost model).
SIZES_SHARE = 0.3


def sized(source: str, rng: random.Random, always: bool = False) -> dict[str, str]:
    """-D of the first ``sizes(...)`` clause of the file's pragma, for a share of cases (all
    with ``always``)."""
    found = re.search(r"#pragma naiveopt[^\n]*?\bsizes\(([^)]*)\)", source)
    if found is None or (rng.random() >= SIZES_SHARE and not always):
        return {}
    pairs = (p.split("=") for p in found.group(1).split(","))
    # (a struct's member, ``p.n = 65``, is no -D name, nor a variable the host sets)
    host_set = set(re.findall(r"^__constant__ int (\w+);", source, re.M))
    return {k.strip(): v.strip() for k, v in pairs if "." not in k and k.strip() not in host_set}


# ---------------------------------------------------------------- host code with launches
#: Share of CUDA cases that get host code launching their kernels (a whole program's
#: launches, which a CUDA output rewrites: frontend/launch_sites.py), and share of those whose
#: kernel is also used other than in a launch (its address taken), which keeps it naive.
HOST_SHARE = 0.2
HOST_REFERENCE_SHARE = 0.2
_KERNEL_HEAD = re.compile(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)")


def host_variant(source: str, rng: random.Random, dialect: str) -> str:
    """``source``, or for a share of CUDA cases ``source`` with a host function per kernel
    that takes the kernel's parameters and launches it, as a program's host code does
    (``run_k0(...) { dim3 block(16, 16), grid(..); k0<<<grid, block>>>(...); }``, with a
    stream or a dynamic shared size now and then); for a share of those a kernel's address
    is also taken (``(void *)k0``, as for cudaLaunchKernel). campaign.host_launch_contract
    checks what the output made of them."""
    if dialect != "cuda" or rng.random() >= HOST_SHARE:
        return source
    parts = [source.rstrip("\n"), ""]
    for name, params in _KERNEL_HEAD.findall(source):
        names = [re.findall(r"\w+", p)[-1] for p in params.split(",") if p.strip()]
        config = rng.choice(["grid, block", "grid, block, 0, stream", "grid, block, 64",
                             "dim3(7, 5), dim3(16, 16)", "35, 256"])
        stream = ", cudaStream_t stream" if "stream" in config else ""
        body = ["    dim3 block(16, 16);", "    dim3 grid(7, 5);"] if "grid" in config else []
        if rng.random() < HOST_REFERENCE_SHARE:
            body.append(f"    void *entry = (void *){name};")
            body.append("    (void)entry;")
        parts += [f"void run_{name}({params}{stream})", "{", *body,
                  f"    {name}<<<{config}>>>({', '.join(names)});", "}", ""]
    return "\n".join(parts)


#: Share of cases whose pragma loses its sizes(...) but keeps its shapes (the sizes are then
#: inferred: verify/infer.py), and share of guarded cases that lose the whole pragma line:
#: naiveopt must verify both without annotations (an unguarded kernel keeps its pragma: its
#: thread space is the launch's, which only the pragma states).
UNVERIFIABLE_SHARE = 0.04
UNANNOTATED_SHARE = 0.6


def unverifiable(source: str, seed: int, index: int, guarded: bool = False) -> str:
    """``source``, or, for a share of cases, ``source`` without its pragma line or the sizes
    of it. Drawn from a stream of its own so that every other choice of the case stays as it
    was."""
    draw = random.Random(f"{seed}:{index}:unverifiable").random()
    if draw < UNVERIFIABLE_SHARE:
        return re.sub(r"^(#pragma naiveopt .*?)sizes\([^)]*\) ?", r"\1", source, count=1,
                      flags=re.M)
    if draw < UNVERIFIABLE_SHARE + UNANNOTATED_SHARE and (guarded or _guarded(source)) and \
            not _NEXT_OR_SELF.search(source):
        return re.sub(r"^#pragma naiveopt .*\n", "", source, flags=re.M)
    return source


#: A neighbour index ``i + 1 < N ? i + 1 : i``: no min or max (it picks i, not N - 1, at the
#: border), so array-extent inference cannot bound it, and such a file keeps its pragma.
_NEXT_OR_SELF = re.compile(r"\? (\w+) \+ 1 : \1\)")


def _guarded(source: str) -> bool:
    """Whether a generated file's pragma leaves the thread space to the kernels (the
    generator names threads(...) wherever a kernel has no guard that bounds it)."""
    pragma = re.search(r"^#pragma naiveopt .*$", source, re.M)
    return pragma is not None and "threads(" not in pragma.group(0)


# ---------------------------------------------------------------- element types and math
#: Float literals the generator writes, and their unsigned stand-ins.
_UNSIGNED_LITERALS = {"0.0f": "0u", "0.25f": "1u", "2.0f": "2u", "1.5f": "3u"}


def element_variant(source: str, rng: random.Random, dialect: str) -> str:
    """The generated file with another element type in a share of cases (its own random
    stream, so the kernels themselves are drawn as before): ``double`` everywhere, or
    ``unsigned`` (whose wrap-around is defined, so the arithmetic stays correct by
    construction); and, for floating types, a log or square root of an array expression,
    which is NaN on negative inputs: verification must then check on a range where the naive
    kernel is finite, or say it could not."""
    roll = rng.random()
    if roll < 0.15:
        source = _to_double(source)
        floating = "double"
    elif roll < 0.23 and _FLOAT_LITERAL.search(_to_unsigned(source, check=False)) is None:
        # a file whose float constants the rewrite cannot map (coefficient tables, literals
        # spelled as hex floats or exponents) stays float
        return _to_unsigned(source)
    else:
        floating = "float"
    if rng.random() < 0.15:
        source = _nan_prone_math(source, rng, dialect, floating)
    return source


def _to_double(source: str) -> str:
    source = re.sub(r"\bfloat\b", "double", source)
    # every float literal becomes double, whatever its spelling (0x1.8p+0f, 2.F, 25E-2F):
    # OpenCL's fmax(double, float) is ambiguous
    source = re.sub(r"(?<![\w.])((?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|"
                    r"0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][+-]?\d+)[fF](?![\w.])", r"\1", source)
    return source.replace("fmaxf(", "fmax(")


#: Any floating literal: 1.5f, .25f, 25E-2F, 2.5e-1, 0x1.8p-3 (not inside an identifier).
_FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+[eE][+-]?\d+|0[xX][0-9a-fA-F.]*[pP][+-]?\d+)")


def _to_unsigned(source: str, check: bool = True) -> str:
    source = source.replace("acc * 0.5f", "acc / 2u").replace("0.5f * a", "a / 2u")
    source = source.replace("fmaxf(", "max(").replace("fmax(", "max(")
    source = source.replace("> 0.0f", "> 8u").replace("scalar(alpha, 1.5)", "scalar(alpha, 3)")
    for literal, unsigned in _UNSIGNED_LITERALS.items():
        source = source.replace(literal, unsigned)
    source = source.replace("(float)", "(unsigned)")
    source = re.sub(r"\bfloat\b", "unsigned", source)
    assert not check or not _FLOAT_LITERAL.search(source), \
        "a float literal left in an unsigned kernel"
    return source


def _nan_prone_math(source: str, rng: random.Random, dialect: str, floating: str) -> str:
    """Wrap the value of one 'acc += value;' statement in a log or a square root."""
    lines = source.split("\n")
    sites = [n for n, line in enumerate(lines) if re.search(r"acc \+= .+;$", line)]
    if not sites:
        return source
    n = rng.choice(sites)
    name = rng.choice(["sqrt", "log"])
    if dialect == "cuda" and floating == "float":
        name += "f"
    lines[n] = re.sub(r"acc \+= (.+);$", rf"acc += {name}(\1);", lines[n])
    return "\n".join(lines)


# ---------------------------------------------------------------- local pointers
#: Share of cases where an array is reached through a local pointer (llm.c's row pointers).
POINTER_SHARE = 0.15

_POINTER_PARAM = re.compile(r"((?:__global\s+)?(?:const\s+)?(\w+)\s*\*\s*"
                            r"(?:__restrict__\s+|restrict\s+)?)([A-Z])\b")


#: Share of :func:`pointer_variant`'s cases that declare the pointer and set it in the
#: statement after (``const float *P_at;  P_at = P + 1;``), as C89 code does.
C89_POINTER_SHARE = 0.35
#: ... and of them, set to the array and moved by the next statement (``p = P; p += 1;``).
MOVED_POINTER_SHARE = 0.25


def pointer_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, one array parameter ``P`` of the first kernel reached through
    local pointers, as llm.c and SDK code write it: ``const float *P_at = P + 1;`` declared
    first in the kernel, then every ``P[e]`` written ``P_at[e - 1]`` or ``*(P + e)``. The front
    end must read both back as ``P[e]`` (frontend/pointer_offsets.py). Some declare the
    pointer first and set it in a statement of its own (C89)."""
    if rng.random() >= POINTER_SHARE:
        return source
    head = re.search(r"(__global__ void|__kernel void) \w+\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    params = [m for m in _POINTER_PARAM.finditer(head.group(2))]
    if not params:
        return source
    param = rng.choice(params)
    decl, name = param.group(1), param.group(3)
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    out, at = [], 0
    for m in re.finditer(rf"\b{name}\[", body):
        if m.start() < at:
            continue
        close = _closing_bracket(body, m.end())
        index = body[m.end():close]
        out.append(body[at:m.start()])
        roll = rng.random()
        if roll < 0.45:
            out.append(f"{name}_at[({index}) - 1]")
        elif roll < 0.8:
            out.append(f"*({name} + ({index}))")
        else:       # a chain of offsets, as Rodinia's *(m + Size * (i + 1) + t)
            out.append(f"*({name} + ({index}) - 1 + 1)")
        at = close + 1
    out.append(body[at:])
    alias = f"    {' '.join(decl.split())} {name}_at = {name} + 1;\n"
    alias = alias.replace("* ", "*").replace(" *", " *")
    roll = rng.random()
    if roll < C89_POINTER_SHARE:        # declared first, set by a statement (C89)
        alias = alias.replace(" = ", ";\n    " + f"{name}_at = ")
    elif roll < C89_POINTER_SHARE + MOVED_POINTER_SHARE:
        # set to the array, then moved by the next statement (Caffe's im2col)
        alias = alias.replace(f" = {name} + 1;", f" = {name};\n    {name}_at += 1;")
    return source[:head.end()] + alias + "".join(out) + source[end:]


#: Share of cases that read one input array through vector accesses (:func:`vload_variant`).
VLOAD_SHARE = 0.2
#: Element types the CUDA cases' vector casts are written for (the vector's component).
_VECTOR_OF = {"float": "float", "double": "double", "int": "int"}


def vload_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, reads of one read-only array parameter ``P`` of the first kernel
    written as SDK code reads a vector and takes a component. OpenCL: ``P[e]`` as
    ``vload4(0, &P[e]).x``, ``vload2(0, P + (e)).x`` or ``vload4(0, P + (e)).x`` (an element
    and the ones after it; the pragma's shape of P gets 4 more rows, as a vector at the last
    element reads past it). CUDA, through a pointer cast: ``reinterpret_cast<const float4
    *>(&P[e])[0].x``, ``reinterpret_cast<const float2 *>(P + (e))->x`` or ``((const float4
    *)(P + (e)))[0].x``. Some reads stay as written. The front end must read each as its
    element accesses (frontend/translate.py, frontend/vector_casts.py) and vectorize may make
    a whole vector one access again."""
    if rng.random() >= VLOAD_SHARE:
        return source
    head = re.search(r"(?:__kernel|__global__) void \w+\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    params = [m for m in _POINTER_PARAM.finditer(head.group(1))
              if "const" in m.group(1) and not m.group(2)[-1].isdigit()]   # not a float3
    if not params:
        return source
    param = rng.choice(params)
    name, elem = param.group(3), param.group(2)
    typedef = re.search(rf"^typedef (\w+) {elem};", source, re.M)
    elem = _VECTOR_OF.get(typedef.group(1) if typedef else elem)
    if dialect == "cuda" and elem is None:
        return source
    pragma = re.search(rf"array\({name}, ", source)
    if pragma is not None and dialect == "opencl":
        at, depth = pragma.end(), 0
        while depth or source[at] not in ",)":
            depth += {"(": 1, ")": -1}.get(source[at], 0)
            at += 1
        first = source[pragma.end():at]
        source = source[:pragma.end()] + f"({first}) + 4" + source[at:]
        head = re.search(r"(?:__kernel|__global__) void \w+\(([^)]*)\)\n\{\n", source)
    forms = {"opencl": ["vload4(0, &{p}[{e}]).x", "vload2(0, {p} + ({e})).x",
                        "vload4(0, {p} + ({e})).x"],
             "cuda": ["reinterpret_cast<const {v}4 *>(&{p}[{e}])[0].x",
                      "reinterpret_cast<const {v}2 *>({p} + ({e}))->x",
                      "((const {v}4 *)({p} + ({e})))[0].x"]}[dialect]
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    out, at, changed = [], 0, False
    for m in re.finditer(rf"\b{name}\[", body):
        if m.start() < at:
            continue
        close = _closing_bracket(body, m.end())
        form = rng.randrange(len(forms) + 1)
        out.append(body[at:m.start()])
        if form < len(forms):
            out.append(forms[form].format(p=name, e=body[m.end():close], v=elem))
            changed = True
        else:
            out.append(body[m.start():close + 1])
        at = close + 1
    out.append(body[at:])
    return source[:head.end()] + "".join(out) + source[end:] if changed else source


#: Share of cases that also read a float3 array (:func:`vector3_variant`).
VECTOR3_SHARE = 0.15


#: Share of CUDA cases whose first kernel also reads complex numbers (:func:`complex_variant`).
COMPLEX_SHARE = 0.08


def complex_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, the first kernel also takes ``const cuFloatComplex *Z``
    (shaped as one of its float arrays ``P`` is, where a pragma shapes P) and some reads
    ``P[e]`` add a value of ``Z[e]`` through cuComplex.h (``cuCrealf(Z[e])``,
    ``cuCabsf(cuCmulf(Z[e], Z[e]))``, ...): read with the header's types and functions
    (ir/cu_complex.py). Not where host code launches the kernel."""
    if dialect != "cuda" or rng.random() >= COMPLEX_SHARE or "<<<" in source or \
            "template" in source:
        return source
    head = re.search(r"__global__ void \w+\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    params = re.findall(r"\bfloat\s*\*\s*(?:__restrict__\s+)?(\w+)", head.group(1))
    free = [c for c in "ZVWXYUQ" if not re.search(rf"\b{c}\b", source)]
    if not params or not free:
        return source
    name, z = rng.choice(params), free[0]
    forms = ["cuCrealf({z}[{e}])", "cuCimagf(cuConjf({z}[{e}]))",
             "cuCabsf(cuCmulf({z}[{e}], {z}[{e}]))",
             "cuCrealf(cuCaddf({z}[{e}], make_cuFloatComplex(0.5f, 1.0f)))"]
    text = _with_reads_of(source, head, name, f"const cuFloatComplex *{z}", z, rng,
                          lambda index: rng.choice(forms).format(z=z, e=index))
    return source if text == source else "#include <cuComplex.h>\n" + text


def _with_reads_of(source: str, head: re.Match, name: str, param: str, new: str,
                   rng: random.Random, read) -> str:
    """``source`` with the kernel ``head`` matched taking ``param`` (named ``new``) last and
    some reads ``name[e]`` (not stores, nor subscripts holding one) written ``(name[e] +
    read(e))``, its pragma's shape of ``name`` given to ``new`` too; ``source`` itself where
    no read was drawn."""
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    out, at, changed = [], 0, False
    for m in re.finditer(rf"(?<![&\w]){name}\[", body):
        if m.start() < at:
            continue
        close = _closing_bracket(body, m.end())
        index = body[m.end():close]
        out.append(body[at:m.start()])
        stored = re.match(r"\s*([-+*/%&|^]?=(?!=)|\+\+|--)", body[close + 1:]) or \
            body[:m.start()].rstrip().endswith(("++", "--"))
        if rng.random() < 0.6 and "[" not in index and not stored:
            out.append(f"({name}[{index}] + {read(index)})")
            changed = True
        else:
            out.append(body[m.start():close + 1])
        at = close + 1
    if not changed:
        return source
    out.append(body[at:])
    params_end = head.start(1) + len(head.group(1))
    text = source[:params_end] + f", {param}" + source[params_end:head.end()] + "".join(out) + \
        source[end:]
    shape = re.search(rf"array\({name}((?:, [^,()]+|, \([^()]*\))+)\)", text)
    if shape is not None:
        text = text.replace(shape.group(0), f"{shape.group(0)} array({new}{shape.group(1)})",
                            1)
    return text


#: Share of cases whose first kernel also updates components of a float4 array
#: (:func:`component_store_variant`).
COMPONENT_STORE_SHARE = 0.15


def component_store_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, the first kernel also takes ``float4 *Q`` (shaped as its first
    output ``O`` is, where a pragma shapes O) and after each store ``O[e] = ...;`` updates
    components of ``Q[e]``, as a particle system does its positions: ``Q[e].y += O[e];``,
    ``Q[e].w = ...``, ``Q[e].z++``, in OpenCL also through swizzles (``Q[e].wz =
    Q[e].xy * O[e];``), which a CUDA output spells out.
    The element is read and written (analysis/memory_expressions.py): verification must
    compare Q. Not where host code launches the kernel (its launches lack the argument)."""
    if rng.random() >= COMPONENT_STORE_SHARE or "<<<" in source or "template" in source:
        return source
    head = re.search(r"(?:__kernel|__global__) void \w+\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    written = [m.group(3) for m in _POINTER_PARAM.finditer(head.group(1))
               if "const" not in m.group(1) and m.group(2) == "float"]
    free = [c for c in "QRSTUVW" if not re.search(rf"\b{c}\b", source)]
    if not written or not free:
        return source
    out_name, vec = written[0], free[0]
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    store = re.compile(rf"^(\s*){out_name}\[([^\[\]\n]+)\] = [^\n]*;$", re.M)
    forms = [f"{vec}[{{e}}].y += {out_name}[{{e}}];", f"{vec}[{{e}}].w = 0.5f * {vec}[{{e}}].x;",
             f"{vec}[{{e}}].z++;"]
    if dialect == "opencl":       # swizzles (passes/functional/swizzles.py spells them out)
        forms += [f"{vec}[{{e}}].xy += (float2)({out_name}[{{e}}], 1.0f);",
                  f"{vec}[{{e}}].wz = {vec}[{{e}}].xy * {out_name}[{{e}}];",
                  f"{vec}[{{e}}].zyx = {vec}[{{e}}].s012;"]
    changed = [False]

    def add(m: re.Match) -> str:
        changed[0] = True
        return m.group(0) + "\n" + m.group(1) + rng.choice(forms).format(e=m.group(2))

    body = store.sub(add, body)
    if not changed[0]:
        return source
    space = "__global " if dialect == "opencl" else ""
    params_end = head.start(1) + len(head.group(1))
    source = source[:params_end] + f", {space}float4 *{vec}" + source[params_end:head.end()] + \
        body + source[end:]
    shape = re.search(rf"\barray\({out_name}, ", source)
    if shape is not None:
        depth, at = 1, shape.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[at], 0)
            at += 1
        dims = source[shape.end():at - 1]
        source = source[:at] + f" array({vec}, {dims})" + source[at:]
    return source


def vector3_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, the first kernel also takes ``const float3 *V`` (shaped as a
    read-only float array ``P`` is, where a pragma shapes P) and some reads ``P[e]`` add a
    component of it: ``(P[e] + V[e].y)``; in CUDA some read the whole vector through a
    helper, ``fz_load3(V, e).z``. A float3 takes 12 bytes in CUDA and 16 in OpenCL:
    verification runs a CUDA case's kernels with CUDA's layout in OpenCL
    (passes/functional/vector3_layout.py), the helper's parameter packed in the naive
    kernel and inlined in the output. Cases whose host code launches the kernel are left
    alone (their launches would lack the argument)."""
    if rng.random() >= VECTOR3_SHARE or "<<<" in source or "template" in source:
        return source
    head = re.search(r"(?:__kernel|__global__) void \w+\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    params = [m for m in _POINTER_PARAM.finditer(head.group(1))
              if "const" in m.group(1) and m.group(2) == "float"]
    free = [c for c in "VWXYZUQ" if not re.search(rf"\b{c}\b", source)]
    if not params or not free:
        return source
    name, vec = rng.choice(params).group(3), free[0]
    space = "__global " if dialect == "opencl" else ""
    helper = dialect == "cuda" and rng.random() < 0.5

    def read(index: str) -> str:
        lane = rng.choice("xyz")
        return f"fz_load3({vec}, {index}).{lane}" if helper and rng.random() < 0.5 else \
            f"{vec}[{index}].{lane}"

    text = _with_reads_of(source, head, name, f"{space}const float3 *{vec}", vec, rng, read)
    if text == source:
        return source
    if helper and "fz_load3(" in text:
        kernel = re.search(r"^(?:__kernel|__global__) void", text, re.M)
        text = text[:kernel.start()] + "__device__ float3 fz_load3(const float3 *v, int i) " \
            "{ return v[i]; }\n\n" + text[kernel.start():]
    return text


#: Share of cases (with both thread ids declared together) that name the thread's 2-D
#: position as one int2 (:func:`position_variant`).
POSITION_SHARE = 0.3
_BODY_START = re.compile(r"(?:__global__|__kernel) void \w+\([^)]*\)\n\{\n")
_ID_PAIR = re.compile(r"^(\s*)int ([ij]) = (.*);\n\1int ([ij]) = (.*);$", re.M)


def position_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, a kernel's two thread ids declared together become one integer
    vector, as Udacity CS344 writes the thread's position: ``const int2 pos =
    make_int2(<x id>, <y id>);`` (OpenCL ``(int2)((int)(...), (int)(...))``; CUDA also
    ``{(int)(...), (int)(...)}``, C++ braces), each use of the
    ids ``pos.x`` / ``pos.y``. Only where neither id is assigned again or declared twice
    (the vector-locals canonicalization must read the components back as the ids)."""
    if rng.random() >= POSITION_SHARE:
        return source
    for head in _BODY_START.finditer(source):
        end = _kernel_end(source, head.end())
        m = _ID_PAIR.search(source, head.end(), end)
        if m is None or m.group(2) == m.group(4):
            continue
        axes = {}
        for name, expr in ((m.group(2), m.group(3)), (m.group(4), m.group(5))):
            if not re.search(r"Idx|get_global_id|get_group_id", expr):
                break
            axis = "x" if re.search(r"\.x\b|\(0\)", expr) else \
                "y" if re.search(r"\.y\b|\(1\)", expr) else None
            if axis is None or axis in axes:
                break
            axes[axis] = (name, expr)
        if len(axes) != 2:
            continue
        rest = source[m.end():end]
        names = [axes["x"][0], axes["y"][0]]
        if any(re.search(rf"\b{n}\s*([-+*/%&|^]?=[^=]|\+\+|--)|(\+\+|--){n}\b|"
                         rf"\b(int|unsigned|size_t)\s+{n}\b", rest) for n in names):
            continue
        pos = "pos" if not re.search(r"\bpos\b", source) else "thread_2D_pos"
        x, y = axes["x"][1], axes["y"][1]
        if dialect == "opencl":
            decl = f"const int2 {pos} = (int2)((int)({x}), (int)({y}));"
        elif rng.random() < 0.3:                 # C++ braces (frontend: make_int2)
            decl = f"const int2 {pos} = {{(int)({x}), (int)({y})}};"
        else:
            decl = f"const int2 {pos} = make_int2({x}, {y});"
        for name, axis in zip(names, "xy"):
            rest = re.sub(rf"\b{name}\b", f"{pos}.{axis}", rest)
        return source[:m.start()] + m.group(1) + decl + rest + source[end:]
    return source


#: Share of CUDA cases whose accumulations and stores go through helpers taking references
#: (:func:`reference_variant`).
REFERENCE_SHARE = 0.2


def reference_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, as the CUDA samples return values through references:
    some ``acc += e;`` become ``fz_add_to(acc, e);`` (``__device__ void fz_add_to(float
    &acc, float v)``: a reference to a local) and some stores ``B[e] = acc;`` become
    ``fz_set(B[e], acc);`` (a reference to a global element). OpenCL has no references:
    verification runs them as private and __global pointers (ir/references.py)."""
    if dialect != "cuda" or rng.random() >= REFERENCE_SHARE or "template" in source:
        return source
    lines, used = source.split("\n"), set()
    floats = "float acc" in source                 # float & binds to a float only
    for n, line in enumerate(lines):
        m = re.fullmatch(r"(\s+)acc \+= (.+);", line)
        if m and floats and rng.random() < 0.5:
            lines[n], _ = f"{m.group(1)}fz_add_to(acc, {m.group(2)});", used.add("add")
            continue
        m = re.fullmatch(r"(\s+)(([A-Z]\w*)\[[^=]*\]) = acc;", line)
        if m and floats and re.search(rf"\bfloat \*(?:__restrict__ )?{m.group(3)}\b", source) \
                and rng.random() < 0.5:
            lines[n], _ = f"{m.group(1)}fz_set({m.group(2)}, acc);", used.add("set")
    if not used:
        return source
    text = "\n".join(lines)
    helpers = ("__device__ void fz_add_to(float &acc, float v) { acc += v; }\n"
               if "add" in used else "") + \
        ("__device__ void fz_set(float &dst, float v) { dst = v; }\n" if "set" in used else "")
    kernel = re.search(r"^__global__ void", text, re.M)
    return text[:kernel.start()] + helpers + "\n" + text[kernel.start():]


#: Share of cases whose row-major indices are written with 24-bit multiplies
#: (:func:`mad24_variant`).
#: Share of cases whose kernels end with a ``return;`` (Rodinia writes one after the guard).
TRAILING_RETURN_SHARE = 0.06


def trailing_return_variant(source: str, rng: random.Random) -> str:
    """Each kernel of the file ends with a ``return;``, in a share of the cases: a no-op the
    merge-guards canonicalization removes, so that the guard is the kernel's last statement
    again."""
    if rng.random() >= TRAILING_RETURN_SHARE:
        return source
    out, at = [], 0
    for head in re.finditer(r"^(?:__global__|__kernel)\b[^;{]*?\bvoid\b[^;{]*\{", source, re.M):
        end = source.find("\n}", head.end())
        if end < 0 or end < at:
            continue
        out.append(source[at:end] + "\n    return;")
        at = end
    return "".join(out) + source[at:]


#: Share of cases whose early-return kernels end in a test of the thread's work with an
#: else (:func:`interior_else_variant`).
INTERIOR_ELSE_SHARE = 0.15
_LAST_STORE = re.compile(r"\n(    )(\w+)\[(\w+)\] (=|\+=) ([^;\n]+);\n\}")


def interior_else_variant(source: str, rng: random.Random) -> str:
    """In a share of cases, a kernel that returns early past its bound and ends in a store to
    the element of its id writes that store under a test of its work with an ``else``, as
    finite-difference code writes its boundary: ``if (i < N - 1) y[i] = ...; else y[i] = 0;``.
    Neither test is the thread space's bound (analysis/guards.thread_guards): the thread
    space stays the early return's."""
    if rng.random() >= INTERIOR_ELSE_SHARE:
        return source
    out, at = [], 0
    for head in re.finditer(r"^(?:__global__|__kernel)\b[^;{]*?\bvoid\b[^;{]*\{", source, re.M):
        end = source.find("\n}", head.end())
        body = source[head.end():end + 2]
        guard = re.search(r"if \((\w+) >= (\w+)\)\s*return;", body)
        store = _LAST_STORE.search(body)
        if end < 0 or guard is None or store is None or store.group(3) != guard.group(1) or \
                store.end() != len(body):
            continue
        pad, array, index, op, value = store.groups()
        declared = re.search(rf"([\w ]+?)\s*\*\s*(?:__restrict__\s*)?{array}\b",
                             source[head.start():head.end()])
        if declared is None or re.search(r"\w\d\b|_PTR$", declared.group(1)):
            continue            # a vector element (float4): no scalar zero to store
        zero = "0" if re.search(r"\b(int|unsigned|uint)\b", declared.group(1)) else "0.0f"
        test = rng.choice([f"{index} < {guard.group(2)} - 1", f"{index} + 1 < {guard.group(2)}",
                           f"{index} > 0 && {index} < {guard.group(2)} - 2"])
        new = (f"\n{pad}if ({test})\n{pad}    {array}[{index}] {op} {value};\n{pad}else\n"
               f"{pad}    {array}[{index}] {op} {zero};\n}}")
        out.append(source[at:head.end() + store.start()] + new)
        at = head.end() + store.end()
    return "".join(out) + source[at:]


MAD24_SHARE = 0.15
_ROW_MAJOR = re.compile(r"\[(\w+) \* (\w+|\(\w+ [+-] \d+\)) \+ (\w+)\]")


def mad24_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases whose ids and sizes are all ``int``, some row-major indices
    ``[i * W + j]`` are written as the OpenCL SDK writes them, ``[mad24(i, W, j)]`` (CUDA
    ``[__mul24(i, W) + j]``): the analyses read a 24-bit multiply as the product
    (ir/symbolic.py)."""
    if rng.random() >= MAD24_SHARE or re.search(r"\b(size_t|unsigned|uint|long)\b", source):
        return source

    def write(m: re.Match) -> str:
        # (an unsigned literal, ``mad24(i, N, 0u)``, makes OpenCL's overloads ambiguous)
        if rng.random() < 0.5 or any(re.fullmatch(r"\d\w*[uU]\w*", g) for g in m.groups()):
            return m.group(0)
        a, b, c = m.groups()
        return f"[mad24({a}, {b}, {c})]" if dialect == "opencl" else \
            f"[__mul24({a}, {b}) + {c}]"

    return _ROW_MAJOR.sub(write, source)


#: Share of CUDA cases whose first kernel declares ``__launch_bounds__`` (:func:`bounds_variant`).
BOUNDS_SHARE = 0.15


def bounds_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, the first kernel declares the most threads a block may have,
    before its head as the CUDA samples write it or after ``void``: at least its pragma's
    and its host code's block, and where neither gives one, fewer than the default block now and then (the
    naive block must stay within the bounds: launch.default_block)."""
    if dialect != "cuda" or rng.random() >= BOUNDS_SHARE or "template" in source:
        return source
    head = re.search(r"^__global__ void ", source, re.M)
    if head is None:
        return source
    # at least the pragma's block and the host code's (``dim3 block(16, 16)``)
    least = max([int(b.group(1)) * int(b.group(2) or 1) for b in re.finditer(
        r"\b(?:block|threads)\((\d+)(?:, (\d+))?\)", source)], default=1)
    most = rng.choice([t for t in (32, 64, 128, 256, 512, 1024) if t >= least])
    if rng.random() < 0.5:
        return source[:head.start()] + f"__launch_bounds__({most})\n" + source[head.start():]
    return source[:head.end()] + f"__launch_bounds__({most}) " + source[head.end():]


#: Share of OpenCL cases whose pragma gives the block that declare it on their kernels too
#: (:func:`work_group_variant`).
WORK_GROUP_SHARE = 0.3


def work_group_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of OpenCL cases whose pragma gives the naive block, every kernel requires
    that block (``__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void k0``, or after
    ``void``), as OpenCL code that was tuned for one work-group size declares it: the front end
    takes the attribute for the naive block, and the output keeps it where no pass fixed
    another."""
    block = re.search(r"^#pragma naiveopt .*\bblock\((\d+)(?:, (\d+))?\)", source, re.M)
    if dialect != "opencl" or block is None or rng.random() >= WORK_GROUP_SHARE:
        return source
    attribute = f"__attribute__((reqd_work_group_size({block.group(1)}, {block.group(2) or 1}, 1)))"
    if rng.random() < 0.5:
        return re.sub(r"^__kernel void ", f"__kernel {attribute} void ", source, flags=re.M)
    return re.sub(r"^__kernel void ", f"__kernel void {attribute} ", source, flags=re.M)


#: Share of CUDA cases whose kernels have C linkage (:func:`extern_c_variant`).
EXTERN_C_SHARE = 0.12
_LINKED_HEAD = re.compile(r"^(?:__launch_bounds__\(\d+\)\n)?__global__ void ", re.M)


def extern_c_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, the kernels declared ``extern "C"`` as code loaded by name
    writes them (cupy's RawKernel, cuModuleGetFunction): each head prefixed, or everything
    after the includes in one ``extern "C" { }`` block (not in files with templates or
    operators, which C linkage does not allow)."""
    if dialect != "cuda" or rng.random() >= EXTERN_C_SHARE or "template" in source:
        return source
    includes = list(re.finditer(r"^#include .*$", source, re.M))
    if rng.random() < 0.5 and "operator" not in source:
        at = includes[-1].end() + 1 if includes else 0
        return source[:at] + 'extern "C" {\n' + source[at:].rstrip("\n") + "\n}\n"
    return _LINKED_HEAD.sub(lambda m: 'extern "C" ' + m.group(0), source)


#: Share of CUDA cases that take one size from a ``__constant__`` the host sets
#: (:func:`host_constant_variant`).
HOST_CONSTANT_SHARE = 0.1


def host_constant_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases of one kernel, one integer size parameter declared instead as
    ``__constant__ int N;`` at file scope, or as a member of a struct there (``fz_prm.N``),
    which the host sets with cudaMemcpyToSymbol:
    verification must give it its size set's value, the output keep the symbol and its
    launcher take the value. Not with host code, templates or structs (which pass the
    parameter), nor where a size set holds no value for it."""
    if dialect != "cuda" or rng.random() >= HOST_CONSTANT_SHARE or "<<<" in source or \
            "template" in source or "struct" in source or len(_FIRST_KERNEL.findall(source)) != 1:
        return source
    head = _FIRST_KERNEL.search(source)
    close = source.index(")", head.end())
    params = source[head.end():close].split(", ")
    sizes = set(re.findall(r"(\w+)=", " ".join(re.findall(r"\bsizes\(([^)]*)\)", source))))
    from ..passes.functional.names import RESERVED

    # (not a name OpenCL reserves: a global is not renamed for an OpenCL output yet)
    ints = [k for k, p in enumerate(params)
            if re.fullmatch(r"(const )?int \w+", p) and p.split()[-1] in sizes and
            p.split()[-1] not in RESERVED["opencl"]]
    if not ints or len(params) < 2:
        return source
    k = rng.choice(ints)
    name = params[k].split()[-1]
    if re.search(rf"#define \w+.*\b{name}\b", source):       # a macro of it: not at file scope
        return source
    del params[k]
    source = source[:head.end()] + ", ".join(params) + source[close:]
    includes = list(re.finditer(r"^#include .*\n", source, re.M))
    at = includes[-1].end() if includes else 0
    if rng.random() < 0.5:
        return source[:at] + f"__constant__ int {name};\n" + source[at:]
    # in a struct of parameters the host fills (``__constant__ fz_params_t fz_prm;``), read
    # ``fz_prm.N`` in the kernel and the pragma
    end = _kernel_end(source, close)
    body = re.sub(rf"(?<![.\w]){name}\b", f"fz_prm.{name}", source[close:end])
    head_text = re.sub(r"^#pragma naiveopt .*$", lambda m: re.sub(
        rf"(?<![.\w]){name}\b", f"fz_prm.{name}", m.group(0)), source[:close], flags=re.M)
    source = head_text + body + source[end:]
    return source[:at] + (f"typedef struct {{ float scale; int {name}; }} fz_params_t;\n"
                          "__constant__ fz_params_t fz_prm;\n") + source[at:]


#: Share of cases whose first float store goes through sincos (:func:`sincos_variant`).
SINCOS_SHARE = 0.08


def sincos_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, the first store ``O[e] = v;`` to a float array of the first
    kernel as physics code writes a rotation: CUDA ``{ float fz_s, fz_c; sincosf(v, &fz_s,
    &fz_c); O[e] = v + 0.5f * fz_s * fz_c; }`` (or through ``__sincosf``, with the sine
    stored into the array element itself), OpenCL ``float fz_s = sincos(v, &fz_c);`` (or the
    sine assigned to the element, or a statement of its own storing the cosine into it): the
    front end reads the call as the sine and the cosine it stores
    (frontend/translate.Translator._sincos, _sincos_value)."""
    if rng.random() >= SINCOS_SHARE:
        return source
    head = re.search(r"(?:__global__|__kernel) void (?:__launch_bounds__\(\d+\) )?\w+"
                     r"\(([^)]*)\)\n\{\n", source)
    if head is None:
        return source
    floats = [m.group(3) for m in _POINTER_PARAM.finditer(head.group(1))
              if "const" not in m.group(1) and m.group(2) == "float"]
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    store = next((m for name in floats for m in re.finditer(
        rf"^(\s*)({name}\[[^\[\]\n]+\]) = ([^;\n]+);$", body, re.M)), None)
    if store is None or re.search(r"\+\+|--|\w\(", store.group(3)):
        return source
    pad, target, value = store.groups()
    if dialect == "opencl":
        roll = rng.random()
        if roll < 0.4:
            text = (f"{pad}{{\n{pad}    float fz_c;\n{pad}    float fz_s = sincos({value}, "
                    f"&fz_c);\n{pad}    {target} = ({value}) + 0.5f * fz_s * fz_c;\n{pad}}}")
        elif roll < 0.7:
            text = (f"{pad}{{\n{pad}    float fz_c;\n{pad}    {target} = sincos({value}, "
                    f"&fz_c);\n{pad}    {target} += fz_c;\n{pad}}}")
        else:
            text = (f"{pad}{{\n{pad}    sincos({value}, &{target});\n"
                    f"{pad}    {target} += ({value});\n{pad}}}")
    else:
        fn = rng.choice(["sincosf", "__sincosf"])
        if rng.random() < 0.5:
            text = (f"{pad}{{\n{pad}    float fz_s, fz_c;\n{pad}    {fn}({value}, &fz_s, "
                    f"&fz_c);\n{pad}    {target} = ({value}) + 0.5f * fz_s * fz_c;\n{pad}}}")
        else:
            text = (f"{pad}{{\n{pad}    float fz_c;\n{pad}    {fn}({value}, &{target}, "
                    f"&fz_c);\n{pad}    {target} += fz_c;\n{pad}}}")
    body = body[:store.start()] + text + body[store.end():]
    return source[:head.end()] + body + source[end:]


#: Share of CUDA cases that take one array as rows of a fixed width
#: (:func:`array_param_variant`).
ARRAY_PARAM_SHARE = 0.1


def array_param_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, one array parameter ``T *P`` of the first kernel declared
    as rows of a fixed width W (``T (*P)[W]``, ``T P[][W]``) and each ``P[e]`` read as
    ``P[(e) / W][(e) % W]``, the same element: the front end reads the subscripts back as a
    flat index (ir/array_params.py) and the CUDA output declares the rows again. Not where
    the array is used other than by indexing, nor with host code (whose pointers it takes)."""
    if dialect != "cuda" or rng.random() >= ARRAY_PARAM_SHARE or "<<<" in source or \
            "template" in source:
        return source
    head = re.search(r"__global__ void (?:__launch_bounds__\(\d+\) )?\w+\(([^)]*)\)\n\{\n",
                     source)
    if head is None:
        return source
    end = _kernel_end(source, head.end())
    body = source[head.end():end]
    params = [m for m in _POINTER_PARAM.finditer(head.group(1))
              if re.search(rf"\b{m.group(3)}\b", body) and
              all(body[u.end():u.end() + 1] == "[" for u in
                  re.finditer(rf"(?<![.\w]){m.group(3)}\b", body))]
    if not params:
        return source
    param = rng.choice(params)
    name, width = param.group(3), rng.choice([4, 8, 16, 32])
    out, at = [], 0
    for m in re.finditer(rf"(?<![.\w]){name}\[", body):
        if m.start() < at:
            continue
        close = _closing_bracket(body, m.end())
        index = body[m.end():close]
        out += [body[at:m.start()], f"{name}[({index}) / {width}][({index}) % {width}]"]
        at = close + 1
    out.append(body[at:])
    written = param.group(1).replace("__restrict__", "").replace("*", "").strip()
    decl = f"{written} (*{name})[{width}]" if rng.random() < 0.5 else \
        f"{written} {name}[][{width}]"
    start = head.start(1) + param.start()
    params_text = head.group(1)[:param.start()] + decl + head.group(1)[param.end():]
    return source[:head.start(1)] + params_text + source[head.start(1) + len(head.group(1)):
                                                         head.end()] + "".join(out) + source[end:]


#: Share of cases with a kernel naiveopt does not read beside theirs (:func:`unreadable_variant`).
UNREADABLE_SHARE = 0.06
#: The name of that kernel (the campaign checks the output carries it where it should).
UNREADABLE_KERNEL = "naiveopt_fuzz_unread"
_UNREADABLE = {
    "cuda": [f"""__global__ void {UNREADABLE_KERNEL}(const float *x, float *out, int cols)
{{
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += x[blockIdx.x * cols + c];
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffff, s, o);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}}
""", f"""__device__ float naiveopt_fuzz_warp_sum(float v)
{{
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}}

__global__ void {UNREADABLE_KERNEL}(const float *x, float *out, int cols)
{{
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += x[blockIdx.x * cols + c];
    s = naiveopt_fuzz_warp_sum(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}}
""", f"""__global__ void {UNREADABLE_KERNEL}(const int *a, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < 4) printf("a[%d] = %d\\n", i, a[i]);
}}
"""],
    "opencl": [f"""__kernel void {UNREADABLE_KERNEL}(__global const int *a, int n)
{{
    int i = get_global_id(0);
    if (i < n && i < 4) printf("a[%d] = %d\\n", i, a[i]);
}}
"""]}


def unreadable_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, a kernel naiveopt does not read at the end of the file (a warp
    shuffle row sum, in the kernel or in a helper; a debugging printf; C linkage in some CUDA
    cases): carried as written
    into an output of the input's dialect (frontend/verbatim.py) while the others are
    optimized and verified as before."""
    if rng.random() >= UNREADABLE_SHARE:
        return source
    kernel = rng.choice(_UNREADABLE[dialect])
    if dialect == "cuda" and rng.random() < 0.3:
        kernel = kernel.replace("__global__", 'extern "C" __global__')
    return source.rstrip("\n") + "\n\n" + kernel


#: Share of cases whose first kernel takes its scalar parameters in one struct passed by
#: value (:func:`struct_variant`).
STRUCT_SHARE = 0.15
_FIRST_KERNEL = re.compile(r"^(?:__global__|__kernel) void (?:__launch_bounds__\(\d+\) )?\w+\(",
                          re.M)


def struct_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, the first kernel's scalar parameters are members of a struct it
    takes by value (``typedef struct { int N; float alpha; } Params;`` / ``struct Params``,
    ``const Params prm``), read as ``prm.N`` in its body and its pragma: the front end reads
    the members as sizes and the output writes the struct back (ir/structs.py). Not where
    host code or a template passes the scalars themselves."""
    if rng.random() >= STRUCT_SHARE or "template" in source or "<<<" in source:
        return source
    head = _FIRST_KERNEL.search(source)
    if head is None or len(_FIRST_KERNEL.findall(source)) > 1:
        return source                   # (the other kernels share the pragma's names)
    close = _closing_paren(source, head.end())
    params = [p.strip() for p in source[head.end():close].split(",")]
    # (not spelling_variant's pointer typedefs, ``REAL_PTR A``)
    scalars = [p for p in params if "*" not in p and "_PTR" not in p and
               re.fullmatch(r"[\w ]+ \w+", p)]
    if not scalars:
        return source
    names = [p.split()[-1] for p in scalars]
    members = " ".join(re.sub(r"^const ", "", p) + ";" for p in scalars)
    kind = rng.choice(["Params", "KernelArgs", "Dims"])
    value = rng.choice(["prm", "args", "p"])
    if re.search(rf"\b({kind}|{value}|{value}_\w+)\b", source):
        return source
    typedef = dialect == "opencl" or rng.random() < 0.5
    definition = f"typedef struct {{ {members} }} {kind};" if typedef else \
        f"struct {kind} {{ {members} }};"
    kept = [p for p in params if p not in scalars]
    const = "const " if rng.random() < 0.5 else ""
    at = rng.randint(0, len(kept))
    written = kept[:at] + [f"{const}{kind if typedef or dialect == 'cuda' else 'struct ' + kind}"
                           f" {value}"] + kept[at:]
    body_start = source.index("{", close)
    body_end = _closing_brace(source, body_start + 1)
    member = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, names))})\b")
    body = member.sub(rf"{value}.\1", source[body_start:body_end])
    # the pragma lines (the file's only kernel: all of them are its)
    at = _definition_at(source, head)
    before = re.sub(r"(?m)^#pragma naiveopt .*$",
                    lambda m: member.sub(rf"{value}.\1", m.group(0)), source[:at])
    return (before + definition + "\n" + source[at:head.end()] +
            ", ".join(written) + source[close:body_start] + body + source[body_end:])


#: Share of cases whose first kernel reads one of its input arrays as an array of structs
#: (:func:`aos_variant`).
AOS_SHARE = 0.12


def aos_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of single-kernel cases, a read-only float array ``X`` of the kernel is an
    array of two-float structs (``struct Pair { float v; float w; }``, ``const Pair *X``)
    read as ``X[e].v``: the front end reads it as the floats it holds (``X[2 * e]``) and
    the output points to the struct again (ir/structs.StructArray). Its pragma shape is
    dropped (it counts floats): inference gives the extent."""
    if rng.random() >= AOS_SHARE or "template" in source or "<<<" in source:
        return source
    head = _FIRST_KERNEL.search(source)
    if head is None or len(_FIRST_KERNEL.findall(source)) > 1:
        return source
    close = _closing_paren(source, head.end())
    body_start = source.index("{", close)
    body_end = _closing_brace(source, body_start + 1)
    body = source[body_start:body_end]
    params = source[head.end():close]
    candidates = [m.group(1) for m in re.finditer(
        r"(?:__global )?const float \*(?:__restrict__ |restrict )?(\w+)", params)
        if all(body[u.end():u.end() + 1] == "[" and body[u.start() - 1] != "&" for u in
               re.finditer(rf"\b{m.group(1)}\b", body)) and re.search(rf"\b{m.group(1)}\[", body)]
    kind = rng.choice(["Pair", "Sample", "Cell"])
    if not candidates or re.search(rf"\b{kind}\b", source):
        return source
    name = rng.choice(candidates)
    member = rng.choice(["v", "w"])

    # some reads through a pointer and '->': ``(X + (e))->v``, or through a local pointer
    # one element in, ``(X_at + ((e) - 1))->v`` (Rodinia's ``latLong->lat``)
    arrows = rng.random() < 0.4
    # (not over unsigned ids: 'e - 1' at e = 0 is a huge offset there)
    local = arrows and rng.random() < 0.5 and \
        not re.search(r"\b(unsigned|size_t|uint)\b", source)

    def element(text: str) -> str:
        out, at = [], 0
        for m in re.finditer(rf"\b{name}\[", text):
            if m.start() < at:
                continue
            end = _closing_bracket(text, m.end())
            index = text[m.end():end]
            if arrows and rng.random() < 0.6:
                out.append(text[at:m.start()] + (f"({name}_at + (({index}) - 1))->{member}"
                                                  if local else
                                                  f"({name} + ({index}))->{member}"))
            else:
                out.append(text[at:end + 1] + f".{member}")
            at = end + 1
        return "".join(out) + text[at:]

    typedef = dialect == "opencl" or rng.random() < 0.5
    definition = f"typedef struct {{ float v; float w; }} {kind};" if typedef else \
        f"struct {kind} {{ float v; float w; }};"
    params = re.sub(rf"const float \*((?:__restrict__ |restrict )?{name})\b",
                    rf"const {kind if typedef or dialect == 'cuda' else 'struct ' + kind} *\1",
                    params)
    at = _definition_at(source, head)
    before = re.sub(rf"\s*\barray\({name},[^()]*(?:\([^()]*\)[^()]*)*\)", "", source[:at])
    body = element(body)
    if local:
        pointee = kind if typedef or dialect == "cuda" else "struct " + kind
        space = "__global " if dialect == "opencl" else ""
        body = body.replace("{", f"{{\n    {space}const {pointee} *{name}_at = {name} + 1;", 1)
    return (before + definition + "\n" + source[at:head.end()] + params +
            source[close:body_start] + body + source[body_end:])


def _definition_at(source: str, head: re.Match) -> int:
    """Where a type definition goes before the kernel ``head``: before its
    ``__launch_bounds__`` line where bounds_variant wrote one on the line before."""
    start = head.start()
    line = source.rfind("\n", 0, max(start - 1, 0)) + 1
    return line if source[line:start].startswith("__launch_bounds__") else start


def _closing(text: str, start: int, pair: str) -> int:
    """The offset of the bracket that closes the one (``pair``: "()", "{}", "[]") opened
    just before ``start``."""
    depth = 1
    for n in range(start, len(text)):
        depth += {pair[0]: 1, pair[1]: -1}.get(text[n], 0)
        if depth == 0:
            return n
    raise ValueError(f"unbalanced {pair} in a generated kernel")


def _closing_paren(text: str, start: int) -> int:
    return _closing(text, start, "()")


def _closing_brace(text: str, start: int) -> int:
    return _closing(text, start, "{}")


def _closing_bracket(text: str, start: int) -> int:
    return _closing(text, start, "[]")


def _kernel_end(source: str, start: int) -> int:
    """The offset of the closing brace of the kernel whose body starts at ``start``."""
    try:
        return _closing(source, start, "{}")
    except ValueError:
        return len(source)


# ------------------------------------------------------------- typedefs and index types
#: Share of cases whose element type is named through a typedef, and whose thread ids are
#: declared size_t or unsigned (drawn apart).
TYPEDEF_SHARE = 0.3
INDEX_TYPE_SHARE = 0.3
#: Share of cases whose C89 loop iterators (declared at the top) are size_t or unsigned.
C89_TYPE_SHARE = 0.5
#: Thread-id types people write, per dialect.
INDEX_TYPES = {"cuda": ["size_t", "unsigned int", "unsigned", "long long"],
               "opencl": ["size_t", "uint", "unsigned int", "long"]}
_THREAD_ID = re.compile(r"^(\s*)int ([ij]) = (.*(?:Idx|get_global_id|get_group_id).*);$", re.M)
#: The C89 declaration of a kernel's loop iterators (``int j, k;``, kernel_lines).
_C89 = re.compile(r"^(    )int ((?:\w+, )*\w+);$", re.M)


#: How often a CUDA case names its integer #defines as constants (:func:`constant_variant`).
NAMED_CONSTANT_SHARE = 0.3


def constant_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, the file's unconditional integer ``#define`` lines as the
    named constants CUDA code often declares instead (``const int TILE = 16;``, ``static
    const int``, ``constexpr int``: device code may read them, and the front end reads them
    as macros, frontend/named_constants.py); in all cases now and then a trailing comment on
    a ``#define`` line (``#define ROWS 4  // rows a thread``), whose comment is not its
    value. Sizes the pragma names stay macros (-D may set them)."""
    sizes = set(re.findall(r"(\w+)=", " ".join(re.findall(r"\bsizes\(([^)]*)\)", source))))
    lines, depth = source.split("\n"), 0
    named = dialect == "cuda" and rng.random() < NAMED_CONSTANT_SHARE
    for n, line in enumerate(lines):
        if re.match(r"\s*#\s*if", line):
            depth += 1
        elif re.match(r"\s*#\s*endif", line):
            depth -= 1
        m = re.fullmatch(r"#define (\w+) (\d+)", line)
        if m is None or depth or m.group(1) in sizes:
            continue
        if named and rng.random() < 0.8:
            form = rng.choice(["const int {} = {};", "static const int {} = {};",
                               "constexpr int {} = {};"])
            lines[n] = form.format(*m.groups())
        if rng.random() < 0.2:
            lines[n] += rng.choice(["  // tile size", " /* threads */"])
    return "\n".join(lines)


#: Share of files with a file-scope table whose table is named as the other dialect reserves
#: (``__constant__ float half[5];``: KernelGenerator.reserved_names).
TABLE_RESERVED_SHARE = 0.3

#: Share of CUDA cases whose helper (where they draw one) is a __device__ function template.
HELPER_TEMPLATE_SHARE = 0.3

#: Share of unguarded cases whose pragma leaves threads(...) out (KernelGenerator.pragma).
#: (Off for a while: where a case also lost its sizes, the inferred free extent let the naive
#: kernel leave its arrays, fuzz 20261 case 140; verification now declines such sizes,
#: verify/check._outside_arrays, and free extents keep indices >= 0.)
OPEN_THREADS_SHARE = 0.3

#: Share of CUDA cases (without host code) whose first kernel is a template over its float
#: element type (:func:`template_variant`).
TEMPLATE_SHARE = 0.1


def template_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases without host code, the first kernel as a template over its
    element type (``template <typename T> __global__ void k0(const T *A, ...)``, ``float``
    in its body as ``T``), instantiated for float explicitly (``template __global__ void
    k0<float>(const float *, ...);``) and, now and then, a second time for a type no launch
    uses, so the file holds two instances (frontend/templates.py reads each as a kernel of
    its own, ``k0_float``). Only files whose kernels declare no typedef'd or vector types."""
    if dialect != "cuda" or "<<<" in source or rng.random() >= TEMPLATE_SHARE:
        return source
    m = re.search(r"__global__ void (\w+)\(([^)]*)\)\s*\{", source)
    if m is None or re.search(r"\b(float[234]|double|typedef)\b", source) or \
            re.search(r"\bT\b", source[m.start():]) or "float" not in m.group(2):
        return source
    start = m.start()
    depth, end = 0, m.end() - 1
    for end in range(m.end() - 1, len(source)):
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
    types = ", ".join(" ".join(re.sub(r"\w+$", "", p.strip()).split())
                      for p in m.group(2).split(","))
    macros = {name: value for name, value in re.findall(r"^#define (BLOCK_[XY]) (\d+)$",
                                                        source, re.M)
              if re.search(rf"\b{name}\b", source[start:end + 1])}
    if macros and rng.random() < 0.5:
        return _number_template(source, start, end, m.group(1), m.group(2), types, macros,
                                rng)
    kernel = re.sub(r"\bfloat\b", "T", source[start:end + 1])
    instances = [f"template __global__ void {m.group(1)}<float>({types});"]
    # (not where a float is brace-initialized, ``T acc{0.0f};``: narrowing for int)
    if rng.random() < 0.3 and not re.search(r"\{\d+\.\d*f?\}", kernel):
        other = types.replace("float", "int")
        instances.append(f"template __global__ void {m.group(1)}<int>({other});")
    return (source[:start] + "template <typename T>\n" + kernel + "\n" +
            "\n".join(instances) + source[end + 1:])


def _number_template(source: str, start: int, end: int, name: str, params: str, types: str,
                     macros: dict[str, str], rng: random.Random) -> str:
    """The CUDA samples' form of :func:`template_variant`: the kernel a template over the
    block constants its ids use (``template <int TB_X> ... blockIdx.x * TB_X + threadIdx.x``)
    instantiated at the naive block, explicitly or, half the time, by a host function that
    launches the instance with a block it reads from a variable (``dim3 threads(bx, by)``:
    naiveopt takes the instance's argument as its block)."""
    order = sorted(macros)
    kernel = source[start:end + 1]
    for macro in order:
        kernel = re.sub(rf"\b{macro}\b", f"TB_{macro[-1]}", kernel)
    head = "template <" + ", ".join(f"int TB_{m[-1]}" for m in order) + ">\n"
    args = ", ".join(macros[m] for m in order)
    if rng.random() < 0.5:
        tail = f"template __global__ void {name}<{args}>({types});"
    else:
        names = [re.search(r"(\w+)$", p.strip()).group(1) for p in params.split(",")]
        sides = ", ".join(["bx", "by"][:2 if "BLOCK_Y" in macros else 1])
        tail = "\n".join([
            f"void launch_{name}({params}, int bx, int by)", "{",
            f"    dim3 threads({sides});", "    dim3 grid(1);",
            f"    {name}<{args}><<<grid, threads>>>({', '.join(names)});", "}"])
    return source[:start] + head + kernel + "\n" + tail + source[end + 1:]


#: How often a case's initialized constant table is a local of its kernel instead
#: (:func:`local_table_variant`).
LOCAL_TABLE_SHARE = 0.3


def local_table_variant(source: str, rng: random.Random) -> str:
    """In a share of the cases with an initialized file-scope table (``__constant__ float
    CT[16] = {...};``) and one kernel that alone reads it, the table as a local of that
    kernel, as filter weights are often written (``const float CT[16] = {...};``)."""
    table = re.search(r"^(?:__constant__|__constant) float (CT\[\w+\] = \{[^}]*\});\n",
                      source, re.M)
    heads = list(re.finditer(r"^(?:__global__|__kernel) void .*\n\{\n", source, re.M))
    if table is None or len(heads) != 1 or "CT[" in source[table.end():heads[0].start()] \
            or rng.random() >= LOCAL_TABLE_SHARE:
        return source
    # (a read past the table's end makes verification skip those sizes, for a local table
    # as for a file-scope one: check._past_tables; CI campaign 20261 case 37 compared the
    # garbage a local one read there)
    at = heads[0].end()
    source = source[:at] + f"    const float {table.group(1)};\n" + source[at:]
    return source[:table.start()] + source[table.end():]


#: How often a CUDA case spells its thread ids through C++'s static_cast (:func:`cast_variant`).
CXX_CAST_SHARE = 0.15


def cast_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of CUDA cases, C++ spellings: ``int i = static_cast<int>(blockIdx.x *
    blockDim.x + threadIdx.x);`` as C++ code writes the conversion of the unsigned built-ins
    (the front end reads C++'s named casts as the C cast of the same type), and accumulators
    brace-initialized, ``float acc{0.0f};``."""
    if dialect != "cuda" or rng.random() >= CXX_CAST_SHARE:
        return source
    source = re.sub(r"\b(float|double) (\w+) = (0\.0f?);", r"\1 \2{\3};", source)
    return _THREAD_ID.sub(r"\1int \2 = static_cast<int>(\3);", source)


def spelling_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of cases, the element type named through a typedef, as PolyBench and much
    research code write it (``typedef float DATA_TYPE;`` for arrays, scalars, locals, casts and
    the helper; CUDA files sometimes also ``typedef DATA_TYPE *DATA_PTR;`` for the writable
    arrays), and in other shares the thread ids, and the loop iterators declared at the top
    (C89), declared ``size_t`` or ``unsigned`` (every index expression of the generator stays
    non-negative, so the kernel's meaning is unchanged; not in pointer_variant's files, whose offsets go below zero on the way). The
    front end must resolve the typedefs for the analyses and keep the names in the output."""
    if rng.random() < TYPEDEF_SHARE:
        # a type word alone: 'unsigned int i' (a map's ids) is no 'unsigned' element type
        words = {t: rf"\b{t}\b(?!\s+(?:int|char|short|long)\b)"
                 for t in ("double", "unsigned", "float")}
        elem = next((t for t, word in words.items() if re.search(word, source)), None)
        name = rng.choice(["DATA_TYPE", "real", "elem_t"])
        if elem is not None and not re.search(rf"\b{name}\b", source):
            source = re.sub(words[elem], name, source)
            lines = [f"typedef {elem} {name};"]
            if dialect == "cuda" and rng.random() < 0.5:
                ptr = name.upper() + "_PTR"
                source = re.sub(rf"(?<!const ){name} \*(?!__restrict__)(\w+)([,)])",
                                rf"{ptr} \1\2", source)
                lines.append(f"typedef {name} *{ptr};")
            source = "\n".join(lines) + "\n" + source
    # (not with pointer_variant's 'P_at[e - 1]': e - 1 is -1 for a zero index, which an
    # unsigned e turns into a huge offset; nor with clamped taps, 'min(max(i - 1, 0), ...)',
    # whose i - 1 must go below zero to be clamped, and whose min(unsigned, int) is
    # ambiguous in both dialects; nor with taps clamped by if-statements, for the same reason)
    unsigned_ok = "_at[" not in source and not re.search(r"\b(min|max|clamp)\(|\btap\d", source)
    if rng.random() < INDEX_TYPE_SHARE and unsigned_ok:
        kind = rng.choice(INDEX_TYPES[dialect])
        source = _THREAD_ID.sub(rf"\1{kind} \2 = \3;", source)
        if kind == "long long" and rng.random() < 0.5:
            # the id computed in 64 bits, as code for more than 2^31 threads writes it
            source = re.sub(r"(long long [ij] = )\(?blockIdx\.([xy])", r"\1(long long)blockIdx.\2",
                            source)
    if rng.random() < C89_TYPE_SHARE and unsigned_ok:
        kind = rng.choice(INDEX_TYPES[dialect])
        source = _C89.sub(lambda m: _unsigned_iterators(m, kind, source), source)
    return source


#: Share of cases with border clamps written as if-statements whose sizes are unsigned
#: parameters, compared through a cast (:func:`unsigned_size_variant`).
UNSIGNED_SIZE_SHARE = 0.5
#: A clamp-if's upper test of a tap (clamp_if): ``tap3 >= N``, ``tap3 > N - 1``, ``N <= tap3``.
_TAP_TEST = re.compile(r"\((tap\d+) (?:>=|>) ([A-Z]\w*)\b|\(([A-Z]\w*) <= (tap\d+)\)")


def unsigned_size_variant(source: str, rng: random.Random, dialect: str) -> str:
    """In a share of the cases whose taps are clamped with if-statements, the sizes those
    clamps test declared unsigned (``unsigned int width``, as image code declares its
    dimensions) and compared through a cast, ``if (xx >= (int)width) xx = width - 1;``: the
    clamp is signed, its bound unsigned. The staged window's clamps and bounds mix the two
    (tiling/window.py reads them as int; OpenCL's min(int, uint) did not compile). Not with
    min/max/clamp calls or pointer offsets (their negative ints would meet the unsigned size)."""
    sizes = {m.group(2) or m.group(3) for m in _TAP_TEST.finditer(source)}
    if not sizes or re.search(r"\b(min|max|clamp)\(|_at\[", source) or \
            rng.random() >= UNSIGNED_SIZE_SHARE:
        return source
    kind = rng.choice(INDEX_TYPES[dialect][1:])
    source = _TAP_TEST.sub(lambda m: f"({m.group(1)} {m.group(0).split()[1]} (int){m.group(2)}"
                           if m.group(1) else f"((int){m.group(3)} <= {m.group(4)})", source)
    names = "|".join(sorted(sizes))
    return re.sub(rf"([(,] ?)int ({names})(?=[,)])", rf"\1{kind} \2", source)


def _unsigned_iterators(m: re.Match, kind: str, source: str) -> str:
    """The C89 iterator declaration ``int j, k;`` as ``kind j, k;`` (``size_t c;`` in a
    tutorial gemv), unless one of them counts down: ``j >= 0`` never fails for an unsigned
    ``j``."""
    names = m.group(2).split(", ")
    if any(re.search(rf"\b{n}\s*(>=|>|--|-=)|--{n}\b", source) for n in names):
        return m.group(0)
    return f"{m.group(1)}{kind} {m.group(2)};"
