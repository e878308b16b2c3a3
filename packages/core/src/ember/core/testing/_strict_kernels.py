"""``cupy.ElementwiseKernel`` on the strict GPU double: the kernel's CUDA C is parsed and
evaluated with numpy, so generated kernels (graph mode's fused element-wise chains) run
in CI without a GPU, and a kernel that would not compile here fails here too: with
cupy's ``CompileException`` (its text in nvrtc's log form), at the kernel's first call.

The C it accepts is the subset such kernels are written in: statements
``[T] name = expression;``, where an expression has identifiers (the parameters and
earlier names), integer literals, ``+ - * /``, comparisons, ``&& || !``, the ternary
``c ? a : b``, parentheses and calls of CUDA math functions (``exp``, ``log``, ``tanh``,
``sqrt``, ``fabs``, ``isnan``, ...). Floating-point literals are refused: in C they are
double and would promote a float kernel, which numpy's weak Python floats would not
mirror. All parameters of the type placeholder ``T`` must have one dtype, as in cupy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _strict_launches, _strict_numerics

_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt,
    "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "fabs": np.abs, "isnan": np.isnan,
    "isinf": np.isinf, "floor": np.floor, "ceil": np.ceil, "pow": np.power,
}
# CUDA's math functions round as in cupy's own kernels (cupy.exp runs the same expf)
_FUNCTIONS = {n: _strict_numerics.gpu_math(n, f) for n, f in _FUNCTIONS.items()}
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+[eE])|(\d+)|([A-Za-z_]\w*)|"
                    r"(\|\||&&|<=|>=|==|!=|[-+*/<>!?:(),]))")
_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
           "<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
           "==": np.equal, "!=": np.not_equal, "&&": np.logical_and, "||": np.logical_or}
Node = Callable[[dict[str, Any]], Any]


class KernelSyntaxError(ValueError):
    """The kernel's C is outside the subset the double evaluates (nvcc would reject it
    or the double cannot mirror it)."""


class CompileException(Exception):
    """``cupy.cuda.compiler.CompileException`` as cupy 14 raises it: at a kernel's first
    call (construction compiles nothing), an ``Exception`` (not a ``ValueError``) whose text
    is the compiler's log, ``<file>(<line>): error: <why>`` then nvrtc's summary line."""

    def __init__(self, msg: str, source: str, name: str, options: tuple[str, ...],
                 backend: str = "nvrtc") -> None:
        self._msg = msg
        self.source = source
        self.name = name
        self.options = options
        self.backend = backend
        super().__init__()

    def __str__(self) -> str:
        return self._msg

    __repr__ = __str__

    def get_message(self) -> str:
        return self._msg


def _compile_error(e: KernelSyntaxError, name: str, operation: str,
                   options: tuple[str, ...]) -> CompileException:
    """What cupy raises for the C the double could not read, in nvrtc's log form."""
    path = f"/tmp/{hashlib.sha1(operation.encode()).hexdigest()}.cubin.cu"
    why = str(e).removeprefix(f"ElementwiseKernel {name}: ")
    log = f'{path}(1): error: {why}\n\n1 error detected in the compilation of "{path}".\n'
    return CompileException(log, operation, path, options)


class _Parser:
    def __init__(self, text: str, kernel: str) -> None:
        self.kernel = kernel
        self.names: set[str] = set()  # the identifiers the expression reads
        self.tokens: list[tuple[str, str]] = []
        pos, text = 0, text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                self.fail(f"cannot read {text[pos:pos + 20]!r}")
            assert m is not None
            if m.group(1):
                self.fail(f"floating-point literal {m.group(1)!r} (double in C): write an "
                          "integer or a parameter")
            kind = "int" if m.group(2) else "name" if m.group(3) else "op"
            self.tokens.append((kind, m.group(m.lastindex or 0)))
            pos = m.end()
        self.i = 0

    def fail(self, why: str) -> None:
        raise KernelSyntaxError(f"ElementwiseKernel {self.kernel}: {why}")

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            self.fail("the expression ends early")
        tok = self.tokens[self.i]
        if want is not None and tok[1] != want:
            self.fail(f"expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.ternary()
        if self.i != len(self.tokens):
            self.fail(f"unexpected {self.peek()!r}")
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.take("?")
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        return lambda env: np.where(cond(env), a(env), b(env))

    _LEVELS = (("||",), ("&&",), ("<", ">", "<=", ">=", "==", "!="), ("+", "-"), ("*", "/"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            fn = _BINARY[self.take()[1]]
            right = self.binary(level + 1)
            left = (lambda f, a, b: lambda env: f(a(env), b(env)))(fn, left, right)
        return left

    def unary(self) -> Node:
        op = self.peek()
        if op in ("-", "!", "+"):
            self.take()
            inner = self.unary()
            if op == "-":
                return lambda env: np.negative(inner(env))
            if op == "!":
                return lambda env: np.logical_not(inner(env))
            return inner
        return self.primary()

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "int":
            value = int(text)
            return lambda env: value
        if text == "(":
            node = self.ternary()
            self.take(")")
            return node
        if kind != "name":
            self.fail(f"unexpected {text!r}")
        if self.peek() != "(":
            self.names.add(text)
            return lambda env: env[text]
        fn = _FUNCTIONS.get(text)
        if fn is None:
            self.fail(f"{text!r} is not a CUDA math function the double knows")
        self.take("(")
        args = [self.ternary()]
        while self.peek() == ",":
            self.take(",")
            args.append(self.ternary())
        self.take(")")
        return lambda env: fn(*(a(env) for a in args))


def _params(text: str, kernel: str) -> list[tuple[str, str]]:
    out = []
    for p in filter(None, (s.strip() for s in text.split(","))):
        parts = p.split()
        if len(parts) != 2:
            raise KernelSyntaxError(f"ElementwiseKernel {kernel}: parameter {p!r} is not "
                                    "'<type> <name>'")
        out.append((parts[0], parts[1]))
    return out


class StrictElementwiseKernel:
    """``cupy.ElementwiseKernel(in_params, out_params, operation, name, ...)`` on the
    strict double. Calling it with the input arrays (and optionally the output arrays)
    broadcasts the inputs and evaluates ``operation`` element-wise."""

    def __init__(self, ns: Any, in_params: str, out_params: str, operation: str,
                 name: str = "kernel", reduce_dims: bool = True, preamble: str = "",
                 no_return: bool = False, return_tuple: bool = False,
                 options: tuple[str, ...] = (), **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"ElementwiseKernel: unexpected arguments {sorted(kwargs)}")
        if preamble:
            raise KernelSyntaxError(f"ElementwiseKernel {name}: the strict double evaluates "
                                    "no preamble")
        self._ns = ns
        self.name = name
        self.options = tuple(options)
        self.in_params = _params(in_params, name)
        self.out_params = _params(out_params, name)
        self.return_tuple = return_tuple
        self._statements: list[tuple[str, str | None, Node]] = []
        self._error: CompileException | None = None  # raised at the first call, as cupy's
        try:
            self._parse(operation, name)
        except KernelSyntaxError as e:
            self._error = _compile_error(e, name, operation, self.options)

    def _parse(self, operation: str, name: str) -> None:
        known = {n for _, n in self.in_params} | {n for _, n in self.out_params}
        for stmt in filter(None, (s.strip() for s in operation.split(";"))):
            m = re.fullmatch(r"(?:(\w+)\s+)?(\w+)\s*=\s*(.+)", stmt, re.S)
            if m is None:
                raise KernelSyntaxError(f"ElementwiseKernel {name}: statement {stmt!r} is not "
                                        "'[type] name = expression'")
            parser = _Parser(m.group(3), name)
            node = parser.parse()
            undefined = sorted(parser.names - known)
            if undefined:
                raise KernelSyntaxError(f"ElementwiseKernel {name}: identifier(s) {undefined} "
                                        f"are undefined in {stmt!r}")
            known.add(m.group(2))
            self._statements.append((m.group(2), m.group(1), node))
        assigned = {s[0] for s in self._statements}
        missing = [n for _, n in self.out_params if n not in assigned]
        if missing:
            raise KernelSyntaxError(f"ElementwiseKernel {name}: outputs {missing} are never "
                                    "assigned")

    def __call__(self, *args: Any, size: Any = None, block_size: Any = None,
                 stream: Any = None) -> Any:
        ns, n_in = self._ns, len(self.in_params)
        if len(args) not in (n_in, n_in + len(self.out_params)):
            raise TypeError(f"Wrong number of arguments for {self.name!r}: {len(args)} given, "
                            f"{n_in} or {n_in + len(self.out_params)} expected")
        arrays = [ns._unwrap(a, self.name) for a in args]
        types: dict[str, np.dtype] = {}
        env: dict[str, Any] = {}
        for (ctype, pname), a in zip(self.in_params, arrays):
            a = np.asarray(a)
            if ctype in types and types[ctype] != a.dtype:
                raise TypeError(f"Type is mismatched. {pname} {a.dtype} {ctype} "
                                f"{types[ctype]} (kernel {self.name})")
            types.setdefault(ctype, a.dtype)
            env[pname] = a
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays[:n_in]))
        if self._error is not None:
            raise self._error

        def compute() -> list[Any]:  # the kernel's launch (recorded while capturing)
            local = dict(env)
            with np.errstate(all="ignore"):
                for target, ctype, node in self._statements:
                    value = node(local)
                    if ctype is not None:
                        value = np.asarray(value).astype(_c_type(ctype, types, self.name),
                                                         copy=False)
                    local[target] = value
            results = []
            for k, (ctype, pname) in enumerate(self.out_params):
                dtype = _c_type(ctype, types, self.name)
                value = np.broadcast_to(np.asarray(local[pname]).astype(dtype, copy=False),
                                        shape)
                if len(arrays) > n_in:
                    arrays[n_in + k][...] = value
                    results.append(arrays[n_in + k])
                else:
                    results.append(np.array(value))
            return results

        results = ns._backend.run(compute, arrays)
        ns._backend.launched(_strict_launches.kernels("ElementwiseKernel", arrays, {},
                                                      results))
        outs = [args[n_in + k] if len(arrays) > n_in else ns._wrap(r, self.name)
                for k, r in enumerate(results)]
        return tuple(outs) if len(outs) > 1 or self.return_tuple else outs[0]


def _c_type(ctype: str, types: dict[str, np.dtype], kernel: str) -> np.dtype:
    if ctype in types:
        return types[ctype]
    known = {"float": np.float32, "double": np.float64, "bool": np.bool_, "int": np.int32}
    if ctype not in known:
        raise KernelSyntaxError(f"ElementwiseKernel {kernel}: type {ctype!r} is neither a "
                                "placeholder bound by an input nor a C type the double knows")
    return np.dtype(known[ctype])
