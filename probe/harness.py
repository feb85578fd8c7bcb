"""The probe's measuring harness: runs one variant of one scenario and reports
what memory, the autograd graph and time do at every iteration.

`oomlint probe` (probe/probe.c) writes this directory to a private
temporary folder and starts one fresh process per variant:

    python3 harness.py list --fd 3
    python3 harness.py run OOM101/train bad --device cpu --iterations 20 --fd 3

`list` writes one "scenario" record per scenario. Each run writes JSON lines
to the file descriptor --fd: one "start" record
(the scenario, its sizes, the torch version), one "iter" record per iteration
and one "end" record. The C runner reads them, fits the growth per step and
decides the verdicts; nothing here judges.

What is measured, and why all of it (see "The CUDA probe" in the design):
  - saved_bytes: bytes autograd saved for backward that are still alive after
    the step (saved-tensor hooks; each storage counted once; parameters and
    views of them are not counted, they live anyway). On the CPU this is the
    memory a retained graph costs, exactly what it would cost on a GPU.
  - held_peak_bytes: the most bytes saved for backward alive at once during
    the step, plus the gradients alive at that moment (sampled at every save
    and whenever a tracked parameter receives its gradient).
  - graph_nodes: autograd nodes reachable from live tensors (the scenario's
    frames, their containers and objects, parameters' .grad). After backward
    the saved tensors of a graph are freed but its nodes stay reachable from
    whatever holds the result, so a retained graph shows up here even when
    saved_bytes does not move.
  - rss_bytes / rss_peak_bytes: the process's resident memory after the step
    and its peak during the step (VmHWM, reset at each step where Linux allows).
  - on CUDA: torch.cuda.memory_allocated / max_memory_allocated (reset per
    step) / memory_reserved; the runner adds the driver's view through NVML.

Only the standard library and torch are used; torch 1.13 and 2.x both work.
"""
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# ---- process memory -----------------------------------------------------------------

def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return None


def rss_peak_bytes():
    """VmHWM: the resident peak since the last reset_rss_peak()."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def reset_rss_peak():
    """Linux resets VmHWM to the current RSS when 5 is written to clear_refs
    (since 4.0); where that is refused the peak is the process's so far."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---- tensors ---------------------------------------------------------------------

def storage_key(t):
    """(address, bytes) of the storage under t: views of one block count once."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        n = s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()
        return (t.device.type, t.device.index, s.data_ptr()), int(n)
    except Exception:  # sparse, meta or otherwise storage-less tensors
        return ("id", id(t)), int(t.numel() * t.element_size())


def is_parameter_like(t):
    """A leaf that requires grad (a parameter) or a view of one: alive anyway."""
    base = t._base if getattr(t, "_base", None) is not None else t
    return base.is_leaf and base.requires_grad


class _Saved:
    """What the pack hook hands autograd: a detached alias of the saved tensor.
    It lives exactly as long as autograd keeps the saved tensor. Holding the
    original instead would make a reference cycle for saved outputs (output ->
    grad_fn -> saved -> output) that no collector can see, and leak."""
    __slots__ = ("tensor", "key", "meter", "site", "__weakref__")

    def __del__(self):
        meter = self.meter
        if meter is not None and self.key is not None:
            meter._release(self.key)


class Meter:
    """Counts the bytes autograd holds for backward. Installed once per process
    with saved_tensors_hooks; thread-safe, because CUDA backward runs on the
    autograd engine's threads and frees saved tensors there."""

    _probe_internal = True  # the graph walk never looks inside

    def __init__(self, site_of=None):
        import torch
        self.torch = torch
        self.lock = threading.RLock()
        self.storages = {}      # key -> [count, nbytes, site]
        self.alive = 0
        self.peak = 0
        self.params = []        # tracked parameters (their .grad counts in the peak)
        self.param_ids = set()
        self.grad_bytes = 0     # gradients alive, refreshed at samples
        self.site_of = site_of  # callable() -> site, for attribution (wrapper.py)
        self.sites = {}         # site -> [alive bytes]
        # while a backward that keeps its graph runs (wrapper.py sets it to
        # that backward's site): the saved storages it uses, each with the
        # entry it had then, so a storage saved again later is not taken
        # for the one that backward kept
        self.retaining = None
        self.retained = {}      # site -> {storage key: entry}
        self._ctx = None

    def install(self):
        hooks = self.torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        hooks.__enter__()
        self._ctx = hooks

    def uninstall(self):
        if self._ctx is not None:
            self._ctx.__exit__(None, None, None)
            self._ctx = None

    def track(self, params):
        """Parameters whose gradients count in the peak, sampled when each
        receives its gradient (that is when backward allocates it)."""
        for p in params:
            if id(p) in self.param_ids or not getattr(p, "requires_grad", False):
                continue
            self.param_ids.add(id(p))
            self.params.append(p)
            p.register_hook(self._grad_hook(weakref.ref(p)))

    def _grad_hook(self, pref):
        def hook(grad):
            p = pref()
            extra = 0
            if p is not None and p.grad is None:
                extra = storage_key(grad)[1]
            self.sample(refresh_grads=True, extra=extra)
            return None
        return hook

    def gradients_bytes(self):
        seen = set()
        total = 0
        for p in self.params:
            g = p.grad
            if g is None:
                continue
            key, n = storage_key(g)
            if key not in seen:
                seen.add(key)
                total += n
        return total

    def sample(self, refresh_grads=False, extra=0):
        with self.lock:
            if refresh_grads:
                self.grad_bytes = self.gradients_bytes()
            held = self.alive + self.grad_bytes + extra
            if held > self.peak:
                self.peak = held

    def begin_step(self):
        with self.lock:
            self.grad_bytes = self.gradients_bytes()
            self.peak = self.alive + self.grad_bytes
            self._first_pack = True

    def _pack(self, t):
        alias = t.detach()
        s = _Saved()
        s.tensor = alias
        s.meter = None
        s.key = None
        s.site = None
        if is_parameter_like(t):
            return s
        key, n = storage_key(t)
        site = self.site_of() if self.site_of is not None else None
        with self.lock:
            entry = self.storages.get(key)
            if entry is None:
                self.storages[key] = [1, n, site]
                self.alive += n
                if site is not None:
                    self.sites[site] = self.sites.get(site, 0) + n
            else:
                entry[0] += 1
            if getattr(self, "_first_pack", False):
                # the gradients alive while the forward pass saves (OOM603)
                self.grad_bytes = self.gradients_bytes()
                self._first_pack = False
            held = self.alive + self.grad_bytes
            if held > self.peak:
                self.peak = held
        s.key = key
        s.site = site
        s.meter = self
        return s

    def _unpack(self, s):
        site = self.retaining
        if site is not None and s.key is not None:
            with self.lock:
                entry = self.storages.get(s.key)
                if entry is not None:
                    self.retained.setdefault(site, {})[s.key] = entry
        return s.tensor

    def retained_alive(self):
        """site -> {storage key: bytes} still alive that a backward at that
        site kept (retain_graph=True) after using them; what died is
        forgotten."""
        out = {}
        with self.lock:
            for site, kept in list(self.retained.items()):
                for key in [k for k, e in kept.items() if self.storages.get(k) is not e]:
                    del kept[key]
                if kept:
                    out[site] = {k: e[1] for k, e in kept.items()}
                else:
                    del self.retained[site]
        return out

    def _release(self, key):
        with self.lock:
            entry = self.storages.get(key)
            if entry is None:
                return
            entry[0] -= 1
            if entry[0] == 0:
                del self.storages[key]
                self.alive -= entry[1]
                site = entry[2]
                if site is not None:
                    left = self.sites.get(site, 0) - entry[1]
                    if left > 0:
                        self.sites[site] = left
                    else:
                        self.sites.pop(site, None)

    def saved_by_site(self):
        with self.lock:
            return dict(self.sites)

    def saved_entries(self):
        """storage key -> (bytes, site) of every saved storage alive."""
        with self.lock:
            return {k: (e[1], e[2]) for k, e in self.storages.items()}


# ---- the graph, from the objects that hold it --------------------------------------------

_SKIP_TYPES = None


def _skip_types():
    global _SKIP_TYPES  # a cache of types, set once; not state that changes results
    if _SKIP_TYPES is None:
        import types
        _SKIP_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                       types.MethodType, types.CodeType, types.FrameType, str, bytes, bytearray,
                       int, float, complex, bool, type(None), range, memoryview)
    return _SKIP_TYPES


class GraphWalk:
    """Finds tensors that carry a graph (and parameters' .grad that do) in a
    set of named roots, and counts the autograd nodes reachable from them.
    Containers (list, tuple, dict, set, deque), nn.Modules and plain objects
    are followed a few levels deep; each holder is named by its path from the
    root (`running`, `self.history['loss']`, `model.fc.weight.grad`)."""

    _probe_internal = True
    MAX_DEPTH = 6
    MAX_OBJECTS = 200000
    MAX_CONTAINER = 100000

    def __init__(self, torch):
        self.torch = torch
        self.seen_objects = set()
        self.objects = 0
        self.holders = {}      # path -> list of grad_fn roots
        self.holder_paths = {} # path -> accessor list (for wrapper.py)
        self.holder_tensors = {}  # path -> {storage key: bytes} of the graph-carrying tensors it holds

    def add_root(self, name, obj, accessors=None):
        self._visit(obj, name, accessors if accessors is not None else [], 0)

    def _hold(self, path, accessors, grad_fn, tensor=None):
        roots = self.holders.get(path)
        if roots is None:
            self.holders[path] = roots = []
            self.holder_paths[path] = list(accessors)
            self.holder_tensors[path] = {}
        roots.append(grad_fn)
        if tensor is not None:
            key, n = storage_key(tensor)
            self.holder_tensors[path][key] = n

    def _visit(self, obj, path, acc, depth):
        torch = self.torch
        if depth > self.MAX_DEPTH or self.objects > self.MAX_OBJECTS:
            return
        if isinstance(obj, _skip_types()) or getattr(obj, "_probe_internal", False):
            return
        oid = id(obj)
        if oid in self.seen_objects:
            return
        self.seen_objects.add(oid)
        self.objects += 1
        if isinstance(obj, torch.Tensor):
            gf = obj.grad_fn
            if gf is not None:
                self._hold(path, acc, gf, obj)
            g = obj.grad if obj.is_leaf else None
            if g is not None and g.grad_fn is not None:
                self._hold(path + ".grad", acc + [("attr", "grad")], g.grad_fn)
            return
        if isinstance(obj, torch.nn.Module):
            for name, p in obj._parameters.items():
                if p is not None and p.grad is not None and p.grad.grad_fn is not None:
                    self._hold(f"{path}.{name}.grad", acc + [("attr", name), ("attr", "grad")],
                               p.grad.grad_fn)
            for name, b in obj._buffers.items():
                if b is not None and b.grad_fn is not None:
                    self._hold(f"{path}.{name}", acc + [("attr", name)], b.grad_fn)
            for name, m in obj._modules.items():
                if m is not None:
                    self._visit(m, f"{path}.{name}", acc + [("attr", name)], depth + 1)
            for name, v in vars(obj).items():
                if not name.startswith("_") and name != "training":
                    self._visit(v, f"{path}.{name}", acc + [("attr", name)], depth + 1)
            return
        if isinstance(obj, torch.optim.Optimizer):
            return  # its parameters are the model's; its state holds no graph
        if isinstance(obj, (list, tuple)) or type(obj).__name__ == "deque":
            if len(obj) > self.MAX_CONTAINER:
                return
            for i, v in enumerate(obj):
                if isinstance(v, torch.Tensor):
                    self._tensor_in(v, path, acc)
                else:
                    self._visit(v, path, acc + [("item", i)], depth + 1)
            return
        if isinstance(obj, (set, frozenset)):
            if len(obj) > self.MAX_CONTAINER:
                return
            for v in obj:
                if isinstance(v, torch.Tensor):
                    self._tensor_in(v, path, acc)
            return
        if isinstance(obj, dict):
            if len(obj) > self.MAX_CONTAINER:
                return
            for k, v in list(obj.items()):
                key = repr(k) if isinstance(k, (str, int)) else "…"
                self._visit(v, f"{path}[{key}]", acc + [("key", k)], depth + 1)
            return
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict) and not callable(obj):
            for name, v in list(d.items()):
                self._visit(v, f"{path}.{name}", acc + [("attr", name)], depth + 1)

    def _tensor_in(self, t, path, acc):
        """A tensor element of a list/tuple/set: its container is the holder."""
        if id(t) in self.seen_objects:
            return
        self.seen_objects.add(id(t))
        gf = t.grad_fn
        if gf is not None:
            self._hold(path, acc, gf, t)

    @staticmethod
    def reach(roots, limit=2000000):
        """Every node reachable from roots, by identity. The node objects are
        kept in the result while counting: Python creates a fresh wrapper for
        a node on each access to next_functions, and a freed wrapper's id is
        reused at once, so counting ids alone would undercount."""
        seen = {}
        stack = list(roots)
        while stack and len(seen) < limit:
            n = stack.pop()
            if n is None:
                continue
            k = id(n)
            if k in seen:
                continue
            seen[k] = n
            try:
                nexts = n.next_functions
            except Exception:
                continue
            for nxt, _ in nexts:
                if nxt is not None:
                    stack.append(nxt)
        return seen


def frames_roots(frame, stop_files):
    """(name, object) roots: the locals of frame and its callers up to the
    harness, then each frame's module globals (once)."""
    roots = []
    seen_globals = set()
    f = frame
    while f is not None:
        if os.path.abspath(f.f_code.co_filename) in stop_files:
            break
        for name, v in list(f.f_locals.items()):
            roots.append((name, v))
        g = f.f_globals
        if id(g) not in seen_globals:
            seen_globals.add(id(g))
            for name, v in list(g.items()):
                if not name.startswith("__"):
                    roots.append((name, v))
        f = f.f_back
    return roots


# ---- one run -----------------------------------------------------------------------

class Run:
    """What a scenario function receives: device, sizes, the iteration loop
    that measures, and the checksum it reports."""

    _probe_internal = True

    def __init__(self, spec, variant, device, iterations, out, params):
        import torch
        self.torch = torch
        self.spec = spec
        self.variant = variant
        self.bad = variant == "bad"
        self.device = device
        self.cuda = device == "cuda"
        self.iterations = iterations
        self.params = params
        self.out = out
        self.meter = Meter()
        self._checksum = None
        self._metrics = {}

    # -- for scenarios
    def track(self, *modules):
        for m in modules:
            self.meter.track(m.parameters() if hasattr(m, "parameters") else m)

    def checksum(self, value):
        """This iteration's result; bad and fixed must report the same."""
        torch = self.torch
        if isinstance(value, torch.Tensor):
            # summed in the tensor's own precision where that is float32 or
            # float64: a float64 copy (which sum(dtype=) makes in torch 1.13)
            # would be the largest tensor of some scenarios and hide their peak
            value = value.detach()
            if value.dtype not in (torch.float32, torch.float64):
                value = value.float()
            value = value.sum().item()
        self._checksum = float(value)

    def metric(self, name, value):
        self._metrics[name] = float(value)

    def steps(self):
        torch = self.torch
        for i in range(self.iterations):
            self._checksum = None
            self._metrics = {}
            if self.cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            reset_rss_peak()
            self.meter.begin_step()
            t0 = time.perf_counter()
            yield i
            if self.cuda:
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - t0
            self._record(i, elapsed, sys._getframe(1))

    # -- measuring
    def _record(self, i, elapsed, frame):
        torch = self.torch
        self.meter.sample(refresh_grads=True)
        walk = GraphWalk(torch)
        for name, obj in frames_roots(frame, {os.path.abspath(__file__)}):
            walk.add_root(name, obj)
        roots = [gf for gfs in walk.holders.values() for gf in gfs]
        nodes = GraphWalk.reach(roots)
        rec = {
            "t": "iter", "i": i, "time_s": elapsed, "checksum": self._checksum,
            "saved_bytes": self.meter.alive, "held_peak_bytes": self.meter.peak,
            "graph_nodes": len(nodes), "rss_bytes": rss_bytes(), "rss_peak_bytes": rss_peak_bytes(),
        }
        if self.cuda:
            rec["cuda_allocated"] = torch.cuda.memory_allocated()
            rec["cuda_peak"] = torch.cuda.max_memory_allocated()
            rec["cuda_reserved"] = torch.cuda.memory_reserved()
        if self._metrics:
            rec["metrics"] = dict(self._metrics)
        if i == self.iterations - 1:
            rec["holders"] = [{"name": p, "nodes": n} for p, n in owners(walk)[:3]]
        del nodes, roots, walk
        emit(self.out, rec)


def owners(walk):
    """(holder, nodes it alone keeps), most first. Holders share graphs (`loss`
    reaches all that `out` reaches, and a carried `hidden` too), so each node
    goes to the holder reaching the fewest nodes among those reaching it: the
    most specific one."""
    reach = {path: GraphWalk.reach(gfs) for path, gfs in walk.holders.items()}
    claimed = set()
    own = []
    for path in sorted(reach, key=lambda p: (len(reach[p]), p)):
        fresh = [k for k in reach[path] if k not in claimed]
        claimed.update(fresh)
        own.append((path, len(fresh)))
    return sorted(own, key=lambda x: (-x[1], x[0]))


def emit(out, rec):
    out.write(json.dumps(rec, separators=(",", ":")) + "\n")
    out.flush()


def open_out(fd):
    return os.fdopen(fd, "w", buffering=1)


def torch_setup(device):
    """Deterministic, single-threaded arithmetic: bad and fixed must compute
    the same numbers, and scenarios run side by side on the CPU."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except TypeError:  # torch < 1.11 has no warn_only
        pass
    if device == "cuda":
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    return torch


def parse_params(pairs):
    params = {}
    for pair in pairs:
        k, _, v = pair.partition("=")
        try:
            params[k] = int(v)
        except ValueError:
            try:
                params[k] = float(v)
            except ValueError:
                params[k] = v
    return params


PACKAGE = "_oomlint_probe"


def private_package():
    """This folder as the package _oomlint_probe (as wrapper.py makes it),
    so the scenarios import as _oomlint_probe.scenarios and no module of
    the probe takes a bare name a user's code might use."""
    if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == os.path.realpath(HERE):
        del sys.path[0]
    if PACKAGE not in sys.modules:
        spec = importlib.machinery.ModuleSpec(PACKAGE, None, is_package=True)
        spec.submodule_search_locations = [HERE]
        sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)
    return importlib.import_module(PACKAGE + ".scenarios")


def main(argv):
    if len(argv) >= 1 and argv[0] == "list":
        fd = int(argv[2]) if len(argv) >= 3 and argv[1] == "--fd" else 1
        out = open_out(fd)
        scenarios = private_package()
        for s in scenarios.all_scenarios():
            emit(out, dict(t="scenario", **s.describe()))
        return 0
    if len(argv) < 3 or argv[0] != "run":
        sys.stderr.write("usage: harness.py list | run RULE/NAME bad|fixed --device D --iterations N "
                         "--fd FD [--param k=v]\n")
        return 2
    ident, variant = argv[1], argv[2]
    opts = {"--device": "cpu", "--iterations": "20", "--fd": "1"}
    params = []
    rest = argv[3:]
    while rest:
        flag = rest.pop(0)
        if flag == "--param" and rest:
            params.append(rest.pop(0))
        elif flag in opts and rest:
            opts[flag] = rest.pop(0)
        else:
            sys.stderr.write(f"harness.py: bad argument {flag!r}\n")
            return 2
    device = opts["--device"]
    out = open_out(int(opts["--fd"]))
    torch = torch_setup(device)
    scenarios = private_package()
    spec = scenarios.find(ident)
    if spec is None or variant not in ("bad", "fixed"):
        sys.stderr.write(f"harness.py: no scenario {ident!r} variant {variant!r}\n")
        return 2
    sizes = spec.sizes(device)
    sizes.update(parse_params(params))
    run = Run(spec, variant, device, int(opts["--iterations"]), out, sizes)
    start = {
        "t": "start", "rule": spec.rule, "scenario": spec.name, "variant": variant, "device": device,
        "torch": torch.__version__, "python": sys.version.split()[0], "params": sizes,
        "scale_bytes": int(spec.scale(sizes)), "claims": list(spec.claims), "gpu_only": spec.gpu_only,
        "rtol": spec.rtol, "rss_peak_resets": reset_rss_peak(),
    }
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        start["gpu"] = props.name
        start["gpu_memory_bytes"] = int(props.total_memory)
        # for NVML to find the same device (attributes of torch 2.x; absent in 1.13)
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            start["gpu_uuid"] = str(uuid)
        pci = [getattr(props, a, None) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
        if all(isinstance(x, int) for x in pci):
            start["gpu_pci_bus_id"] = "%08X:%02X:%02X.0" % tuple(pci)
    emit(out, start)
    run.meter.install()
    try:
        spec.fn(run, run.bad)
    finally:
        run.meter.uninstall()
    emit(out, {"t": "end", "iterations": run.iterations})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(1)
