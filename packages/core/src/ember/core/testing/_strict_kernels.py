"""``cupy.ElementwiseKernel`` on the strict GPU double: the kernel's CUDA C is parsed and
evaluated with numpy, so generated kernels (graph mode's fused element-wise chains) run
in CI without a GPU, and a kernel that would not compile here fails here too: with
cupy's ``CompileException`` (its text in nvrtc's log form), at the kernel's first call.

The C it accepts is the subset such kernels are written in: statements
``type name = expression;`` (a declaration: ``T``, ``float``, ``double``, ``bool``, ``int``,
``unsigned int``, ``long long``, ``unsigned long long``, ...) and ``name = expression;``
(to a declared name or an output; inputs are const, as cupy declares them), where an
expression has identifiers (the parameters, earlier names and cupy's loop index ``i``),
integer literals (decimal or hexadecimal, suffixes ``u``, ``l``, ``ll``), ``+ - * / %``,
comparisons, ``&& || !``, the bitwise ``& | ^ ~ << >>``, casts ``(type)x``, the ternary
``c ? a : b``, parentheses and calls of CUDA math functions (``exp``, ``log``, ``tanh``,
``sqrt``, ``fabs``, ``isnan``, ...; ``ilogb``, ``ldexp``, ``__umulhi``). Operators follow
C's types (``_strict_c``): unsigned arithmetic wraps, integer ``/`` truncates, shifts
outside the type's width are refused. Floating-point literals are refused: in C they are
double and would promote a float kernel, which numpy's weak Python floats would not
mirror. Parameters follow cupy's rules: a one-letter type is a placeholder (all of one
placeholder must have one dtype), any other is a numpy dtype name (``float32``,
``uint64``). A ``raw`` input is read by subscript, ``x[j]``: ``j`` an integer, the
element at that position of ``x`` in C order (cupy's ``CArray::operator[]``, views
included); raw inputs take no part in the loop's shape. The double evaluates both arms of
``?:``, so a subscript must be in bounds in every element, the discarded arm's too (write
``x[inside ? j : 0]``, as a kernel that never reads out of bounds does); one out of
bounds is refused (a GPU would read garbage or fault). ``raw`` outputs are refused.
An output is a reference to its element (cupy declares ``T &o = _raw_o[_ind.get()]``), so
a kernel may read it: its value so far, which before its first assignment is the element
of the array the caller passed (an update in place: ``flag = flag | bad``); reading it
there is refused when the call allocates the output (cupy's memory is uninitialised).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _strict_c, _strict_launches, _strict_numerics
from ._strict_c import C_TYPES, CError, Lit

_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt,
    "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "fabs": np.abs, "isnan": np.isnan,
    "isinf": np.isinf, "floor": np.floor, "ceil": np.ceil, "pow": np.power,
}
# CUDA's math functions round as in cupy's own kernels (cupy.exp runs the same expf)
_FUNCTIONS = {n: _strict_numerics.gpu_math(n, f) for n, f in _FUNCTIONS.items()}
# classification functions: floating-point arguments only (nvrtc: ambiguous on an int)
_FUNCTIONS.update({n: _strict_c.floating_only(n, _FUNCTIONS[n]) for n in ("isnan", "isinf")})
# exact functions: no rounding to move
_FUNCTIONS.update({"ilogb": _strict_c.ilogb, "ldexp": _strict_c.ldexp,
                   "__umulhi": _strict_c.umulhi})
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+[eE])|(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)|"
                    r"([A-Za-z_]\w*)|(\|\||&&|<<|>>|<=|>=|==|!=|[-+*/%<>!?:(),&|^~\[\]]))")
_C_WORDS = frozenset(w for t in C_TYPES for w in t.split())
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
    def __init__(self, text: str, kernel: str, placeholders: frozenset[str] = frozenset(),
                 raw: frozenset[str] = frozenset(), contract: bool = False) -> None:
        self.kernel = kernel
        self.contract = contract  # nvcc's --fmad=true: a product and a sum are one fma
        self.placeholders = placeholders  # the parameters' one-letter types
        self.raw = raw  # the raw inputs: read only by subscript
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
        return lambda env: _strict_c.select(cond(env), a(env), b(env))

    _LEVELS = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="),
               ("<", ">", "<=", ">="), ("<<", ">>"), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            if self.contract and op in ("+", "-") and (
                    hasattr(left, "product") or hasattr(right, "product")):
                left = _contracted(op, left, right)
                continue
            fn = _strict_c.BINARY[op]
            node = (lambda f, a, b: lambda env: f(a(env), b(env)))(fn, left, right)
            if op == "*":
                node.product = (left, right)  # type: ignore[attr-defined]
            left = node
        return left

    def cast_type(self) -> str | None:
        """The type of a cast ``(type)`` starting here, or None for a parenthesis."""
        j, words = self.i + 1, []
        while j < len(self.tokens) and self.tokens[j][0] == "name":
            words.append(self.tokens[j][1])
            j += 1
        if not words or j >= len(self.tokens) or self.tokens[j][1] != ")":
            return None
        name = " ".join(words)
        if name in C_TYPES or name in self.placeholders:
            self.i = j + 1
            return name
        if words[0] in _C_WORDS:
            self.fail(f"type {name!r} is not a C type the double knows")
        return None

    def unary(self) -> Node:
        op = self.peek()
        if op in ("-", "!", "+", "~"):
            self.take()
            inner = self.unary()
            if op == "-":
                return lambda env: _strict_c.negate(inner(env))
            if op == "!":
                return lambda env: np.logical_not(_strict_c.truth(inner(env)))
            if op == "~":
                return lambda env: _strict_c.invert(inner(env))
            return inner
        if op == "(":
            ctype = self.cast_type()
            if ctype is not None:
                inner = self.unary()
                return lambda env: _strict_c.cast(inner(env), env["@types"](ctype))
        return self.primary()

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "int":
            try:
                lit = _strict_c.literal(text)
            except CError as e:
                self.fail(str(e))
            return lambda env: lit
        if text == "(":
            node = self.ternary()
            self.take(")")
            return node
        if kind != "name":
            self.fail(f"unexpected {text!r}")
        if self.peek() == "[" or text in self.raw:
            return self.subscript(text)
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
        return lambda env: fn(*(_strict_c.cast(v, v.dtype) if isinstance(v, Lit) else v
                                for v in (a(env) for a in args)))


    def subscript(self, name: str) -> Node:
        """``name[index]`` of a raw input: its element at that C-order position."""
        if name not in self.raw:
            self.fail(f"subscripted value {name!r} is not a raw array parameter")
        if self.peek() != "[":
            self.fail(f"raw parameter {name!r} is an array (CArray), not a value: read "
                      f"its elements as {name}[index]")
        self.names.add(name)
        self.take("[")
        index = self.ternary()
        self.take("]")

        def read(env: dict[str, Any]) -> Any:
            j = index(env)
            if _strict_c.dtype_of(j).kind not in "iub":
                raise CError(f"expression must have integral or unscoped enum type "
                             f"(subscript of {name!r})")
            j = np.asarray(j.value if isinstance(j, Lit) else j).astype(np.int64)
            flat = env[name].reshape(-1)
            bad = (j < 0) | (j >= flat.size)
            if bad.any():
                raise _strict_c.Undefined(
                    f"{name}[{int(j[bad].flat[0])}] reads outside its {flat.size} elements "
                    "(a GPU reads garbage or faults; the double evaluates both arms of "
                    "?:, so a subscript must be in bounds in every element)")
            return flat[j]
        return read


def _contracted(op: str, left: Node, right: Node) -> Node:
    """``left op right`` where one side is a product, as nvcc compiles it by default
    (``--fmad=true``): one fused multiply-add, the product unrounded. The H200 showed it:
    SGD's ``p - g * lr`` kernel differed from the ops' bits by an ulp until compiled with
    ``--fmad=false``. Modelled for float32 (the exact product in float64, one addition
    there, then float32); other types are evaluated unfused."""
    first = hasattr(left, "product")
    a_node, b_node = (left if first else right).product  # type: ignore[attr-defined]
    other = right if first else left

    def node(env: dict[str, Any]) -> Any:
        a, b, c = a_node(env), b_node(env), other(env)
        types = [_strict_c.dtype_of(v) for v in (a, b, c)]
        if _strict_c.common(_strict_c.common(types[0], types[1]), types[2]) != np.float32:
            prod = _strict_c.BINARY["*"](a, b)
            return _strict_c.BINARY[op](*((prod, c) if first else (c, prod)))
        x, y, z = (np.asarray(v.value if isinstance(v, Lit) else v, np.float64)
                   for v in (a, b, c))
        exact = x * y  # float32 operands: the product is exact in float64
        total = exact + z if op == "+" else (exact - z if first else z - exact)
        return total.astype(np.float32)
    return node


def _params(text: str, kernel: str, raw: set[str] | None = None) -> list[tuple[str, str]]:
    """cupy's parameters (``ParameterInfo``): ``<type> <name>``, the type a one-letter
    placeholder or a numpy dtype's own name (cupy raises ``ValueError('Wrong type')``
    for ``float`` or ``double`` there); ``raw <type> <name>`` only where ``raw`` (a set,
    given for the inputs) collects their names: the double evaluates no raw output."""
    out = []
    for p in filter(None, (s.strip() for s in text.split(","))):
        parts = p.split()
        if len(parts) == 3 and parts[0] == "raw" and raw is not None:
            raw.add(parts[2])
            parts = parts[1:]
        if len(parts) != 2:
            if "raw" in parts[:-2]:
                raise KernelSyntaxError(f"ElementwiseKernel {kernel}: raw output parameter "
                                        f"{p!r}: the strict double evaluates raw inputs only")
            raise KernelSyntaxError(f"ElementwiseKernel {kernel}: parameter {p!r} is not "
                                    "'<type> <name>'")
        if len(parts[0]) > 1:
            try:
                ok = np.dtype(parts[0]).name == parts[0]
            except TypeError:
                ok = False
            if not ok:
                raise ValueError(f"Wrong type {parts[0]}")
        out.append((parts[0], parts[1]))
    return out


def bind_inputs(params: list[tuple[str, str]], arrays: list[Any],
                kernel: str) -> tuple[dict[str, np.dtype], dict[str, Any]]:
    """(the types the inputs bind, the inputs by name) for a kernel's call: each placeholder
    takes its first input's dtype and every other input of it must have that dtype; a
    Python scalar given for a parameter of a named dtype takes it (cupy's
    ``CScalar.apply_dtype``: int32 arithmetic stays int32)."""
    types: dict[str, np.dtype] = {}
    env: dict[str, Any] = {}
    for (ctype, pname), a in zip(params, arrays):
        a = np.asarray(a, dtype=ctype if len(ctype) > 1 and not isinstance(
            a, np.ndarray) else None)
        if ctype in types and types[ctype] != a.dtype:
            raise TypeError(f"Type is mismatched. {pname} {a.dtype} {ctype} "
                            f"{types[ctype]} (kernel {kernel})")
        types.setdefault(ctype, a.dtype)
        env[pname] = a
    return types, env


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
        self.raw: set[str] = set()  # the raw inputs' names
        self.in_params = _params(in_params, name, self.raw)
        self.out_params = _params(out_params, name)
        self.return_tuple = return_tuple
        self.operation = operation
        self._statements: list[tuple[str, str | None, Node]] = []
        self._read_before_assigned: set[str] = set()  # outputs read as the caller gave them
        self._error: CompileException | None = None  # raised at the first call, as cupy's
        try:
            self._parse(operation, name)
        except KernelSyntaxError as e:
            self._error = _compile_error(e, name, operation, self.options)

    def _parse(self, operation: str, name: str) -> None:
        inputs = {n for _, n in self.in_params}
        declared = {n: t for t, n in self.out_params}  # what an assignment converts to
        placeholders = frozenset(t for t, _ in self.in_params + self.out_params if len(t) == 1)
        known = inputs | set(declared) | {"i"}
        for stmt in filter(None, (s.strip() for s in operation.split(";"))):
            m = re.fullmatch(r"((?:[A-Za-z_]\w*\s+)*)([A-Za-z_]\w*)\s*=(?!=)\s*(.+)", stmt, re.S)
            if m is None:
                raise KernelSyntaxError(f"ElementwiseKernel {name}: statement {stmt!r} is not "
                                        "'[type] name = expression'")
            ctype, target = " ".join(m.group(1).split()) or None, m.group(2)
            if ctype is not None:
                if ctype not in C_TYPES and ctype not in placeholders:
                    raise KernelSyntaxError(f"ElementwiseKernel {name}: type {ctype!r} is "
                                            "neither a placeholder bound by a parameter nor a C "
                                            "type the double knows")
                if target in known:
                    raise KernelSyntaxError(f"ElementwiseKernel {name}: {target!r} is already "
                                            f"declared ({stmt!r})")
            elif target in inputs or target == "i":
                raise KernelSyntaxError(f"ElementwiseKernel {name}: expression must be a "
                                        f"modifiable lvalue: {target!r} is const ({stmt!r})")
            elif target not in declared:
                raise KernelSyntaxError(f"ElementwiseKernel {name}: identifier {target!r} is "
                                        f"undefined in {stmt!r}")
            parser = _Parser(m.group(3), name, placeholders, frozenset(self.raw),
                             contract="--fmad=false" not in self.options)
            node = parser.parse()
            undefined = sorted(parser.names - known)
            if undefined:
                raise KernelSyntaxError(f"ElementwiseKernel {name}: identifier(s) {undefined} "
                                        f"are undefined in {stmt!r}")
            outputs = {n for _, n in self.out_params}
            assigned = {t for t, _, _ in self._statements}
            self._read_before_assigned |= (parser.names & outputs) - assigned
            if ctype is not None:
                declared[target] = ctype
            known.add(target)
            self._statements.append((target, declared[target], node))
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
        types, env = bind_inputs(self.in_params, arrays, self.name)
        for (ctype, _), a in zip(self.out_params, arrays[n_in:]):  # given outputs bind
            if len(ctype) == 1:
                types.setdefault(ctype, np.asarray(a).dtype)
        raw = [k < n_in and self.in_params[k][1] in self.raw for k in range(len(arrays))]
        looped = [a for a, r in zip(arrays, raw) if not r]  # raw inputs shape no loop
        if not any(isinstance(a, np.ndarray) for a in looped):
            raise ValueError("Loop size is undecided.")
        shape = np.broadcast_shapes(*(np.shape(a) for a in looped))  # outputs given too
        if any(np.shape(a) != shape for a in arrays[n_in:]):
            raise ValueError("Out shape is mismatched")
        if self._error is not None:
            raise self._error
        for k, out in enumerate(arrays[n_in:]):
            for (_, pname), a, r in zip(self.in_params, arrays, raw):
                if not r and _races(a, out, shape):
                    raise ValueError(
                        f"ElementwiseKernel {self.name}: input {pname!r} overlaps output "
                        f"{self.out_params[k][1]!r} at other elements: a race on a GPU (an "
                        "element may read another that the same launch writes)")
        if len(arrays) == n_in and self._read_before_assigned:
            raise ValueError(
                f"ElementwiseKernel {self.name}: output(s) "
                f"{sorted(self._read_before_assigned)} are read before they are assigned, "
                "and this call allocates them: uninitialised memory (a GPU reads garbage); "
                "pass the output arrays to update them in place")

        def compute() -> list[Any]:  # the kernel's launch (recorded while capturing)
            return self._evaluate(env, arrays[n_in:], shape, types)

        results = ns._backend.run(compute, arrays)
        ns._backend.launched(_strict_launches.kernels("ElementwiseKernel", looped, {},
                                                      results))
        outs = [args[n_in + k] if len(arrays) > n_in else ns._wrap(r, self.name)
                for k, r in enumerate(results)]
        return tuple(outs) if len(outs) > 1 or self.return_tuple else outs[0]


    def _evaluate(self, env: dict[str, Any], given: list[Any], shape: tuple[int, ...],
                  types: dict[str, np.dtype]) -> list[Any]:
        """The statements run over ``shape`` on the inputs ``env``: the outputs, written
        into ``given`` (the caller's output arrays) where there are any."""
        def resolve(ctype: str) -> np.dtype:
            return _c_type(ctype, types, self.name)

        local = dict(env)
        local["@types"] = resolve
        local["i"] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        for k, (_, pname) in enumerate(self.out_params):  # each element its own
            if given:
                local[pname] = np.array(given[k])
        with np.errstate(all="ignore"):
            for target, ctype, node in self._statements:
                try:
                    value = node(local)
                except _strict_c.Undefined as e:
                    raise ValueError(f"ElementwiseKernel {self.name}: {e}") from None
                except CError as e:  # a type error: nvrtc's, at the first call
                    raise _compile_error(KernelSyntaxError(str(e)), self.name,
                                         self.operation, self.options) from None
                local[target] = _strict_c.cast(value, resolve(ctype))
        results = []
        for k, (ctype, pname) in enumerate(self.out_params):
            dtype = resolve(ctype)
            value = np.broadcast_to(np.asarray(local[pname]).astype(dtype, copy=False), shape)
            if given:
                given[k][...] = value
                results.append(given[k])
            else:
                results.append(np.array(value))
        return results


def _races(a: Any, out: Any, shape: tuple[int, ...]) -> bool:
    """Whether input ``a`` shares memory with output ``out`` other than element for
    element (the same view of the same memory, as in ``o = o + x`` given ``x`` is ``o``)."""
    if not isinstance(a, np.ndarray) or not isinstance(out, np.ndarray):
        return False
    if not np.shares_memory(a, out):
        return False
    b = np.broadcast_to(a, shape)
    # a stride along an axis of length 1 is never followed (numpy may set it to anything)
    steps = [(sb, so) for n, sb, so in zip(shape, b.strides, out.strides) if n > 1]
    return not (all(sb == so for sb, so in steps) and b.dtype == out.dtype and
                b.__array_interface__["data"][0] == out.__array_interface__["data"][0])


def _c_type(ctype: str, types: dict[str, np.dtype], kernel: str) -> np.dtype:
    if ctype in types:
        return types[ctype]
    if len(ctype) > 1 and ctype not in C_TYPES:  # a parameter's numpy dtype name
        return np.dtype(ctype)
    if ctype not in C_TYPES:
        raise KernelSyntaxError(f"ElementwiseKernel {kernel}: type {ctype!r} is neither a "
                                "placeholder bound by an input nor a C type the double knows")
    return C_TYPES[ctype]
