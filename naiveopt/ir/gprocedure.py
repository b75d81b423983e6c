"""GProcedure and the objects it holds (paper 002, Fig. 3).

A GProcedure is one kernel: its parameters, its statement tree (pycparser c_ast, mutable), the
loops (GLoop), the thread configuration (GPragma), the memory expressions with decomposed
indices (MemoryExpression), and the resources the NVCC pass measured. The functional passes fill
these in; the optimization passes read them and rewrite the tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from pycparser import c_ast


@dataclass
class Param:
    """A kernel parameter: a global array (pointer) or a scalar."""

    name: str
    base_type: str                 # element type for pointers, the type itself for scalars
    is_pointer: bool
    const: bool = False            # pointee const for pointers
    restrict: bool = False
    # global | constant | local (pointers only); local: dynamic shared memory, an OpenCL
    # __local parameter or CUDA's extern __shared__ array (ir/dynamic_shared.py)
    address_space: str = "global"
    spelling: str = ""             # base_type as the user wrote it, where a typedef named it


@dataclass
class GPragma:
    """Thread configuration and user pragmas of a kernel.

    block_dim and global_dim hold (x, y) as strings of C expressions, or None where unknown.
    global_dim is the thread space the naive kernel needs (the paper's globalDimX/Y).
    """

    block_dim: tuple[str | None, str | None] = (None, None)
    global_dim: tuple[str | None, str | None] = (None, None)
    global_dim_source: str = ""    # where global_dim came from: define, pragma, guard
    # sizes that scalar parameters hold (metadata's ``{name = "width", role = "size",
    # value = "W"}``): size name -> parameter, so a guard over the thread space (W, H) reads
    # the parameters (passes/optimize/tiling/bounds_guard.py)
    size_holders: dict[str, str] = field(default_factory=dict)
    user: list[str] = field(default_factory=list)
    # global_dim as integers where the compile fixes them (launch.apply_extents), and per
    # axis how that is known or why it is not
    extents: tuple[int | None, int | None] = (None, None)
    extents_why: tuple[str, str] = ("", "")
    # the z dimension, never transformed (launch.py): the naive block z and thread space z
    # (None where unknown; block z defaults to 1)
    block_dim_z: str | None = None
    global_dim_z: str | None = None
    # axes ("x", "y") the kernel indexes by blockIdx alone, rewritten to global ids by the
    # predefined pass: the naive launch ran one thread per block along them
    block_id_axes: str = ""
    # per axis, the block size a compile-time constant in the kernel's index implies
    # (``blockIdx.x * BLOCK_SIZE + threadIdx.x`` with no blockDim.x: the author launches
    # BLOCK_SIZE-wide blocks), set by the predefined pass where nothing else gives the block
    # or what does agrees; launch.default_block takes it, and the thread-ids pass reads the
    # index as the global id
    block_constant: tuple[int | None, int | None] = (None, None)
    # per axis, (block, outputs a thread) of a coarsened kernel, set by the predefined pass:
    # a block-constant index to which the kernel adds a loop's iterator stepping through the
    # constant (``y = blockIdx.y * TILE + threadIdx.y``, rows ``y + j`` for j = 0, STEP, ...
    # < TILE) runs STEP-wide blocks whose threads each cover TILE / STEP rows; the naive
    # launch (launch.geometry) covers block * outputs there, and the passes keep it
    coarsened: tuple[tuple[int, int] | None, tuple[int, int] | None] = (None, None)
    # why the block the kernel was written for is unknown, where its index names a block
    # constant the predefined pass could not read as the block and nothing else (pragma,
    # metadata, the host code's launches) gives it: verification does not run the naive
    # kernel under a guessed block
    launch_unknown: str = ""

    @property
    def naive_coarsen(self) -> tuple[int, int]:
        """Outputs along (x, y) each thread of the naive kernel computes (``coarsened``)."""
        return tuple(c[1] if c else 1 for c in self.coarsened)  # type: ignore[return-value]


@dataclass
class GLoop:
    """A loop of the kernel and the memory expressions it affects."""

    node: c_ast.Node
    iterator: str | None
    lower: c_ast.Node | None
    upper: c_ast.Node | None       # exclusive bound when the condition is normalised to '<'
    step: int | None
    depth: int
    parent: "GLoop | None" = None
    canonical: bool = True
    why_not_canonical: str = ""
    memory_expressions: list["MemoryExpression"] = field(default_factory=list)


@dataclass
class IndexDecomposition:
    """An index split into constant, predefined, loop and unresolved terms (paper 002, (4)).

    ``constant`` holds the thread- and loop-invariant part (literals, scalar parameters,
    macro constants); ``predefined`` and ``loop`` map a thread id / loop iterator to its
    (invariant) coefficient; ``unresolved`` lists terms naiveopt cannot model (data-dependent
    values, products of ids, divisions...).
    """

    constant: sympy.Expr
    predefined: dict[str, sympy.Expr]
    loop: dict[str, sympy.Expr]
    unresolved: list[sympy.Expr]

    @property
    def resolved(self) -> bool:
        return not self.unresolved

    def coefficient(self, name: str) -> sympy.Expr:
        """The coefficient of a thread id or loop iterator (0 when absent)."""
        return self.predefined.get(name, self.loop.get(name, sympy.Integer(0)))

    def __str__(self) -> str:
        parts = [f"const={self.constant}"]
        parts += [f"pre[{k}]={v}" for k, v in sorted(self.predefined.items())]
        parts += [f"loop[{k}]={v}" for k, v in sorted(self.loop.items())]
        parts += [f"unresolved={u}" for u in self.unresolved]
        return " ".join(parts)


@dataclass
class MemoryExpression:
    """One access to an array: ``A[index]``, possibly recovered as ``A(y, x)``."""

    array: str
    node: c_ast.ArrayRef
    is_read: bool
    is_write: bool
    space: str                          # global | shared | constant | local
    index: sympy.Expr                   # the flat (1-D) index
    decomposition: IndexDecomposition
    two_d: tuple[sympy.Expr, sympy.Expr] | None = None   # recovered (y, x)
    width: sympy.Expr | None = None                      # row width used for recovery
    loops: list[str] = field(default_factory=list)       # enclosing loop iterators, outer first
    vector_width: int = 1                                # elements per access (float4: 4)

    @property
    def kind(self) -> str:
        return "read+write" if self.is_read and self.is_write else (
            "write" if self.is_write else "read")

    def describe(self) -> str:
        if self.two_d is not None:
            return f"{self.array}({self.two_d[0]}, {self.two_d[1]})"
        return f"{self.array}[{self.index}]"


@dataclass
class Resources:
    """What the NVCC pass measured for one architecture."""

    arch: str
    registers: int
    shared_bytes: int
    tool: str


def size_param_name(size: str) -> str:
    """The parameter that takes a size the naive kernel did not (``HEIGHT_A`` ->
    ``naiveopt_HEIGHT_A``), in the kernel and its launcher: prefixed, so that a build
    defining the size as a macro (``-DHEIGHT_A=4096``, as the paper's style does) does not
    turn the declaration into ``int 4096``."""
    return f"naiveopt_{size}"


@dataclass
class Delinearized:
    """A 1-D kernel read as 2-D (passes/functional/delinearize.py): its naive thread space
    ``extent`` (x; y is 1) is ``height`` rows of ``width`` threads, the global id ``i`` read
    as ``idy * width + idx``. All C expressions in the kernel's names. ``original`` is the
    kernel body as it was and ``rewritten`` the 2-D body as C: where no pass changed the
    launch, the body is put back (the 1-D form) if nothing changed it, else written back."""

    extent: str
    width: str
    height: str
    original: c_ast.Compound
    rewritten: str
    # the guard's comparisons of the 1-D id, as C: (the 2-D test that replaced one, the 1-D
    # test it was)
    guards: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class GProcedure:
    """One kernel function in the GPU IR."""

    name: str
    params: list[Param]
    func: c_ast.FuncDef                  # the kernel as a (mutable) c_ast function definition
    file: str
    line: int
    dialect: str                         # the dialect the tree is currently written in
    pragma: GPragma = field(default_factory=GPragma)
    loops: list[GLoop] = field(default_factory=list)
    memory_expressions: list[MemoryExpression] = field(default_factory=list)
    resources: Resources | None = None
    predefined_names: dict[str, str] = field(default_factory=dict)  # id -> C variable name
    launch_block: tuple[int, int] | None = None   # block size fixed by a transformation
    # the global ids ("idx", "idy") the kernel computes in 64 bits, and the block ids of
    # their axes (passes/functional/id_width.py): the output declares them ``long long``
    # (OpenCL ``long``), and the locals the passes derive from them (index_type)
    wide_ids: set[str] = field(default_factory=set)
    coarsen: tuple[int, int] = (1, 1)             # outputs per thread in x, y (thread merge)
    # threads that share one naive thread's work along x (split-reduction: a group of lanes
    # sums one output's loop); the block's x threads cover block_x / lanes outputs
    lanes: int = 1
    # an unguarded kernel launched with a coverage (block x coarsen) that does not divide
    # its naive block relies on its thread space being a multiple of this (launch.py)
    launch_multiple: tuple[int, int] | None = None
    # launched by the file's host code (frontend/launch_sites.py): the output's launcher is
    # called in place of each launch, so the kernel must keep the parameters the host passes
    host_launched: bool = False
    # why a launch of the kernel in the host code cannot be rewritten ('' if none): the
    # kernel is then left as it is (launch.untransformable), its launches as written
    keep_launch: str = ""
    # the host-filled file-scope data (GModule.globals) the kernel reads, itself or through
    # helpers, in source order: OpenCL takes them as extra arguments after its own (fixed at
    # parse time, so the naive and optimized kernels take the same arguments)
    global_args: list[str] = field(default_factory=list)
    # the arguments of the kernel's own __launch_bounds__ (``256, 2``; '' if none): a CUDA
    # output whose launch did not change keeps them (emit.with_launch_contract)
    launch_bounds: str = ""
    # declared in ``extern "C"`` (C linkage: code that loads it by name, cupy's RawKernel or
    # cuModuleGetFunction, finds it unmangled): the CUDA output declares it so too
    extern_c: bool = False
    # an OpenCL kernel's own ``reqd_work_group_size`` (``64, 1, 1``; '' if none): the naive
    # block; an OpenCL output whose block no pass fixed keeps it (emit.with_launch_contract)
    work_group_size: str = ""
    # the threads per block those bounds allow (their first argument, a literal or an
    # integer macro; None if none or unknown): the naive block stays within them
    max_threads: int | None = None
    # the kernel template instance this kernel is, as the user wrote it (``MatrixMulCUDA<16>``;
    # '' for an ordinary kernel): frontend/templates.py
    instance_of: str = ""
    # the macros standing for its number template arguments (``MatrixMulCUDA_16_BLOCK_SIZE``):
    # the host code chose the instance, so such a constant in a thread's index is the block
    # the host launches it with (passes/functional/predefined.py)
    instance_constants: tuple[str, ...] = ()
    # identifiers the translations renamed because the dialect reserves the user's name:
    # name in the tree and params -> the user's name (passes.functional.names)
    renamed: dict[str, str] = field(default_factory=dict)
    # how the output lays out 3-vector arrays where the dialects differ (12 bytes a float3
    # in CUDA, 16 in OpenCL): lines for its header (passes/functional/vector3_layout.py)
    layout_notes: list[str] = field(default_factory=list)
    # parameters of struct type, read member by member as scalar parameters (ir/structs.py)
    struct_params: list = field(default_factory=list)
    # pointer parameters to structs of one scalar type, read as arrays of it (ir/structs.py)
    struct_arrays: list = field(default_factory=list)
    # parameters that point to rows of a fixed shape (``float a[N][M]``), read as flat arrays
    # (ir/array_params.ArrayParam); a CUDA output writes them back
    array_params: list = field(default_factory=list)
    # sizes the kernel takes as ``int`` parameters after its own, which the naive kernel did
    # not: a transformation gave the unguarded kernel a bounds guard over its thread space
    # (passes/optimize/tiling/bounds_guard.py); every runner passes their values. The sizes'
    # names (``HEIGHT_A``); the parameters are named by size_param_names
    size_params: list[str] = field(default_factory=list)
    # (axis, parameter) for each size parameter that stands for the launch's own size
    # (``blockDim.x * gridDim.x`` read as the thread space's extent W: ``naiveopt_W``);
    # written back as the launch's size where no pass changed the launch
    # (passes/functional/launch_extents.py)
    launch_extents: list[tuple[str, str]] = field(default_factory=list)
    # the grid-stride loop the grid-stride pass made one element per thread (its iterator and
    # its condition as C; None if none): the output needs its thread space launched, so it is
    # written back as the loop where no pass changes the launch (canonicalize/grid_stride.py)
    grid_stride: tuple[str, str] | None = None
    # the 1-D kernel read as 2-D (Delinearized; None if not): launched over (width, height)
    # where a pass changed the launch, else written back as the 1-D kernel
    delinearized: Delinearized | None = None

    @property
    def body(self) -> c_ast.Compound:
        return self.func.body

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def index_type(self, *ids: str) -> str:
        """The C type of a local the passes compute from the predefined ``ids`` (a split
        output's row from ``bidx``): 64-bit where one of them is (wide_ids), else int."""
        return "long long" if self.wide_ids & set(ids) else "int"

    def names_taken(self) -> set[str]:
        """Every name a new local must not take: the kernel's identifiers and the names its
        predefined ids will be declared under (``idx_1`` where the kernel has a local ``idx``:
        a copy ``idx_1`` of that local clashed with the thread id)."""
        from .rewrite import identifiers

        return identifiers(self.func) | set(self.predefined_names.values())

    @property
    def arrays(self) -> list[Param]:
        return [p for p in self.params if p.is_pointer]

    @property
    def size_param_names(self) -> dict[str, str]:
        """Each added size (size_params) -> the parameter that takes it
        (:func:`size_param_name`)."""
        return {n: size_param_name(n) for n in self.size_params}


@dataclass
class GlobalVar:
    """A file-scope variable a kernel reads: ``__constant__ float M[MASK_WIDTH];``, an
    initialized table, a read-only ``__device__`` global, OpenCL's program-scope ``__constant``.

    Kernels only read these (the front end rejects writes: mutable global state is not
    modelled), so every pass may treat an access as a read of read-only data; memory
    expressions give them space ``constant``. ``decl`` is the declaration without any address
    space (emission adds the dialect's); ``dims`` the dimensions as written, outermost first
    (macro names kept), ``extents`` their values at this compile. Without an initializer the
    host fills the data (cudaMemcpyToSymbol): OpenCL has no such symbols, so there it becomes a
    kernel argument appended to each kernel that uses it (ir/globals.py).
    """

    name: str
    base_type: str
    dims: list[str]                 # [] for a scalar
    extents: list[int]
    space: str                      # constant (__constant__ / __constant) | device (__device__)
    const: bool
    decl: c_ast.Decl                # name, type and initializer (c_ast.InitList or expression)
    line: int

    @property
    def initialized(self) -> bool:
        return self.decl.init is not None

    @property
    def host_filled(self) -> bool:
        """Whether the host writes the data before a launch (no initializer)."""
        return self.decl.init is None


@dataclass
class GModule:
    """A kernel file: its kernels, helper functions and preserved object-like macros."""

    path: str
    dialect: str                          # the dialect of the input file
    procedures: list[GProcedure]
    helpers: list[c_ast.FuncDef] = field(default_factory=list)
    macros: dict[str, str] = field(default_factory=dict)   # object-like #defines kept by name
    pragmas: list[str] = field(default_factory=list)       # file-level '#pragma naiveopt' lines
    paper_ids: list[str] = field(default_factory=list)     # predefined ids used undeclared
    globals: list[GlobalVar] = field(default_factory=list)  # file-scope data, source order
    # the file's typedefs of scalar and vector types, name -> the type it denotes (written
    # into the output where the kernels still spell a type through one: ir/typenames.py)
    typedefs: dict[str, str] = field(default_factory=dict)
    # the input's lines up to its last '#include' (device code cut), as written: a CUDA output
    # keeps them first, for the host code and the names the prelude declared on their behalf
    preamble: str = ""
    # the file includes the CUDA samples' helper_math.h (ir/helper_math.py): its kernels'
    # vector arithmetic is the header's, which a file compiled without it is given
    helper_math: bool = False
    # the input's host code (functions and data that are neither kernels nor device code),
    # passed through verbatim into a CUDA output; empty when the file has none
    host_code: str = ""
    # every use of a kernel's name in the host code (frontend/launch_sites.py): launches to
    # rewrite, and uses that keep their kernel naive
    launch_sites: list = field(default_factory=list)
    # the integer values this compile fixes (frontend.fixed_macros: -D and unconditional
    # #defines), and the #ifndef defaults a build may override
    fixed: dict[str, int] = field(default_factory=dict)
    overridable: set[str] = field(default_factory=set)
    # kernels the file declares in a namespace, which naiveopt does not read: written as they
    # are, inside the text around the kernels; (message, line, column) each
    left_as_written: list[tuple[str, int, int]] = field(default_factory=list)
    # kernels beside the read ones that the translation refused (printf, warp shuffles...):
    # their definitions as written, which an output in the input's dialect carries after its
    # kernels (frontend/verbatim.py), and the identifiers they spell (macros, typedefs)
    verbatim: list[str] = field(default_factory=list)
    # file-scope structs the host fills, read member by member (ir/structs.StructGlobal)
    struct_globals: list = field(default_factory=list)
    verbatim_names: set[str] = field(default_factory=set)
