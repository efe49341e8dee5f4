"""Generate torch_backend's PrivateUse1 operator wrappers for the operators in ops.yaml.

Each listed operator becomes one or more C++ wrappers, registered for PrivateUse1 only when the
loaded vendor publishes a kernel for it (decided once at load, in csrc/aten/Kernels.cpp).  A
wrapper takes output shapes, dtypes and strides from ATen itself:

- structured operators (listed by their out variant, e.g. ``add.out``): the structured meta
  class ``at::meta::structured_*`` runs the operator's meta function; functional, in-place and
  out variants get ATen's usual set_output behaviour (allocate / check / resize);
- other operators: the operator's Meta kernel runs on meta copies of the arguments.

It then packs the arguments into ``tb_value`` descriptors (KernelCall) and enqueues the vendor
kernel on the current stream.  A kernel that declines a call sends it to the CPU fallback.

Schemas come from the ``native_functions.yaml`` shipped with torchgen (the installed torch's
own), so the wrappers always match the ATen they are compiled against.

The output is split over several translation units (``--shards``): one per shard holding its
wrappers and the functions that register them, and ``RegisterKernels.cpp`` with the kernel and
operator tables.  The wrappers instantiate c10's boxing templates, the slowest code of the
build to compile; in one file they were a single job that the rest of the build waited on.

Usage: python gen_kernels.py --ops ops.yaml --output DIR [--shards N]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
from collections.abc import Iterable, Sequence

import torchgen
import yaml
from torchgen import local
from torchgen.api import meta as meta_api
from torchgen.api import structured
from torchgen.api.translate import translate
from torchgen.api.types import DispatcherSignature, NativeSignature
from torchgen.gen import get_grouped_native_functions, parse_native_yaml
from torchgen.model import (
    Argument,
    BackendIndex,
    BaseTy,
    BaseType,
    DispatchKey,
    ListType,
    NativeFunction,
    NativeFunctionsGroup,
    OptionalType,
    SchemaKind,
    Type,
)


@dataclasses.dataclass
class Entry:
    """One line of ops.yaml."""

    op: str
    promote: list[str] | None = None  # non-structured elementwise: inputs cast to the output dtype
    meta: str | None = None  # non-structured: the csrc/aten/MetaOverrides.h function for Meta
    # structured TensorIterator operators: False when the tensor inputs are not elementwise
    # operands of the output (index.Tensor_out) and reach the kernel as they are
    broadcast: bool = True
    # the csrc/aten/HostChecks.h function every wrapper of the entry calls first, with its
    # non-out arguments: the checks ATen's CPU and CUDA kernels make on the host
    check: str | None = None
    # the one the out variant's wrapper also calls, with every argument, out ones included: the
    # checks of `out=` that ATen's kernels make beyond the meta function's
    check_out: str | None = None
    # what a call the kernel declines runs instead of the CPU fallback: an ATen native function
    # taking the operator's arguments (a _foreach_ operator's per-tensor path, as CUDA's own
    # kernels fall back to it), so that a list the kernel cannot take stays on the device
    declined: str | None = None
    # non-structured: tensor arguments made contiguous before the Meta kernel and the vendor's
    # kernel see them, as ATen's CPU and CUDA kernels do (``expect_contiguous``): a row kernel
    # (layer_norm's) then serves a permuted input -- a ViT's after a conv patch embedding --
    # instead of declining it to the CPU
    contiguous: list[str] | None = None


@dataclasses.dataclass
class Wrapper:
    registered: str  # operator name registered for PrivateUse1, e.g. "add.Tensor"
    kernel: int  # index into the kernel table
    name: str  # C++ function name
    code: str
    includes: frozenset[str] = frozenset()  # the headers its code needs

    @property
    def register_name(self) -> str:
        return "register_" + self.name


class Generator:
    def __init__(
        self, functions: Sequence[NativeFunction], meta_index: BackendIndex | None = None
    ) -> None:
        self.by_name = {str(f.func.name): f for f in functions}
        self.meta_index = meta_index  # ATen's C++ Meta kernels
        self.group_of: dict[str, NativeFunctionsGroup] = {}
        for g in get_grouped_native_functions(functions):
            if isinstance(g, NativeFunctionsGroup):
                for f in g.functions():
                    self.group_of[str(f.func.name)] = g
        self.kernels: list[str] = []
        self.wrappers: list[Wrapper] = []
        self.includes: set[str] = set()  # headers the entry being generated needs
        self.declined: dict[str, str] = {}  # operator -> what runs a declined call (Entry)

    # ------------------------------------------------------------------------------------------
    # helpers

    def kernel_index(self, name: str) -> int:
        if name not in self.kernels:
            self.kernels.append(name)
        return self.kernels.index(name)

    def include_ops(self, f: NativeFunction) -> None:
        self.includes.add(f"ATen/ops/{f.root_name}_ops.h")

    @staticmethod
    def cname(f: NativeFunction) -> str:
        return "wrapper_" + f.func.name.unambiguous_name()

    @staticmethod
    def signature(f: NativeFunction) -> DispatcherSignature:
        return DispatcherSignature.from_schema(f.func)

    def decline(self, f: NativeFunction, kernel_f: NativeFunction, outputs: list[str]) -> str:
        """The statement a functional wrapper runs when the kernel declines its call: the out
        variant's own declined function (torch_backend's), given the outputs just allocated,
        where it has one -- so that `x[mask]` takes the same path as `index(..., out=)` --
        else the CPU fallback."""
        declined = self.declined.get(str(kernel_f.func.name))
        if kernel_f is f or declined is None or not declined.startswith("torch_backend::"):
            return f"return {self.fallback(f)};"
        self.includes.add("aten/Composite.h")
        args = ", ".join([a.name for a in self.signature(f).arguments()] + outputs)
        ret = outputs[0] if len(outputs) == 1 else "std::make_tuple(" + ", ".join(outputs) + ")"
        return f"{declined}({args});\n    return {ret};"

    def fallback(self, f: NativeFunction) -> str:
        sig = self.signature(f)
        args = ", ".join(a.name for a in sig.arguments())
        declined = self.declined.get(str(f.func.name))
        if declined is not None:
            own = declined.startswith("torch_backend::")
            self.includes.add("aten/Composite.h" if own else f"ATen/ops/{f.root_name}_native.h")
            return f"{declined}({args})"
        return (
            "at::native::call_fallback_fn_symint<&cpu_fallback_boxed, "
            f"at::_ops::{f.func.name.unambiguous_name()}>::call({args})"
        )

    @staticmethod
    def pack(arg: Argument, expression: str) -> str:
        """The KernelCall method that passes `arg` (named `expression` in the wrapper).  Tensors
        carry the argument's name, for the error a tensor on another device raises."""
        t: Type = arg.type
        if isinstance(t, OptionalType):
            inner = t.elem
            if isinstance(inner, BaseType) and inner.name == BaseTy.Generator:
                return f".generator({expression})"
            t = inner
        if isinstance(t, BaseType):
            method = {
                BaseTy.Tensor: "tensor",
                BaseTy.Scalar: "scalar",
                BaseTy.int: "integer",
                BaseTy.SymInt: "integer",
                BaseTy.float: "real",
                BaseTy.bool: "boolean",
                BaseTy.str: "string",
                BaseTy.ScalarType: "dtype",
            }.get(t.name)
            if method == "tensor":
                return f'.tensor({expression}, "{arg.name}")'
            if method is not None:
                return f".{method}({expression})"
        if isinstance(t, ListType):
            elem = t.elem
            if isinstance(elem, OptionalType):
                elem = elem.elem
            if isinstance(elem, BaseType):
                if elem.name == BaseTy.Tensor:
                    return f'.tensors({expression}, "{arg.name}")'
                if elem.name in (BaseTy.int, BaseTy.SymInt):
                    return f".ints({expression})"
                if elem.name == BaseTy.bool:
                    return f".bools({expression})"
        raise SystemExit(f"gen_kernels: no descriptor for argument '{arg.name}' of type {arg.type}")

    @staticmethod
    def is_tensor(arg: Argument) -> bool:
        return isinstance(arg.type, BaseType) and arg.type.name == BaseTy.Tensor

    @staticmethod
    def is_tensor_like(arg: Argument) -> bool:
        """Tensor, Tensor?, Tensor[] or Tensor?[]."""
        t: Type = arg.type
        if isinstance(t, OptionalType):
            t = t.elem
        if isinstance(t, ListType):
            t = t.elem
            if isinstance(t, OptionalType):
                t = t.elem
        return isinstance(t, BaseType) and t.name == BaseTy.Tensor

    def write_check(self, f: NativeFunction, elementwise: bool) -> str:
        """Code sending `f` to the CPU fallback when its writes are not safe for a kernel
        (KernelCall.h, WriteCheck): written tensors are outputs, the others inputs."""
        chain = ""
        for a in f.func.arguments.flat_all:
            if not self.is_tensor_like(a):
                continue
            written = a.annotation is not None and a.annotation.is_write
            chain += f".{'output' if written else 'input'}({a.name})"
        if ".output(" not in chain:
            return ""
        flag = "true" if elementwise else "false"
        declined = (
            f"{self.fallback(f)};\n    return;"
            if not f.func.returns
            else (f"return {self.fallback(f)};")
        )
        return f'  if (!WriteCheck({flag}){chain}.safe("{f.func.name}")) {{\n    {declined}\n  }}\n'

    def host_check(self, f: NativeFunction, entry: Entry) -> str:
        """Code calling the entry's HostChecks.h functions: `check` with `f`'s non-out
        arguments, and for an out variant `check_out` with all of them."""
        code = ""
        if entry.check is not None:
            args = ", ".join(a.name for a in f.func.arguments.flat_non_out)
            code += f"  host_checks::{entry.check}({args});\n"
        if entry.check_out is not None and f.func.kind() is SchemaKind.out:
            args = ", ".join(a.name for a in f.func.arguments.flat_all)
            code += f"  host_checks::{entry.check_out}({args});\n"
        return code

    def tensor_params(self, f: NativeFunction) -> list[str]:
        return [a.name for a in f.func.arguments.flat_all if self.is_tensor(a)]

    # ------------------------------------------------------------------------------------------
    # structured groups: functional, inplace and out variants over one meta class

    def structured(self, g: NativeFunctionsGroup, entry: Entry) -> None:
        kernel_f = g.out
        kernel = self.kernel_index(str(kernel_f.func.name))
        meta_class = f"at::meta::structured_{meta_api.name(g)}"
        self.includes.add(f"ATen/ops/{g.functional.root_name}_meta.h")
        elementwise = kernel_f.structured_inherits == "TensorIteratorBase"
        out_args = list(kernel_f.func.arguments.out)
        for f in g.functions():
            kind = f.func.kind()
            if kind not in (SchemaKind.functional, SchemaKind.inplace, SchemaKind.out):
                continue
            self.include_ops(f)
            sig = self.signature(f)
            # The meta function's parameter types differ from the dispatcher's (for example
            # OptionalScalarRef for Scalar?): torchgen's translate bridges them.
            meta_args = ", ".join(
                e.expr for e in translate(sig.arguments(), structured.meta_arguments(g))
            )
            n = len(out_args)
            klass = f"Meta_{f.func.name.unambiguous_name()}"
            if kind is SchemaKind.functional:
                storage = f"std::array<at::Tensor, {n}> outputs_;"
                body = "outputs_[i] = create_out(sizes, strides, options);"
                getter = "return outputs_[i];"
                ctor = ""
                init = f"{klass} op;"
            else:
                if kind is SchemaKind.inplace:
                    targets = ["self"] * n
                    body = "check_inplace(outputs_[i], sizes, options);"
                else:
                    targets = [a.name for a in f.func.arguments.out]
                    body = "resize_out(outputs_[i], sizes, strides, options);"
                storage = f"std::array<std::reference_wrapper<const at::Tensor>, {n}> outputs_;"
                getter = "return outputs_[i].get();"
                params = ", ".join(f"const at::Tensor& o{i}" for i in range(n))
                refs = ", ".join(f"std::cref(o{i})" for i in range(n))
                ctor = f"explicit {klass}({params}) : outputs_{{{{{refs}}}}} {{}}"
                init = f"{klass} op({', '.join(targets)});"
            base_call = (
                f"{meta_class}::set_output_raw_strided(i, sizes, strides, options);"
                if elementwise
                else ""
            )
            set_output = f"""
    {body}
    {base_call}"""
            out_exprs = [
                f"op.outputs_[{i}]" + ("" if kind is SchemaKind.functional else ".get()")
                for i in range(n)
            ]
            launch = self.structured_launch(
                kernel_f, f, kind, elementwise and entry.broadcast, out_exprs
            )
            check = self.write_check(f, elementwise and entry.broadcast)
            if kind is SchemaKind.functional:
                if n == 1:
                    ret = "return std::move(op.outputs_[0]);"
                else:
                    ret = (
                        "return std::make_tuple("
                        + ", ".join(f"std::move(op.outputs_[{i}])" for i in range(n))
                        + ");"
                    )
            elif kind is SchemaKind.inplace:
                ret = "return self;"
            else:
                names = [a.name for a in f.func.arguments.out]
                ret = (
                    f"return {names[0]};"
                    if n == 1
                    else (f"return std::forward_as_tuple({', '.join(names)});")
                )
            code = f"""
struct {klass} final : {meta_class} {{
  {ctor}
  void set_output_strided(int64_t i, at::IntArrayRef sizes,
                          [[maybe_unused]] at::IntArrayRef strides,
                          at::TensorOptions options) override {{{set_output}
  }}
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes,
                              [[maybe_unused]] at::IntArrayRef strides,
                              at::TensorOptions options) override {{{set_output}
  }}
  const at::Tensor& maybe_get_output(int64_t i) override {{ {getter} }}
  {storage}
}};

{sig.decl(name=self.cname(f))} {{
{self.host_check(f, entry)}  {init}
  op.meta({meta_args});
{check}{launch}
  {ret}
}}
"""
            self.wrappers.append(Wrapper(str(f.func.name), kernel, self.cname(f), code))

    def structured_launch(
        self,
        kernel_f: NativeFunction,
        f: NativeFunction,
        kind: SchemaKind,
        elementwise: bool,
        out_exprs: list[str],
    ) -> str:
        out_names = [a.name for a in kernel_f.func.arguments.out]
        inputs = [a for a in kernel_f.func.arguments.flat_non_out]
        # Map the kernel's (out variant's) arguments onto this variant's names.
        chain: list[str] = []
        lines: list[str] = []
        if elementwise:
            lines.append(
                f"  const at::Tensor& out_ = {out_exprs[0]};\n"
                "  const at::ScalarType common =\n"
                "      op.maybe_common_dtype().value_or(op.input_dtype(0));\n"
                "  const bool converted = out_.scalar_type() != common && "
                "out_.scalar_type() != at::kBool;\n"
                "  at::Tensor result = converted ? create_out(out_.sizes(), {}, "
                "out_.options().dtype(common)) : out_;"
            )
        for a in inputs:
            if elementwise and self.is_tensor(a):
                chain.append(f'.operand({a.name}, common, result.sizes(), "{a.name}")')
            else:
                chain.append(self.pack(a, a.name))
        for i, name in enumerate(out_names):
            output = "result" if elementwise else out_exprs[i]
            chain.append(f'.tensor({output}, "{name}")')
        call = "".join(chain)
        if kind is SchemaKind.functional:
            decline = self.decline(f, kernel_f, out_exprs)
        else:
            decline = f"return {self.fallback(f)};"
        lines.append(
            f"  if (!KernelCall(g_kernels[{self.kernels.index(str(kernel_f.func.name))}], "
            f"&g_kernel_calls[{self.kernels.index(str(kernel_f.func.name))}])"
            f"{call}.launch()) {{\n"
            f"    {decline}\n  }}"
        )
        if elementwise:
            lines.append("  if (converted) out_.copy_(result);")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------
    # other operators: shapes from the Meta kernel

    def cached_meta(self, f: NativeFunction, override: str | None = None) -> str:
        """Code binding `meta_` to `f`'s outputs' metadata: its Meta kernel's result (or that of
        `override`, a function of csrc/aten/MetaOverrides.h), memoized by the arguments'
        metadata (MetaCache)."""
        sig = self.signature(f)
        args = ", ".join(f"to_meta({a.name})" for a in sig.arguments())
        keys = "".join(f"  key_.add({a.name});\n" for a in sig.arguments())
        call = (
            f"meta_overrides::{override}({args})"
            if override
            else f"at::_ops::{f.func.name.unambiguous_name()}::redispatch("
            f"c10::DispatchKeySet(c10::DispatchKey::Meta), {args})"
        )
        return (
            "  static MetaCache cache_;\n"
            "  MetaKey key_;\n"
            f"{keys}"
            "  const MetaCache::Outputs meta_ = cache_.get(key_, [&] {\n"
            f"    return {call};\n"
            "  });\n"
        )

    def meta_outputs(
        self, f: NativeFunction, device_expr: str, override: str | None = None
    ) -> tuple[str, list[str]]:
        """Code running `f`'s meta function and allocating real outputs; returns (code, names)."""
        n = len(f.func.returns)
        code = self.cached_meta(f, override)
        names = [f"output{i}_" for i in range(n)]
        for i, name in enumerate(names):
            code += f"  at::Tensor {name} = (*meta_)[{i}].allocate({device_expr});\n"
        return code, names

    def device_expression(self, f: NativeFunction) -> str:
        tensors = self.tensor_params(f)
        if not tensors:
            return "make_device(current_device())"
        return "device_of_arguments({" + ", ".join(f"&{t}" for t in tensors) + "})"

    def elementwise_chain(
        self, f: NativeFunction, promote: list[str], shape: str, dtype: str
    ) -> list[str]:
        chain = []
        for a in f.func.arguments.flat_non_out:
            if self.is_tensor(a):
                target = dtype if a.name in promote else f"{a.name}.scalar_type()"
                chain.append(f'.operand({a.name}, {target}, {shape}, "{a.name}")')
            else:
                chain.append(self.pack(a, a.name))
        return chain

    def functional(
        self, f: NativeFunction, entry: Entry, kernel_f: NativeFunction | None = None
    ) -> None:
        """A functional operator: outputs from its Meta kernel.  With `kernel_f` (its out
        variant), calls that kernel with the outputs as out arguments."""
        kernel_f = kernel_f or f
        kernel = self.kernel_index(str(kernel_f.func.name))
        self.include_ops(f)
        sig = self.signature(f)
        code, outputs = self.meta_outputs(f, self.device_expression(f), entry.meta)
        if entry.promote is not None:
            chain = self.elementwise_chain(
                kernel_f, entry.promote, f"{outputs[0]}.sizes()", f"{outputs[0]}.scalar_type()"
            )
        else:
            chain = [self.pack(a, a.name) for a in kernel_f.func.arguments.flat_non_out]
        returns = zip(outputs, f.func.returns, strict=True)
        chain += [f'.tensor({o}, "{r.name or "result"}")' for o, r in returns]
        ret = (
            f"return {outputs[0]};"
            if len(outputs) == 1
            else "return std::make_tuple(" + ", ".join(outputs) + ");"
        )
        code = self.host_check(f, entry) + code
        name = self.cname(f) + ("_contiguous" if entry.contiguous else "")
        decline = self.decline(f, kernel_f, outputs)
        body = f"""
{"static " if entry.contiguous else ""}{sig.decl(name=name)} {{
{code}  if (!KernelCall(g_kernels[{kernel}], &g_kernel_calls[{kernel}]){"".join(chain)}.launch()) {{
    {decline}
  }}
  {ret}
}}
"""
        if entry.contiguous:
            tensors = {
                a.name for a in f.func.arguments.flat_non_out if a.type == BaseType(BaseTy.Tensor)
            }
            unknown = set(entry.contiguous) - tensors
            assert not unknown, f"{f.func.name}: contiguous names no Tensor argument {unknown}"
            args = ", ".join(
                f"{a.name}.contiguous()" if a.name in entry.contiguous else a.name
                for a in sig.arguments()
            )
            body += f"""
{sig.decl(name=self.cname(f))} {{
  return {name}({args});
}}
"""
        self.wrappers.append(Wrapper(str(f.func.name), kernel, self.cname(f), body))

    def own_meta(self, f: NativeFunction) -> str:
        """Code binding `meta_` to out variant `f`'s outputs' metadata from its own C++ Meta
        kernel (the one native_functions.yaml names), run on meta copies of the arguments, out
        arguments included, and memoized like cached_meta.  Called directly: a Python meta
        registration overrides it at the Meta key and may resize outputs by another rule
        (arange.start_out's, from torch._refs, reshapes and warns where ATen keeps the shape)."""
        sig = self.signature(f)
        outs = [a.name for a in f.func.arguments.out]
        keys = "".join(f"  key_.add({a.name});\n" for a in sig.arguments())
        copies = "".join(f"    at::Tensor {o}_meta_ = to_meta({o});\n" for o in outs)
        args = ", ".join(
            f"{a.name}_meta_" if a.name in outs else f"to_meta({a.name})" for a in sig.arguments()
        )
        result = (
            f"{outs[0]}_meta_"
            if len(outs) == 1
            else "std::make_tuple(" + ", ".join(f"{o}_meta_" for o in outs) + ")"
        )
        metadata = self.meta_index.get_kernel(f) if self.meta_index is not None else None
        if metadata is None:
            raise SystemExit(
                f"gen_kernels: {f.func.name} has neither a functional variant taking its "
                "arguments nor a C++ Meta kernel to take shapes from"
            )
        # a lambda whose parameters, named as the wrapper's, receive the meta copies
        native = NativeSignature(f.func, prefix="", symint=metadata.supports_symint())
        exprs = ", ".join(e.expr for e in translate(sig.arguments(), native.arguments()))
        params = ", ".join(a.decl() for a in sig.arguments())
        self.includes.add(f"ATen/ops/{f.root_name}_native.h")
        call = (
            f"    []({params}) {{ {metadata.cpp_namespace}::{metadata.kernel}({exprs}); }}"
            f"({args});\n"
        )
        return (
            "  static MetaCache cache_;\n"
            "  MetaKey key_;\n"
            f"{keys}"
            "  const MetaCache::Outputs meta_ = cache_.get(key_, [&] {\n"
            f"{copies}"
            f"{call}"
            f"    return {result};\n"
            "  });\n"
        )

    def out_variant(self, f: NativeFunction, entry: Entry) -> None:
        """A non-structured out variant: shape from the functional variant's Meta kernel, or,
        when there is no functional variant taking the same arguments (arange.start_out, whose
        functional variant takes TensorOptions and calls it), from its own C++ Meta kernel."""
        g = self.group_of.get(str(f.func.name))
        names = [a.name for a in f.func.arguments.flat_non_out]
        own = g is None or [a.name for a in g.functional.func.arguments.flat_non_out] != names
        kernel = self.kernel_index(str(f.func.name))
        self.include_ops(f)
        sig = self.signature(f)
        outs = [a.name for a in f.func.arguments.out]
        n = len(outs)
        if own:
            lines = [self.own_meta(f)]
        else:
            self.include_ops(g.functional)
            lines = [self.cached_meta(g.functional, entry.meta)]
        for i, out in enumerate(outs):
            if own:  # the Meta kernel resized its copy by the operator's own rule
                lines.append(
                    f"  if ({out}.sizes() != at::IntArrayRef((*meta_)[{i}].sizes)) "
                    f"{out}.resize_((*meta_)[{i}].sizes);"
                )
                continue
            lines.append(
                f"  if ({out}.scalar_type() != (*meta_)[{i}].dtype) {{\n"
                f"    return {self.fallback(f)};\n  }}\n"
                f"  at::native::resize_output({out}, (*meta_)[{i}].sizes);"
            )
        if entry.promote is not None:
            chain = self.elementwise_chain(
                f, entry.promote, f"{outs[0]}.sizes()", f"{outs[0]}.scalar_type()"
            )
        else:
            chain = [self.pack(a, a.name) for a in f.func.arguments.flat_non_out]
        chain += [f'.tensor({o}, "{o}")' for o in outs]
        ret = (
            f"return {outs[0]};" if n == 1 else f"return std::forward_as_tuple({', '.join(outs)});"
        )
        check = self.write_check(f, entry.promote is not None)
        call = f"KernelCall(g_kernels[{kernel}], &g_kernel_calls[{kernel}]){''.join(chain)}"
        body = f"""
{sig.decl(name=self.cname(f))} {{
{self.host_check(f, entry)}{chr(10).join(lines)}
{check}  if (!{call}.launch()) {{
    return {self.fallback(f)};
  }}
  {ret}
}}
"""
        self.wrappers.append(Wrapper(str(f.func.name), kernel, self.cname(f), body))
        if not own:
            self.functional(g.functional, entry, kernel_f=f)

    def direct(self, f: NativeFunction, entry: Entry) -> None:
        """In-place and mutating operators: no outputs to allocate."""
        kernel = self.kernel_index(str(f.func.name))
        self.include_ops(f)
        sig = self.signature(f)
        chain = "".join(self.pack(a, a.name) for a in f.func.arguments.flat_all)
        if str(f.func.name) in self.declined:  # tensors on two devices: the declined path
            chain += ".declines_other_devices()"
        returns = f.func.returns
        if not returns:
            ret, declined = "return;", f"{self.fallback(f)};\n    return;"
        else:
            ret, declined = "return self;", f"return {self.fallback(f)};"
        check = self.write_check(f, False)
        check = self.host_check(f, entry) + check
        body = f"""
{sig.decl(name=self.cname(f))} {{
{check}  if (!KernelCall(g_kernels[{kernel}], &g_kernel_calls[{kernel}]){chain}.launch()) {{
    {declined}
  }}
  {ret}
}}
"""
        self.wrappers.append(Wrapper(str(f.func.name), kernel, self.cname(f), body))

    # ------------------------------------------------------------------------------------------

    def add(self, entry: Entry) -> None:
        """Generate the wrappers of one ops.yaml entry."""
        f = self.by_name.get(entry.op)
        if f is None:
            raise SystemExit(f"gen_kernels: no ATen operator named '{entry.op}'")
        # The C++ types of a function's dispatcher signature depend on its group (tensor lists
        # are ITensorListRef in structured groups): generate under the same settings as ATen.
        # Headers are noted per entry, so that each shard includes only what its wrappers use.
        self.includes = set()
        if entry.declined is not None:
            self.declined[entry.op] = entry.declined
        first = len(self.wrappers)
        with local.parametrize(
            use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=f.part_of_structured_group,
        ):
            self.dispatch(entry, f)
        added = frozenset(self.includes)
        for i in range(first, len(self.wrappers)):
            self.wrappers[i] = dataclasses.replace(self.wrappers[i], includes=added)

    def dispatch(self, entry: Entry, f: NativeFunction) -> None:
        if f is None:
            raise SystemExit(f"gen_kernels: no ATen operator named '{entry.op}'")
        kind = f.func.kind()
        if entry.meta and (f.structured or kind not in (SchemaKind.out, SchemaKind.functional)):
            raise SystemExit(f"gen_kernels: {entry.op} takes no shapes from a Meta kernel (meta:)")
        if f.structured:
            self.structured(self.group_of[entry.op], entry)
        elif kind is SchemaKind.out:
            self.out_variant(f, entry)
        elif kind is SchemaKind.functional:
            self.functional(f, entry)
        elif kind in (SchemaKind.inplace, SchemaKind.mutable):
            self.direct(f, entry)
        else:
            raise SystemExit(f"gen_kernels: cannot generate a wrapper for {entry.op} ({kind})")

    def shards(self, count: int) -> list[list[Wrapper]]:
        """The wrappers in `count` runs of about equal code size, in ops.yaml's order (an
        operator's variants share template instantiations, so they stay together)."""
        total = sum(len(w.code) for w in self.wrappers)
        shards: list[list[Wrapper]] = [[] for _ in range(count)]
        done = 0
        for w in self.wrappers:
            shards[min(count - 1, done * count // max(total, 1))].append(w)
            done += len(w.code)
        return shards

    def render(self, source: str, count: int) -> dict[str, str]:
        """File name -> text: RegisterKernels.cpp (the tables) and RegisterKernels_<i>.cpp."""
        shards = self.shards(count)
        generated = f"// @generated by codegen/gen_kernels.py from {source}: do not edit."
        files = {}
        for index, wrappers in enumerate(shards):
            headers = sorted(set().union(*(w.includes for w in wrappers)))
            includes = "\n".join(f"#include <{h}>" for h in headers)
            code = "".join(w.code for w in wrappers)
            registers = "".join(
                f"void {w.register_name}(torch::Library& m) {{\n"
                f'  m.impl("{w.registered}", TORCH_FN({w.name}));\n}}\n'
                for w in wrappers
            )
            files[f"RegisterKernels_{index}.cpp"] = f"""{generated}
// PrivateUse1 wrappers that run ATen's meta functions, then the vendor's kernels: shard
// {index} of {count}, registered through RegisterKernels.cpp's table.
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
{includes}

#include "aten/GeneratedKernels.h"
#include "aten/HostChecks.h"
#include "aten/KernelCall.h"
#include "aten/MetaOverrides.h"
#include "runtime/Device.h"

namespace torch_backend::generated {{

namespace {{
{code}
}}  // namespace

{registers}
}}  // namespace torch_backend::generated
"""
        names = ",\n    ".join(f'"{k}"' for k in self.kernels)
        declarations = "".join(
            f"void {w.register_name}(torch::Library& m);  // RegisterKernels_{index}.cpp\n"
            for index, wrappers in enumerate(shards)
            for w in wrappers
        )
        entries = ",\n    ".join(
            f'{{"{w.registered}", {w.kernel}, {w.register_name}}}' for w in self.wrappers
        )
        files["RegisterKernels.cpp"] = f"""{generated}
// The kernel and operator tables of the PrivateUse1 wrappers (RegisterKernels_<i>.cpp).
#include "aten/GeneratedKernels.h"

namespace torch_backend::generated {{

const char* const kKernelNames[] = {{
    {names}}};
const int kNumKernels = {len(self.kernels)};
const tb_kernel* g_kernels[{len(self.kernels)}] = {{}};
std::atomic<uint64_t> g_kernel_calls[{len(self.kernels)}] = {{}};

{declarations}
const OpEntry kOps[] = {{
    {entries}}};
const int kNumOps = {len(self.wrappers)};

}}  // namespace torch_backend::generated
"""
        return files


def load_entries(path: pathlib.Path) -> list[Entry]:
    raw = yaml.safe_load(path.read_text())
    entries = []
    for item in raw:
        if isinstance(item, str):
            entries.append(Entry(op=item))
        else:
            entries.append(Entry(**item))
    return entries


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=pathlib.Path, required=True)
    parser.add_argument("--output", type=pathlib.Path, required=True)
    parser.add_argument(
        "--shards", type=int, default=4, help="translation units the wrappers are spread over"
    )
    args = parser.parse_args(None if argv is None else list(argv))
    if args.shards < 1:
        parser.error(f"--shards must be at least 1, not {args.shards}")
    packaged = pathlib.Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    parsed = parse_native_yaml(str(packaged / "native_functions.yaml"), str(packaged / "tags.yaml"))
    generator = Generator(parsed.native_functions, parsed.backend_indices.get(DispatchKey.Meta))
    with local.parametrize(
        use_const_ref_for_mutable_tensors=False, use_ilistref_for_tensor_lists=False
    ):
        for entry in load_entries(args.ops):
            generator.add(entry)
        files = generator.render(args.ops.name, args.shards)
    args.output.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        # Unchanged files keep their time stamps, so the build recompiles only what changed.
        target = args.output / name
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    print(
        f"gen_kernels: {len(generator.wrappers)} wrappers over {len(generator.kernels)} kernels, "
        f"in {args.shards} shards",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
