"""Runs a user's own training script for `oomlint probe --script`, counts its
optimizer steps, and reports after each step what survives it and which
source lines that belongs to.

    python3 wrapper.py --fd FD --steps N --device cpu|cuda [--map-cuda 0|1] [--memory BYTES]
                       [--snapshot FILE] --script train.py [-- ARGS...]

--map-cuda 1 runs a script written for CUDA on the CPU (cudacpu.py); --memory
is what the mapped torch.cuda.get_device_properties() reports; --snapshot
writes the CUDA allocator's history at the end (CUDA, torch 2.0+).

The script runs as __main__ with sys.argv = [script, *ARGS], as `python
train.py ARGS` would run it. Steps are counted by wrapping the `step` method
of every torch.optim.Optimizer class (at the class that defines it, when the
first optimizer is built) and GradScaler.step; a step inside another counted
step (a scaler calling its optimizer, an optimizer subclass calling super)
counts once. After N steps the wrapper reports and ends the process; a
script that ends first (finished, raised, sys.exit, os._exit) is reported
with how it ended and the status it chose.

The probe's modules are imported as the package _oomlint_probe, never by
their bare names, so a user's harness.py or cudacpu.py beside the script
imports as the user's.

What it reports per step (JSON lines on --fd, read by probe/probe_script.c):
  - saved tensors alive, grouped by the user source line that saved them
    (saved-tensor hooks; the line is the innermost frame in the user's code);
  - holders: names in the user's frames (`total`, `history`,
    `model.fc.weight.grad`) from which autograd graphs are reachable, with the
    nodes and saved bytes reachable from each, and the line that last changed
    them. That line is found by tracing line events, only in the user's own
    files and only once some holder has grown, so a clean script runs untraced;
  - on CUDA, where torch has it (2.0+), the allocator's recorded history:
    device bytes alive grouped by the user line that allocated them;
  - the budget: every live tensor storage on the device, once, as parameters,
    gradients, optimizer state, kept for backward or other, at the first
    backward() of the step with the most alive (budget_backward) and when the
    step ends (budget_end), with a measured total to check it against (glibc's
    heap in use since the script started, or torch.cuda.memory_allocated);
  - on the CPU, the other live tensors and those kept for backward by the
    user line that created them (alloc_sites, kept_sites, from a dispatch
    mode) and the holder that keeps them;
  - what each backward(retain_graph=True) used and kept, still alive, by
    that backward's line (retained: OOM103's cost), with its holder;
  - the C heap in use (heap_bytes), the batch (the leading size of the
    outermost module's input) and, when mapped, the CUDA uses mapped so far.
"""
import collections
import ctypes
import functools
import gc
import importlib
import importlib.machinery
import importlib.util
import json
import os
import runpy
import sys
import threading
import time
import traceback
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "_oomlint_probe"


def private_package():
    """Makes this folder importable as the package _oomlint_probe, and its
    modules under that name only: a user's own harness.py or cudacpu.py
    beside their script must import as theirs, so this folder leaves
    sys.path (Python put it first, as the folder of the file it runs) and
    nothing of the probe is in sys.modules under a bare name. harness.py
    does the same when it runs the scenarios."""
    if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == os.path.realpath(HERE):
        del sys.path[0]
    if PACKAGE not in sys.modules:
        spec = importlib.machinery.ModuleSpec(PACKAGE, None, is_package=True)
        spec.submodule_search_locations = [HERE]
        sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)


private_package()
harness = importlib.import_module(PACKAGE + ".harness")
cudacpu = importlib.import_module(PACKAGE + ".cudacpu")


class UserCode:
    """Decides which files are the user's: the script and files under its
    folder, except installed packages and the probe itself."""

    def __init__(self, script):
        self.script = os.path.abspath(script)
        self.root = os.path.dirname(self.script)
        self.cache = {}
        skip = {HERE}
        for p in sys.path:
            if p and ("site-packages" in p or "dist-packages" in p):
                skip.add(os.path.abspath(p))
        self.skip = tuple(s + os.sep for s in skip)

    def path(self, code):
        """The display path of a code object's file if it is user code, else None."""
        got = self.cache.get(code, False)
        if got is not False:
            return got
        fname = code.co_filename
        result = None
        if fname and not fname.startswith("<"):
            full = os.path.abspath(fname)
            if (full == self.script or full.startswith(self.root + os.sep)) and not full.startswith(self.skip):
                result = os.path.relpath(full, self.root) if full != self.script else os.path.basename(full)
        self.cache[code] = result
        return result

    def site(self, frame):
        f = frame
        while f is not None:
            p = self.path(f.f_code)
            if p is not None:
                return (p, f.f_lineno)
            f = f.f_back
        return None


def fingerprint(obj, torch):
    """What changes when a holder is rebound, appended to or written into."""
    if isinstance(obj, torch.Tensor):
        # not id(obj.grad_fn): torch makes a new Python object for a node on
        # each access once the last one died; the version counter moves with
        # every in-place change (`total += loss` on a tensor keeps its id)
        return (id(obj), obj._version)
    try:
        n = len(obj)
    except Exception:
        return (id(obj),)
    last = 0
    try:
        if isinstance(obj, dict):
            if n:
                last = id(next(reversed(obj.values()))) if hasattr(obj, "__reversed__") else 0
        elif n:
            last = id(obj[-1])
    except Exception:
        last = 0
    return (id(obj), n, last)


def resolve(frame, name, accessors):
    try:
        obj = frame.f_locals[name] if name in frame.f_locals else frame.f_globals[name]
    except KeyError:
        return None
    for kind, key in accessors:
        try:
            if kind == "attr":
                obj = getattr(obj, key)
            elif kind == "item":
                obj = obj[key]
            else:
                obj = obj[key]
        except Exception:
            return None
    return obj


class Watch:
    """A holder being watched for the line that changes it."""
    __slots__ = ("path", "frame", "name", "accessors", "last", "line")

    def __init__(self, path, frame, name, accessors, torch):
        self.path = path
        self.frame = frame
        self.name = name
        self.accessors = accessors
        self.last = fingerprint(resolve(frame, name, accessors), torch)
        self.line = None


class Heap:
    """The C allocator's bytes in use (glibc: mallinfo2, else mallinfo), not
    resident memory: RSS also counts freed memory the heap keeps, and grows
    with fragmentation when nothing more is alive. None where there is no
    glibc."""

    class _Info2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    class _Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_int) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    def __init__(self):
        self.fn = None
        try:
            libc = ctypes.CDLL(None)
        except OSError:
            return
        for name, struct in (("mallinfo2", self._Info2), ("mallinfo", self._Info)):
            fn = getattr(libc, name, None)
            if fn is not None:
                fn.restype = struct
                fn.argtypes = []
                self.fn = fn
                self.wraps = name == "mallinfo"  # int fields: wrap at 2 GiB
                break

    def in_use(self):
        if self.fn is None:
            return None
        info = self.fn()
        used = info.uordblks + info.hblkhd
        if self.wraps:
            used &= 0xFFFFFFFF
        return int(used)


def alloc_sites_mode(torch, site_of):
    """A dispatch mode that remembers, for each storage an operator creates,
    the user line it was created at (views and in-place results share their
    input's storage and keep its line). None where torch lacks modes."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_flatten
    except Exception:
        return None

    class AllocSites(TorchDispatchMode):
        _probe_internal = True

        def __init__(self):
            super().__init__()
            self.sites = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            try:
                flat_out = tree_flatten(out)[0]
                tensors = [t for t in flat_out if isinstance(t, torch.Tensor)]
                if tensors:
                    inputs = set()
                    for a in tree_flatten((args, kwargs or {}))[0]:
                        if isinstance(a, torch.Tensor):
                            inputs.add(harness.storage_key(a)[0])
                    site = None
                    for t in tensors:
                        key = harness.storage_key(t)[0]
                        if key in inputs:
                            continue
                        if site is None:
                            site = site_of()
                        self.sites[key] = site
            except Exception:
                pass
            return out

    return AllocSites()


class Probe:
    def __init__(self, out, steps, device, script, mapped=False, snapshot=None):
        import torch
        self.torch = torch
        self.out = out
        self.limit = steps
        self.device = device
        self.user = UserCode(script)
        self.meter = harness.Meter(site_of=self._site)
        self.count = 0
        self.depth = threading.local()
        self.t_last = time.perf_counter()
        self.prev_nodes = {}
        self.watches = {}      # holder path -> Watch
        self.change_lines = {} # holder path -> (file, line)
        self.frame_lines = {}   # id(frame) -> the line it last started
        self.tracing = False
        self.cuda_history = False
        self.tracked = set()
        self.mapped = mapped        # CUDA mapped to the CPU (cudacpu.py)
        self.snapshot = snapshot    # --snapshot FILE (CUDA)
        self.shim = None
        self.heap = Heap()
        self.heap_base = None
        self.optimizers = []        # weak references
        self.alloc = None           # the allocation-site dispatch mode (CPU)
        self.best = None            # this step's census at backward() with the most alive
        self.backward_censuses = 0
        self.module_depth = 0
        self.batches = collections.Counter()
        self.in_census = False
        self.real_exit = os._exit   # os._exit before the script could replace it

    # ---- attribution of saved tensors
    def _site(self):
        return self.user.site(sys._getframe(2))

    # ---- counting steps
    def wrap_step(self, cls):
        fn = cls.__dict__.get("step")
        if fn is None or getattr(fn, "_oomlint_probe", False):
            return
        probe = self

        @functools.wraps(fn)
        def step(opt, *args, **kwargs):
            depth = getattr(probe.depth, "n", 0)
            probe.depth.n = depth + 1
            try:
                result = fn(opt, *args, **kwargs)
            finally:
                probe.depth.n = depth
            if depth == 0:
                probe.on_step(opt, sys._getframe(1))
            return result

        step._oomlint_probe = True
        setattr(cls, "step", step)

    def install(self):
        torch = self.torch
        optim = torch.optim.Optimizer
        probe = self
        orig_init = optim.__init__

        @functools.wraps(orig_init)
        def init(opt, *args, **kwargs):
            orig_init(opt, *args, **kwargs)
            probe.optimizers.append(weakref.ref(opt))
            for klass in type(opt).__mro__:
                if "step" in klass.__dict__ and issubclass(klass, optim):
                    probe.wrap_step(klass)
                    break

        optim.__init__ = init
        scalers = []
        amp = getattr(torch, "amp", None)
        if amp is not None and hasattr(amp, "GradScaler"):
            scalers.append(amp.GradScaler)
        cuda_amp = getattr(getattr(torch, "cuda", None), "amp", None)
        if cuda_amp is not None and hasattr(cuda_amp, "GradScaler"):
            scalers.append(cuda_amp.GradScaler)
        for klass in scalers:
            for k in klass.__mro__:
                if "step" in k.__dict__:
                    self.wrap_step(k)
                    break
        self.meter.install()
        if self.device == "cuda":
            self.cuda_history = start_cuda_history(torch)
        if self.mapped:
            self.shim = cudacpu.CudaOnCpu(torch, memory_of=self.memory_now)
            self.shim.install()
        orig_backward = torch.autograd.backward

        @functools.wraps(orig_backward)
        def backward(*args, **kwargs):
            # a training step's memory is highest about when backward starts:
            # everything kept for it is alive and its gradients are yet to come
            if probe.backward_censuses < 4 and not probe.in_census:
                probe.backward_censuses += 1
                probe.keep_best(probe.census("backward"))
            # backward(tensors, grad_tensors, retain_graph, create_graph, ...):
            # one that keeps its graph (OOM103) notes what it used, by its line
            retain = kwargs["retain_graph"] if "retain_graph" in kwargs else args[2] if len(args) > 2 else None
            site = probe._site() if retain else None
            meter = probe.meter
            before, meter.retaining = meter.retaining, site or meter.retaining
            try:
                return orig_backward(*args, **kwargs)
            finally:
                meter.retaining = before

        torch.autograd.backward = backward
        orig_call = torch.nn.Module.__call__

        @functools.wraps(orig_call)
        def call(m, *args, **kwargs):
            if probe.module_depth == 0 and args and isinstance(args[0], torch.Tensor) and args[0].dim() > 0:
                probe.batches[int(args[0].shape[0])] += 1
            probe.module_depth += 1
            try:
                return orig_call(m, *args, **kwargs)
            finally:
                probe.module_depth -= 1

        torch.nn.Module.__call__ = call
        if self.device != "cuda":
            self.alloc = alloc_sites_mode(torch, self._site)
        self.heap_base = self.heap.in_use()

    def start_alloc_tracking(self):
        if self.alloc is not None:
            self.alloc.__enter__()

    # ---- the budget: every live tensor storage, each counted once, in one part
    def census(self, at):
        torch = self.torch
        self.in_census = True
        try:
            return self._census(torch, at)
        finally:
            self.in_census = False

    def _census(self, torch, at):
        dev = "cuda" if self.device == "cuda" else "cpu"
        parts = {"parameters": 0, "gradients": 0, "optimizer": 0, "saved": 0, "other": 0}
        owner = {}  # storage key -> part

        def add(t, part):
            if not isinstance(t, torch.Tensor) or t.device.type != dev:
                return
            key, n = harness.storage_key(t)
            if key in owner:
                return False
            owner[key] = (part, n)
            parts[part] += n
            return True

        tensor = torch.Tensor
        # type(), not isinstance(): a dead weak proxy raises on __class__
        live = [o for o in gc.get_objects() if issubclass(type(o), tensor)]
        opts = [r() for r in self.optimizers]
        opts = [o for o in opts if o is not None]
        params = []
        for opt in opts:
            for group in getattr(opt, "param_groups", []):
                params.extend(group.get("params", []))
        params.extend(t for t in live if isinstance(t, torch.nn.Parameter))
        for p in params:
            add(p, "parameters")
        for p in params:
            if isinstance(p, torch.Tensor) and p.grad is not None:
                add(p.grad, "gradients")
        for opt in opts:
            for st in list(getattr(opt, "state", {}).values()):
                if isinstance(st, dict):
                    for v in st.values():
                        add(v, "optimizer")
        for key, (n, site) in self.meter.saved_entries().items():
            if key not in owner and key[0] == dev:
                owner[key] = ("saved", n)
                parts["saved"] += n
        batch = self.batches.most_common(1)[0][0] if self.batches else None
        other_batch = 0  # of the other tensors, those whose leading size is the batch's
        for t in live:
            if add(t, "other") and batch is not None and t.dim() > 0 and t.shape[0] == batch:
                other_batch += owner[harness.storage_key(t)[0]][1]
        del live
        total = sum(parts.values())
        if self.device == "cuda" and torch.cuda.is_initialized():
            measured = torch.cuda.memory_allocated()
        else:
            heap = self.heap.in_use()
            measured = heap - self.heap_base if heap is not None and self.heap_base is not None else None
        if self.shim is not None:
            self.shim.peak_allocated = max(self.shim.peak_allocated, total)
        return {"at": at, "parts": parts, "total": total, "measured": measured, "owner": owner,
                "other_batch": other_batch if batch is not None else None}

    def memory_now(self):
        """torch.cuda.memory_allocated() and memory_reserved() on the CPU."""
        if self.in_census:
            return (0, 0)
        c = self.census("call")
        return (c["total"], self.heap.in_use())

    def keep_best(self, c):
        if self.best is None or c["total"] > self.best["total"]:
            self.best = c

    # ---- after each step
    def on_step(self, opt, frame):
        torch = self.torch
        self.count += 1
        params = getattr(opt, "param_groups", None)
        if params is not None and id(opt) not in self.tracked:
            self.tracked.add(id(opt))
            self.meter.track(p for group in params for p in group.get("params", []))
        cuda = self.device == "cuda" and torch.cuda.is_initialized()
        if cuda:
            torch.cuda.synchronize()
        now = time.perf_counter()
        elapsed, self.t_last = now - self.t_last, now
        rec = {"t": "step", "step": self.count, "time_s": elapsed, "saved_bytes": self.meter.alive,
               "rss_bytes": harness.rss_bytes()}
        if cuda:
            rec["cuda_allocated"] = torch.cuda.memory_allocated()
            rec["cuda_reserved"] = torch.cuda.memory_reserved()
        holders, site_rows, claims = self.measure(frame)
        rec["holders"] = holders
        rec["sites"] = site_rows
        if self.cuda_history:
            rec["cuda_sites"] = cuda_sites(torch, self.user)
        end = self.census("step")
        rec["budget_end"] = dict(end["parts"], total=end["total"], measured=end["measured"],
                                 other_batch=end["other_batch"])
        if self.best is not None:
            best = self.best
            rec["budget_backward"] = dict(best["parts"], total=best["total"], measured=best["measured"],
                                          other_batch=best["other_batch"])
        rec["heap_bytes"] = self.heap.in_use()
        rec["retained"] = self.retained_rows(claims)
        if self.alloc is not None:
            rec["alloc_sites"] = self.alloc_rows(end["owner"], claims, "other")
            rec["kept_sites"] = self.alloc_rows(end["owner"], claims, "saved")
        if self.batches:
            rec["batch"] = self.batches.most_common(1)[0][0]
        if self.shim is not None:
            rec["mapped"] = cudacpu.summary(self.shim.counts)
        self.best = None
        self.backward_censuses = 0
        self.batches.clear()
        harness.emit(self.out, rec)
        if self.count >= self.limit:
            self.finish("steps")
        self.t_last = time.perf_counter()

    def retained_rows(self, claims):
        """Saved tensors still alive that a backward(retain_graph=True) used
        and kept, by that backward's line, with the holder that keeps most
        of them."""
        out = []
        for site, kept in sorted(self.meter.retained_alive().items()):
            held = collections.Counter()
            for key, n in kept.items():
                holder = claims.get(key)
                if holder is not None:
                    held[holder] += n
            n = sum(kept.values())
            top = held.most_common(1)
            out.append({"file": site[0], "line": site[1], "bytes": n,
                        "held_by": top[0][0] if top and top[0][1] * 2 >= n else None})
        return out

    def alloc_rows(self, owner, claims, part_wanted):
        """Live tensors of one part of the budget ("other": neither
        parameters, gradients, optimizer state nor kept for backward;
        "saved": kept for backward), by the user line that created them,
        with the holder (a name in the user's frames) that keeps most of
        them. Sites of tensors that died are forgotten (on the "other" pass,
        which runs first)."""
        rows = {}
        sites = self.alloc.sites
        live = set()
        for key, (part, n) in owner.items():
            live.add(key)
            if part != part_wanted:
                continue
            site = sites.get(key)
            if site is None:
                continue
            row = rows.setdefault(site, [0, collections.Counter()])
            row[0] += n
            holder = claims.get(key)
            if holder is not None:
                row[1][holder] += n
        if part_wanted == "other":
            for key in [k for k in sites if k not in live]:
                del sites[key]
        out = []
        for site, (n, held) in sorted(rows.items()):
            top = held.most_common(1)
            out.append({"file": site[0], "line": site[1], "bytes": n,
                        "held_by": top[0][0] if top and top[0][1] * 2 >= n else None})
        return out

    def measure(self, frame):
        torch = self.torch
        walk = harness.GraphWalk(torch)
        frames = {}
        seen_globals = set()
        f = frame
        while f is not None:
            if self.user.path(f.f_code) is not None:
                for name, v in list(f.f_locals.items()):
                    before = len(walk.holder_paths)
                    walk.add_root(name, v)
                    for path in list(walk.holder_paths)[before:]:
                        frames[path] = (f, name)
                g = f.f_globals
                first = id(g) not in seen_globals
                seen_globals.add(id(g))
                for name, v in list(g.items()) if first else ():
                    if name.startswith("__"):
                        continue
                    before = len(walk.holder_paths)
                    walk.add_root(name, v)
                    for path in list(walk.holder_paths)[before:]:
                        frames[path] = (f, name)
            f = f.f_back
        entries = self.meter.saved_entries()
        # Holders often share a graph (`loss` reaches everything `output`
        # reaches, and the carried `hidden` too). Each node and saved tensor is
        # owned by the holder that reaches the fewest nodes among those that
        # reach it, the most specific one; a holder grows "on its own" when
        # what it owns grows. Figures shown are what it reaches in full.
        reach = {path: harness.GraphWalk.reach(roots) for path, roots in walk.holders.items()}
        claimed_nodes = set()
        claimed = set()
        claims = {}  # storage key -> the holder that owns it
        holders = []
        for path in sorted(reach, key=lambda p: (len(reach[p]), p)):
            nodes = reach[path]
            storages = saved_storages(nodes.values(), torch)
            # the graph-carrying tensors it holds count with what their graphs keep
            own_tensors = walk.holder_tensors.get(path, {})
            for key, nbytes in own_tensors.items():
                if key not in entries:
                    entries[key] = (nbytes, None)
                storages.add(key)
            own_nodes = 0
            for k in nodes:
                if k not in claimed_nodes:
                    claimed_nodes.add(k)
                    own_nodes += 1
            held = own_bytes = 0
            lines = {}
            for key in storages:
                entry = entries.get(key)
                if entry is None:
                    continue
                held += entry[0]
                if key not in claimed:
                    claimed.add(key)
                    claims[key] = path
                    own_bytes += entry[0]
                if entry[1] is not None:
                    lines[entry[1]] = lines.get(entry[1], 0) + entry[0]
            n = len(nodes)
            prev = self.prev_nodes.get(path)
            if prev is not None and own_nodes > prev and path not in self.watches and path in frames \
                    and len(self.watches) < 16:
                fr, name = frames[path]
                self.watches[path] = Watch(path, fr, name, walk.holder_paths[path], torch)
                self.start_tracing()
            self.prev_nodes[path] = own_nodes
            line = self.change_lines.get(path)
            top_site = max(lines.items(), key=lambda kv: kv[1])[0] if lines else None
            holders.append({"name": path, "nodes": n, "bytes": held, "own_nodes": own_nodes, "own_bytes": own_bytes,
                            "file": line[0] if line else None, "line": line[1] if line else None,
                            "site_file": top_site[0] if top_site else None,
                            "site_line": top_site[1] if top_site else None})
        del reach
        rows = {}
        for key, (n, site) in entries.items():
            if key in claimed or site is None:
                continue
            rows[site] = rows.get(site, 0) + n
        site_rows = [{"file": s[0], "line": s[1], "bytes": n} for s, n in sorted(rows.items())]
        return holders, site_rows, claims

    # ---- finding the line that changes a holder
    def start_tracing(self):
        if self.tracing:
            return
        self.tracing = True
        sys.settrace(self._global_trace)
        f = sys._getframe(1)
        while f is not None:
            if self.user.path(f.f_code) is not None:
                f.f_trace = self._local_trace
                f.f_trace_lines = True
            f = f.f_back

    def _global_trace(self, frame, event, arg):
        if self.user.path(frame.f_code) is None:
            return None
        return self._local_trace

    def _local_trace(self, frame, event, arg):
        """A change seen at a line event of a frame happened while that frame
        ran its previous line (or in code it called that is not the user's);
        a change seen as a frame returns happened on its returning line. A
        change inside a user function is seen at that function's own events,
        so `self.log(loss)` is not blamed for what log() does on its lines."""
        if event != "line" and event != "return":
            return self._local_trace
        key = id(frame)
        here = (self.user.path(frame.f_code), frame.f_lineno)
        before = self.frame_lines.get(key) if event == "line" else here
        torch = self.torch
        for w in self.watches.values():
            fp = fingerprint(resolve(w.frame, w.name, w.accessors), torch)
            if fp != w.last:
                w.last = fp
                if before is not None:
                    self.change_lines[w.path] = before
        if event == "line":
            self.frame_lines[key] = here
        else:
            self.frame_lines.pop(key, None)
        return self._local_trace

    # ---- how the run ends
    def hook_exit(self):
        """os._exit ends the process at once, with no exception to catch:
        report the end (the status, the line that called it) before it
        does. Only this process: a child forked from it (a DataLoader
        worker, a daemon) exits as it would."""
        real_exit = self.real_exit
        pid = os.getpid()
        probe = self

        @functools.wraps(real_exit)
        def _exit(status):
            if os.getpid() == pid:
                site = probe.user.site(sys._getframe(1))
                where = f" at {site[0]}:{site[1]}" if site else ""
                code = status if isinstance(status, int) and not isinstance(status, bool) else 1
                probe.finish("exit", f"os._exit({status!r}){where}", status=code)
            real_exit(status)

        os._exit = _exit

    def finish(self, reason, error=None, status=0):
        """Reports the end and exits with `status`, the script's own exit
        status where it chose one."""
        sys.settrace(None)
        if self.alloc is not None:
            try:
                self.alloc.__exit__(None, None, None)
            except Exception:
                pass
            self.alloc = None
        rec = {"t": "end", "reason": reason, "steps": self.count, "error": error, "status": status}
        if self.snapshot:
            rec["snapshot_error"] = dump_cuda_snapshot(self.torch, self.snapshot) if self.cuda_history else (
                f"torch {self.torch.__version__} cannot record the CUDA allocator's history "
                "(torch.cuda.memory._record_memory_history needs torch 2.0 or later)")
        if self.shim is not None:
            rec["mapped"] = cudacpu.summary(self.shim.counts)
        harness.emit(self.out, rec)
        self.out.flush()
        self.real_exit(status)


def saved_storages(nodes, torch):
    """Storage keys of the saved tensors still held by these nodes (torch
    exposes them as `_saved_*` attributes since 1.10)."""
    keys = set()
    names_of = {}
    for node in nodes:
        t = type(node)
        names = names_of.get(t)
        if names is None:
            names = [a for a in dir(node) if a.startswith("_saved_")]
            names_of[t] = names
        for a in names:
            try:
                v = getattr(node, a)
            except Exception:  # freed by backward, or modified in place
                continue
            for item in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(item, torch.Tensor):
                    keys.add(harness.storage_key(item)[0])
    return keys


def start_cuda_history(torch):
    mem = getattr(getattr(torch, "cuda", None), "memory", None)
    record = getattr(mem, "_record_memory_history", None)
    if record is None or not hasattr(mem, "_snapshot"):
        return False
    try:
        record(enabled="all", context="all", stacks="python", max_entries=200000)  # torch 2.1+
        return True
    except TypeError:
        pass
    except Exception:
        return False
    try:
        record(True)  # torch 2.0
        return True
    except Exception:
        return False


def dump_cuda_snapshot(torch, path):
    """The allocator's history as PyTorch's memory viewer loads it
    (https://pytorch.org/memory_viz); an error message when it cannot."""
    mem = torch.cuda.memory
    try:
        if hasattr(mem, "_dump_snapshot"):
            mem._dump_snapshot(path)
        else:
            import pickle
            with open(path, "wb") as f:
                pickle.dump(mem._snapshot(), f)
        return None
    except Exception as e:  # reported by the C side, the run's figures stand
        return f"cannot write the snapshot {path}: {e}"


def cuda_sites(torch, user):
    """Device bytes alive, by the innermost user line in each block's
    allocation stack (frames are listed innermost first)."""
    try:
        snap = torch.cuda.memory._snapshot()
    except Exception:
        return []
    segments = snap.get("segments", []) if isinstance(snap, dict) else snap
    rows = {}
    for seg in segments:
        for block in seg.get("blocks", []):
            if block.get("state") != "active_allocated":
                continue
            frames = block.get("frames")
            if frames is None:
                history = block.get("history") or []
                frames = history[-1].get("frames", []) if history else []
            site = None
            for fr in frames or []:
                fname = fr.get("filename", "")
                full = os.path.abspath(fname) if fname and not fname.startswith("<") else None
                if full is None:
                    continue
                if full == user.script or (full.startswith(user.root + os.sep) and not full.startswith(user.skip)):
                    rel = os.path.basename(full) if full == user.script else os.path.relpath(full, user.root)
                    site = (rel, int(fr.get("line", 0)))
                    break
            if site is not None:
                rows[site] = rows.get(site, 0) + int(block.get("size", 0))
    return [{"file": s[0], "line": s[1], "bytes": n} for s, n in sorted(rows.items())]


def main(argv):
    opts = {"--fd": None, "--steps": "20", "--device": "cpu", "--script": None, "--map-cuda": "0",
            "--snapshot": None, "--memory": "0"}
    args = []
    rest = list(argv)
    while rest:
        a = rest.pop(0)
        if a == "--":
            args = rest
            break
        if a in opts and rest:
            opts[a] = rest.pop(0)
        else:
            sys.stderr.write(f"wrapper.py: bad argument {a!r}\n")
            return 2
    if opts["--fd"] is None or opts["--script"] is None:
        sys.stderr.write("wrapper.py: --fd and --script are required\n")
        return 2
    out = harness.open_out(int(opts["--fd"]))
    os.environ["OOMLINT_PROBE_MEMORY"] = opts["--memory"]  # the mapped get_device_properties().total_memory
    import torch
    script = os.path.abspath(opts["--script"])
    mapped = opts["--map-cuda"] == "1"
    probe = Probe(out, int(opts["--steps"]), opts["--device"], script, mapped=mapped, snapshot=opts["--snapshot"])
    start = {"t": "start", "torch": torch.__version__, "python": sys.version.split()[0],
             "device": opts["--device"], "script": script, "steps": probe.limit, "cuda_mapped": mapped,
             "heap_counters": probe.heap.in_use() is not None}
    if mapped:
        start["autocast"] = "off"
    if opts["--device"] == "cuda":
        try:
            start["device_memory"] = torch.cuda.get_device_properties(0).total_memory
        except Exception:
            pass
    harness.emit(out, start)
    try:
        probe.install()
    except cudacpu.OutOfScope as e:
        probe.finish("out_of_scope", str(e))
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(script))  # as `python train.py` puts it
    probe.start_alloc_tracking()
    probe.hook_exit()
    try:
        runpy.run_path(script, run_name="__main__")
    except cudacpu.OutOfScope as e:
        probe.finish("out_of_scope", str(e))
    except SystemExit as e:
        # as Python exits: None is 0, an int its status, anything else is
        # printed and the status is 1
        code = e.code
        if code is not None and code != 0:
            if isinstance(code, int) and not isinstance(code, bool):
                probe.finish("exit", f"sys.exit({code})", status=code & 0xFF)
            probe.finish("exit", f"sys.exit({code!r})", status=1)
    except BaseException as e:  # the user's script failed: report it, keep the steps measured
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        probe.finish("error", "".join(tb[-6:]), status=1)
    probe.finish("finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
