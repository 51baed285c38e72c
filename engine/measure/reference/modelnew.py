#!/usr/bin/env python3
"""modelnew.py - read a KernelBench ModelNew module without running it.

kloop's worker runs this (standard library only) as ``python3 -I -S -W ignore
modelnew.py FILE``: it parses FILE with ``ast`` and never executes, imports or
compiles any of its code.  It finds the sources a
``torch.utils.cpp_extension.load_inline(...)`` call compiles, and the one call
``ModelNew.forward`` makes of a function of that module, and prints one JSON
line on stdout:

    {"ok": true, "lang": "cuda" | "cpp", "module": NAME,
     "function": FN,                  # the function forward calls
     "functions": [FN, ...] | null,   # load_inline's functions= (null: none given)
     "cpp": [PIECE, ...], "cuda": [PIECE, ...],
     "args": [ARG, ...],              # what forward passes FN, in order
     "forward": [PARAM, ...],         # forward's parameters (after self)
     "notes": [TEXT, ...]}            # what kloop ignores (extra_cuda_cflags, ...)

    PIECE = {"text": SOURCE, "line": N}   # N: FILE's line where SOURCE's first
                                          # line is, 0 where lines do not map
    ARG = {"input": K} | {"param": "NAME"} | {"int": V} | {"float": V} | {"bool": V}
        | {"init": "NAME", "attr": "X", "position": K?, "default": V?}
          # self.X set from __init__'s parameter NAME (its K-th after self;
          # none for a keyword-only one), whose default is the number V

or, when kloop cannot take the module, ``{"ok": false, "line": N, "error":
TEXT}``.  Exit status 0 either way; 2 for a usage error.

What kloop takes: module-level strings (literals, triple-quoted or not, names
bound to them, ``+`` of them, lists of them) for cpp_sources and
cuda_sources; imports of torch, torch.nn, torch.nn.functional,
torch.utils.cpp_extension, math and typing only; a forward whose body is
``return MOD.FN(args)`` where MOD is the load_inline module (or ``self.X``
bound to it in __init__) and each argument is a forward parameter (``x`` or
``x.contiguous()``), a number, or ``self.NAME`` of a parameter, buffer or
number set in __init__, or of __init__'s own parameter (the problem's
get_init_inputs() gives it).
"""

import ast
import json
import sys

ALLOWED_IMPORTS = ("torch", "torch.nn", "torch.nn.functional", "torch.utils",
                   "torch.utils.cpp_extension", "math", "typing", "__future__")
SUPPORTED = ("kloop runs a ModelNew whose forward is one call of its load_inline module's "
             "function (return mod.fn(x, ...)), its arguments forward's parameters, numbers "
             "or self.NAME of a parameter, buffer or number set in __init__ (a number, or "
             "__init__'s parameter)")


class Refused(Exception):
    def __init__(self, node, message):
        Exception.__init__(self, message)
        self.line = getattr(node, "lineno", 0) if node is not None else 0


def source_of(src, node, limit=80):
    s = ast.get_source_segment(src, node) or ""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


class Reader:
    def __init__(self, src):
        self.src = src
        self.strings = {}   # module-level name -> [PIECE]
        self.unread = {}    # module-level name -> why its value is no string kloop reads
        self.numbers = {}   # module-level name -> number
        self.modules = {}   # module-level name -> load_inline record
        self.notes = []
        self.unrun = []     # module-level code that would run at import: (line, source)

    # ---- strings ----
    def pieces(self, node, what):
        """The string pieces node makes (a list, joined by newlines, as load_inline
        joins a list), or Refused naming the line."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            lines = node.end_lineno - node.lineno
            return [{"text": text, "line": node.lineno if lines == text.count("\n") else 0}]
        if isinstance(node, ast.Name):
            if node.id in self.strings:
                return list(self.strings[node.id])
            if node.id in self.unread:
                why = self.unread[node.id]
                r = Refused(None, "%s is %s, %s" % (what, node.id, str(why).split(" is ", 1)[-1]))
                r.line = why.line
                raise r
            raise Refused(node, "%s: %s is not a module-level string kloop can read "
                                "(kloop reads string literals, names bound to them, + and "
                                "lists of them; it runs none of the module's code)"
                          % (what, node.id))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a = self.pieces(node.left, what)
            b = self.pieces(node.right, what)
            if len(a) > 1 or len(b) > 1:
                raise Refused(node, "%s: + of a list: kloop reads + of strings" % what)
            return [{"text": a[0]["text"] + b[0]["text"], "line": a[0]["line"]}]
        if isinstance(node, (ast.List, ast.Tuple)):
            out = []
            for e in node.elts:
                p = self.pieces(e, what)
                if len(p) != 1 and not isinstance(e, ast.Name):
                    raise Refused(e, "%s: a list inside a list" % what)
                out.extend(p)
            return out
        if isinstance(node, ast.JoinedStr):
            raise Refused(node, "%s is an f-string: kloop reads plain string literals (it "
                                "runs none of the module's code)" % what)
        raise Refused(node, "%s is `%s`, which kloop does not evaluate: it reads string "
                            "literals, names bound to them, + and lists of them (it runs "
                            "none of the module's code)" % (what, source_of(self.src, node)))

    def number(self, node):
        """A number node is (a literal, -literal, a module-level name), else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.number(node.operand)
            return None if v is None or isinstance(v, bool) else -v
        if isinstance(node, ast.Name) and node.id in self.numbers:
            return self.numbers[node.id]
        return None

    # ---- the module ----
    def check_import(self, node):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""])
        for n in names:
            if n not in ALLOWED_IMPORTS:
                raise Refused(node, "imports %s: a ModelNew kloop takes imports only %s (kloop "
                                    "reads the module, never runs it)"
                              % (n, ", ".join(ALLOWED_IMPORTS[:-1])))

    @staticmethod
    def is_load_inline(node):
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        return ((isinstance(f, ast.Name) and f.id == "load_inline")
                or (isinstance(f, ast.Attribute) and f.attr == "load_inline"))

    def load_inline(self, call):
        order = ["name", "cpp_sources", "cuda_sources", "functions"]
        a = {}
        for i, v in enumerate(call.args):
            if i >= len(order):
                break
            a[order[i]] = v
        for k in call.keywords:
            if k.arg is None:
                raise Refused(call, "load_inline(**...): kloop reads keyword arguments it "
                                    "can see")
            a[k.arg] = k.value
        if "cpp_sources" not in a:
            raise Refused(call, "load_inline without cpp_sources")
        rec = {"line": call.lineno, "cpp": self.pieces(a["cpp_sources"], "cpp_sources"),
               "cuda": [], "functions": None, "name": "extension"}
        cu = a.get("cuda_sources")
        if cu is not None and not (isinstance(cu, ast.Constant) and cu.value is None):
            rec["cuda"] = self.pieces(cu, "cuda_sources")
        rec["cuda"] = [p for p in rec["cuda"] if p["text"].strip()]
        n = a.get("name")
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            rec["name"] = n.value
        fn = a.get("functions")
        if fn is not None and not (isinstance(fn, ast.Constant) and fn.value is None):
            rec["functions"] = self.function_names(fn)
        for k in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"):
            if k in a:
                self.notes.append("%s ignored: kloop compiles with its own flags" % k)
        return rec

    def function_names(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict)):
            out = []
            for e in node.keys if isinstance(node, ast.Dict) else node.elts:
                if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                    raise Refused(node, "functions: kloop reads a list (or dict) of string "
                                        "literals")
                out.append(e.value)
            return out
        if isinstance(node, ast.Name) and node.id in self.strings:
            return [p["text"] for p in self.strings[node.id]]
        raise Refused(node, "functions is `%s`: kloop reads a list of string literals"
                      % source_of(self.src, node))

    def assign(self, node, target, value):
        if not isinstance(target, ast.Name):
            return
        if self.is_load_inline(value):
            self.modules[target.id] = self.load_inline(value)
            return
        self.strings.pop(target.id, None)
        self.numbers.pop(target.id, None)
        self.unread.pop(target.id, None)
        v = self.number(value)
        if v is not None:
            self.numbers[target.id] = v
            return
        try:
            self.strings[target.id] = self.pieces(value, target.id)
        except Refused as e:
            self.unread[target.id] = e  # not a string: an error where a source uses it

    def read(self):
        try:
            tree = ast.parse(self.src)
        except SyntaxError as e:
            raise _syntax(e) from None
        except ValueError as e:  # a NUL byte
            raise Refused(None, "the module does not parse: %s" % e) from None
        model = None
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.check_import(node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    self.assign(node, t, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self.assign(node, node.target, node.value)
            elif isinstance(node, ast.Expr) and self.is_load_inline(node.value):
                raise Refused(node, "load_inline's module is not bound to a name forward "
                                    "could call")
            elif isinstance(node, ast.ClassDef) and node.name == "ModelNew":
                model = node
            self.never_run(node)
        if self.unrun:
            n = len(self.unrun)
            self.notes.append("the module's code at line %d (`%s`)%s never ran: kloop reads "
                              "the module, it runs none of it"
                              % (self.unrun[0][0], self.unrun[0][1],
                                 " and %d more statement%s" % (n - 1, "s" if n > 2 else "")
                                 if n > 1 else ""))
        if model is None:
            raise Refused(None, "defines no class ModelNew: kloop takes a KernelBench ModelNew "
                                "module (class ModelNew(nn.Module) whose forward calls a "
                                "function of a load_inline module)")
        if not self.modules:
            raise Refused(model, "no load_inline(...) at module level: kloop takes a ModelNew "
                                 "whose forward calls a function of a "
                                 "torch.utils.cpp_extension.load_inline module")
        return self.model(model)

    def never_run(self, node):
        """Module-level code that would run at import (an assignment to an
        attribute, a call, a with block ...): kept in self.unrun as (line,
        source), which the notes say never ran (a monkeypatch of PyTorch's
        timing, a file written at import: kloop never imports the module)."""
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                             ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)):
            return
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            return
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            return  # if __name__ == "__main__": what a script runs
        self.unrun.append((node.lineno, source_of(self.src, node, 60)))

    # ---- the class ----
    def model(self, cls):
        init = forward = None
        for n in cls.body:
            if isinstance(n, ast.FunctionDef) and n.name == "__init__":
                init = n
            elif isinstance(n, ast.FunctionDef) and n.name == "forward":
                forward = n
        if forward is None:
            bases = [source_of(self.src, b) for b in cls.bases]
            bases = [b for b in bases if b not in ("nn.Module", "Module", "torch.nn.Module")]
            if bases:
                raise Refused(cls, "ModelNew has no forward of its own: the one it inherits "
                                   "from %s is PyTorch code, which kloop does not run. %s"
                              % (bases[0], SUPPORTED))
            raise Refused(cls, "ModelNew has no forward")
        attrs = self.init_attrs(init) if init else {}
        a = forward.args
        if a.vararg or a.kwarg or a.kwonlyargs or getattr(a, "posonlyargs", []):
            raise Refused(forward, "forward takes *args, **kwargs or keyword-only parameters: "
                                   "kloop maps forward's positional parameters onto the "
                                   "problem's inputs in order")
        params = [p.arg for p in a.args[1:]]
        body = list(forward.body)
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        ret = body[-1] if body else None
        for st in body:
            if st is not ret or not isinstance(st, ast.Return) or not isinstance(st.value,
                                                                                 ast.Call):
                raise Refused(st, "forward does more than return mod.fn(...): `%s`. %s; move "
                                  "the PyTorch operations into the C++/CUDA function"
                              % (source_of(self.src, st), SUPPORTED))
        if ret is None:
            raise Refused(forward, "forward has no return. " + SUPPORTED)
        call = ret.value
        f = call.func
        if not isinstance(f, ast.Attribute):
            raise Refused(call, "forward returns `%s`, not a call of a load_inline module's "
                                "function. %s" % (source_of(self.src, call), SUPPORTED))
        mod = self.module_of(f.value, attrs)
        if mod is None:
            raise Refused(call, "forward calls `%s`, which is not a function of a load_inline "
                                "module. %s" % (source_of(self.src, f), SUPPORTED))
        fn = f.attr
        if mod["functions"] is not None and fn not in mod["functions"]:
            raise Refused(call, "forward calls %s, which load_inline's functions (%s) do not "
                                "name" % (fn, ", ".join(mod["functions"])))
        if call.keywords:
            raise Refused(call, "forward passes %s keyword arguments: kloop passes arguments "
                                "by position" % fn)
        args = [self.argument(x, params, attrs) for x in call.args]
        cpp_text = "".join(p["text"] for p in mod["cpp"])
        if mod["functions"] is None and "PYBIND11_MODULE" not in cpp_text and \
                "PYBIND11_MODULE" not in "".join(p["text"] for p in mod["cuda"]):
            raise Refused(call, "load_inline has no functions= and its sources no "
                                "PYBIND11_MODULE: its module exposes nothing for forward to "
                                "call")
        return {"ok": True, "lang": "cuda" if mod["cuda"] else "cpp", "module": mod["name"],
                "function": fn, "functions": mod["functions"], "cpp": mod["cpp"],
                "cuda": mod["cuda"], "args": args, "forward": params, "notes": self.notes,
                "line": call.lineno}

    def init_params(self, init):
        """__init__'s parameters after self: {name: (position or None, default
        number or None)} (a keyword-only one has no position)"""
        a = init.args
        pos = [p.arg for p in getattr(a, "posonlyargs", [])] + [p.arg for p in a.args]
        pos = pos[1:]
        out = {}
        defaults = [None] * (len(pos) - len(a.defaults)) + [self.number(d) for d in a.defaults]
        for k, name in enumerate(pos):
            out[name] = (k, defaults[k])
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            out[p.arg] = (None, self.number(d) if d is not None else None)
        return out

    def init_attrs(self, init):
        """self.X set in __init__: ("module", rec) | ("number", v) | ("param", name) |
        ("submodule", name) | ("init_arg", name, position, default) | ("other", node)"""
        attrs = {}
        iparams = self.init_params(init)
        for st in init.body:
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                c = st.value
                if (isinstance(c.func, ast.Attribute) and c.func.attr == "register_buffer"
                        and c.args and isinstance(c.args[0], ast.Constant)):
                    attrs[str(c.args[0].value)] = ("param", str(c.args[0].value))
                continue
            if not isinstance(st, ast.Assign):
                continue
            for t in st.targets:
                if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                        and t.value.id == "self"):
                    continue
                v = st.value
                num = self.number(v)
                if isinstance(v, ast.Name) and v.id in self.modules:
                    attrs[t.attr] = ("module", self.modules[v.id])
                elif num is not None:
                    attrs[t.attr] = ("number", num)
                elif isinstance(v, ast.Name) and v.id in iparams:
                    attrs[t.attr] = ("init_arg", v.id) + iparams[v.id]
                elif isinstance(v, ast.Call):
                    fname = v.func.attr if isinstance(v.func, ast.Attribute) else \
                        getattr(v.func, "id", "")
                    attrs[t.attr] = ("param" if fname in ("Parameter", "Buffer")
                                     else "submodule", t.attr)
                else:
                    attrs[t.attr] = ("other", st)
        return attrs

    def module_of(self, node, attrs):
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "self"):
            a = attrs.get(node.attr)
            return a[1] if a and a[0] == "module" else None
        return None

    def argument(self, x, params, attrs):
        if (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute)
                and x.func.attr == "contiguous" and not x.args and not x.keywords):
            x = x.func.value  # kloop's tensors are contiguous already
        if isinstance(x, ast.Name) and x.id in params:
            return {"input": params.index(x.id)}
        v = self.number(x)
        if v is not None:
            kind = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
            return {kind: v}
        dotted = self.dotted_self(x)
        if dotted:
            a = attrs.get(dotted.split(".")[0])
            if a and a[0] == "number" and "." not in dotted:
                v = a[1]
                kind = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else \
                    "float"
                return {kind: v}
            if a and a[0] == "init_arg" and "." not in dotted:
                # the problem's get_init_inputs() value of that parameter (the
                # worker maps it: by position, or by name for a dict)
                arg = {"init": a[1], "attr": dotted}
                if a[2] is not None:
                    arg["position"] = a[2]
                if a[3] is not None:
                    arg["default"] = a[3]
                return arg
            if a and (a[0] == "param" or (a[0] == "submodule" and "." in dotted)):
                return {"param": dotted}
            raise Refused(x, "forward passes self.%s, which kloop cannot map: %s"
                          % (dotted, SUPPORTED))
        raise Refused(x, "forward passes `%s`. %s" % (source_of(self.src, x), SUPPORTED))

    @staticmethod
    def dotted_self(x):
        parts = []
        while isinstance(x, ast.Attribute):
            parts.append(x.attr)
            x = x.value
        if isinstance(x, ast.Name) and x.id == "self" and parts:
            return ".".join(reversed(parts))
        return None


def _syntax(e):
    r = Refused(None, "the module does not parse: %s" % (e.msg,))
    r.line = e.lineno or 0
    return r


def main(argv):
    if len(argv) != 2:
        print("usage: modelnew.py FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            src = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(json.dumps({"ok": False, "line": 0, "error": "cannot read it: %s" % e}))
        return 0
    try:
        out = Reader(src).read()
    except Refused as e:
        out = {"ok": False, "line": e.line, "error": str(e)}
    except RecursionError:
        out = {"ok": False, "line": 0, "error": "the module nests too deeply to read"}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
