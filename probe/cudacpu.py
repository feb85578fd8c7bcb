"""Runs a script written for CUDA on the CPU, for `oomlint probe --script
--device cpu` (and `auto` where torch sees no GPU). wrapper.py installs it
before the script runs; nothing here measures.

What is mapped, and how (each use is counted and listed at the top of the
report):
  - Tensor.cuda() and Module.cuda() return the object itself; Tensor.to,
    Module.to, Tensor.new_*, the factory functions (torch.zeros(...,
    device="cuda"), torch.tensor, nn layers' device= keywords, which call the
    factories) and torch.load(map_location=...) get "cpu" for any CUDA device,
    given as a string, an index or a torch.device; non_blocking is accepted.
    torch.device("cuda") itself is left alone (it needs no GPU), so a script's
    `device.type == "cuda"` branches still take the GPU path.
  - torch.accelerator (torch 2.6+; a module of the same functions where
    torch has none) answers CUDA: current_accelerator() is
    torch.device("cuda"), is_available() True, and the rest as torch.cuda;
  - torch.cuda.is_available() is True, device_count() 1; synchronize,
    empty_cache, set_device, manual_seed and streams and events do nothing
    (events time with the host clock);
  - memory_allocated, max_memory_allocated, memory_reserved and friends answer
    from the CPU: the bytes of the live tensors' storages (the census in
    wrapper.py), the highest of those seen, glibc's heap in use;
  - autocast for CUDA (torch.cuda.amp.autocast, torch.autocast("cuda"),
    torch.amp.autocast) is off: the CPU computes in float32, and what mixed
    precision saves on a GPU is left to a GPU run. GradScaler is built
    disabled (it scales nothing on the CPU, and steps the optimizer as is);
  - pin_memory() returns the tensor, DataLoader(pin_memory=True) does not pin.
Out of scope, with a message that says so: distributed launches
(init_process_group, DistributedDataParallel, torchrun's WORLD_SIZE > 1,
NCCL) and custom CUDA extensions (cpp_extension with CUDA sources).
Works on torch 1.13 and 2.x: everything patched is looked up and skipped
where a version lacks it."""
import functools
import os
import sys
import time
import types


class OutOfScope(BaseException):
    """What the CPU cannot run in place of a GPU; wrapper.py reports it. Not
    an Exception, so a script's `except Exception:` does not swallow it."""


FACTORIES = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
             "arange", "range", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
             "full_like", "rand_like", "randn_like", "randint_like", "empty_strided", "normal", "tril_indices",
             "triu_indices", "scalar_tensor", "sparse_coo_tensor", "bernoulli", "multinomial", "asarray")
NEW_METHODS = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor")


class CudaOnCpu:
    def __init__(self, torch, memory_of=None):
        self.torch = torch
        self.counts = {}
        # callables from wrapper.py: () -> (live tensor bytes, heap in use)
        self.memory_of = memory_of
        self.peak_allocated = 0
        self.peak_reserved = 0

    # ---- what the report lists
    def note(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def is_cuda(self, dev):
        torch = self.torch
        if isinstance(dev, str):
            return dev.strip().startswith("cuda")
        if isinstance(dev, torch.device):
            return dev.type == "cuda"
        return False

    def map_device(self, dev, what):
        if self.is_cuda(dev):
            self.note(what)
            return "cpu"
        return dev

    def map_args(self, args, what):
        """Positional arguments of .to(): a device, or an index (.to(0))."""
        out = list(args)
        if out and isinstance(out[0], int) and not isinstance(out[0], bool):
            self.note(what)
            out[0] = "cpu"
        return [self.map_device(a, what) for a in out]

    def map_kwargs(self, kwargs, what):
        d = kwargs.get("device")
        if d is not None:
            if isinstance(d, int) and not isinstance(d, bool):
                self.note(what)
                kwargs["device"] = "cpu"
            else:
                kwargs["device"] = self.map_device(d, what)
        if kwargs.get("pin_memory"):
            self.note("pin_memory")
            kwargs["pin_memory"] = False
        return kwargs

    # ---- installing
    def install(self):
        self.check_launch()
        torch = self.torch
        self.patch_tensor()
        self.patch_module()
        self.patch_factories()
        self.patch_cuda()
        self.patch_accelerator()
        self.patch_amp()
        self.patch_data()
        self.patch_out_of_scope()

    def check_launch(self):
        try:
            world = int(os.environ.get("WORLD_SIZE", "1"))
        except ValueError:
            world = 1
        if world > 1:
            raise OutOfScope(f"a distributed launch (WORLD_SIZE={world}) is out of scope on the CPU: run one "
                             "process of the script without torchrun, or probe it on a GPU with --device cuda")

    def patch_tensor(self):
        torch = self.torch
        T = torch.Tensor
        shim = self

        def cuda(t, device=None, non_blocking=False, **kwargs):
            shim.note(".cuda()")
            return t

        T.cuda = cuda
        orig_to = T.to

        @functools.wraps(orig_to)
        def to(t, *args, **kwargs):
            args = shim.map_args(args, '.to("cuda")')
            shim.map_kwargs(kwargs, '.to("cuda")')
            return orig_to(t, *args, **kwargs)

        T.to = to

        def pin_memory(t, device=None):
            shim.note("pin_memory")
            return t

        T.pin_memory = pin_memory
        for name in NEW_METHODS:
            orig = getattr(T, name, None)
            if orig is not None:
                setattr(T, name, self.wrap_kwargs(orig, 'device="cuda"'))

    def wrap_kwargs(self, fn, what):
        shim = self

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if kwargs:
                shim.map_kwargs(kwargs, what)
            return fn(*args, **kwargs)

        return call

    def patch_module(self):
        torch = self.torch
        M = torch.nn.Module
        shim = self

        def cuda(m, device=None):
            shim.note("model.cuda()")
            return m

        M.cuda = cuda
        orig_to = M.to

        @functools.wraps(orig_to)
        def to(m, *args, **kwargs):
            args = shim.map_args(args, 'model.to("cuda")')
            shim.map_kwargs(kwargs, 'model.to("cuda")')
            return orig_to(m, *args, **kwargs)

        M.to = to

    def patch_factories(self):
        torch = self.torch
        for name in FACTORIES:
            fn = getattr(torch, name, None)
            if callable(fn):
                setattr(torch, name, self.wrap_kwargs(fn, 'device="cuda"'))
        orig_load = torch.load
        shim = self

        @functools.wraps(orig_load)
        def load(f, map_location=None, *args, **kwargs):
            if map_location is None:
                map_location = "cpu"  # a checkpoint saved from a GPU loads onto the CPU
            elif isinstance(map_location, dict):
                map_location = {k: shim.map_device(v, "torch.load to CUDA") for k, v in map_location.items()}
            elif not callable(map_location):
                map_location = shim.map_device(map_location, "torch.load to CUDA")
            return orig_load(f, map_location, *args, **kwargs)

        torch.load = load
        sdt = getattr(torch, "set_default_tensor_type", None)
        if sdt is not None:
            @functools.wraps(sdt)
            def set_default_tensor_type(t):
                name = t if isinstance(t, str) else getattr(t, "__module__", "") + "." + getattr(t, "__name__", "")
                if "cuda" in name:
                    shim.note("set_default_tensor_type(cuda)")
                    t = "torch." + name.rsplit(".", 1)[-1]
                return sdt(t)

            torch.set_default_tensor_type = set_default_tensor_type
        sdd = getattr(torch, "set_default_device", None)  # torch 2.x
        if sdd is not None:
            @functools.wraps(sdd)
            def set_default_device(d):
                return sdd(shim.map_device(d, "set_default_device(cuda)"))

            torch.set_default_device = set_default_device

    def patch_cuda(self):
        torch = self.torch
        cuda = torch.cuda
        shim = self

        def answer(value):
            def fn(*args, **kwargs):
                return value
            return fn

        def counted(what, value=None):
            def fn(*args, **kwargs):
                shim.note(what)
                return value
            return fn

        cuda.is_available = counted("torch.cuda.is_available() True", True)
        cuda.is_initialized = answer(True)
        cuda.device_count = answer(1)
        cuda.current_device = answer(0)
        cuda.is_bf16_supported = answer(True)
        cuda.get_device_name = answer("CPU (CUDA mapped by oomlint probe)")
        cuda.get_device_capability = answer((8, 0))
        cuda.init = answer(None)
        cuda.set_device = answer(None)
        cuda.synchronize = counted("torch.cuda.synchronize")
        cuda.empty_cache = counted("torch.cuda.empty_cache")
        cuda.ipc_collect = answer(None)
        for name in ("manual_seed", "manual_seed_all", "seed", "seed_all"):
            setattr(cuda, name, answer(None))

        class Props:
            name = "CPU (CUDA mapped by oomlint probe)"
            major, minor = 8, 0
            multi_processor_count = os.cpu_count() or 1
            total_memory = shim.total_memory()

        cuda.get_device_properties = answer(Props())

        class device:  # torch.cuda.device(0) as a context
            def __init__(self, *args, **kwargs):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        cuda.device = device

        class Event:
            def __init__(self, *args, **kwargs):
                self.t = None

            def record(self, *args, **kwargs):
                self.t = time.perf_counter()

            def synchronize(self):
                pass

            def query(self):
                return True

            def wait(self, *args, **kwargs):
                pass

            def elapsed_time(self, end):
                return (end.t - self.t) * 1000.0

        class Stream(device):
            def synchronize(self):
                pass

            def wait_stream(self, other):
                pass

            def wait_event(self, event):
                pass

            def record_event(self, event=None):
                event = event or Event()
                event.record()
                return event

            def query(self):
                return True

        cuda.Event = Event
        cuda.Stream = Stream
        cuda.stream = lambda s=None: device()
        cuda.current_stream = lambda device=None: Stream()
        cuda.default_stream = lambda device=None: Stream()

        def allocated(device=None):
            return shim.allocated()

        def max_allocated(device=None):
            return max(shim.peak_allocated, shim.allocated())

        def reserved(device=None):
            return shim.reserved()

        def max_reserved(device=None):
            return max(shim.peak_reserved, shim.reserved())

        def reset_peak(device=None):
            shim.peak_allocated = shim.allocated()
            shim.peak_reserved = shim.reserved()

        def stats(device=None):
            a, r = shim.allocated(), shim.reserved()
            return {"allocated_bytes.all.current": a, "allocated_bytes.all.peak": max(shim.peak_allocated, a),
                    "reserved_bytes.all.current": r, "reserved_bytes.all.peak": max(shim.peak_reserved, r)}

        def summary(device=None, abbreviated=False):
            a, r = shim.allocated(), shim.reserved()
            return (f"oomlint probe (CUDA mapped to the CPU): tensors alive {a} bytes, "
                    f"host heap in use {r} bytes; the CUDA allocator's own figures need a GPU")

        def mem_get_info(device=None):
            total = shim.total_memory()
            return (max(total - shim.reserved(), 0), total)

        for name, fn in (("memory_allocated", allocated), ("max_memory_allocated", max_allocated),
                         ("memory_reserved", reserved), ("max_memory_reserved", max_reserved),
                         ("memory_cached", reserved), ("max_memory_cached", max_reserved),
                         ("reset_peak_memory_stats", reset_peak), ("reset_max_memory_allocated", reset_peak),
                         ("reset_max_memory_cached", reset_peak), ("reset_accumulated_memory_stats", reset_peak),
                         ("memory_stats", stats), ("memory_summary", summary), ("mem_get_info", mem_get_info)):
            setattr(cuda, name, fn)
            if hasattr(cuda, "memory") and hasattr(cuda.memory, name):
                setattr(cuda.memory, name, fn)

    def patch_accelerator(self):
        """torch.accelerator, the device-generic API current pytorch/examples
        pick their device with (torch 2.6+; its memory functions 2.8+): the
        accelerator is CUDA, answered by the mapped torch.cuda. A torch
        without it (1.13) gets a module of the same functions under the same
        name, so such a script runs on either."""
        torch = self.torch
        cuda = torch.cuda
        shim = self
        acc = getattr(torch, "accelerator", None)
        if not isinstance(acc, types.ModuleType):
            acc = types.ModuleType("torch.accelerator", "torch.accelerator as oomlint probe maps it: CUDA on the CPU")
            torch.accelerator = acc
            sys.modules["torch.accelerator"] = acc
        memory = getattr(acc, "memory", None)
        if not isinstance(memory, types.ModuleType):
            memory = types.ModuleType("torch.accelerator.memory")
            acc.memory = memory
            sys.modules["torch.accelerator.memory"] = memory

        def current_accelerator(check_available=False):
            shim.note("torch.accelerator.current_accelerator() cuda")
            return torch.device("cuda")

        def is_available():
            shim.note("torch.accelerator.is_available() True")
            return True

        def synchronize(device=None):
            shim.note("torch.accelerator.synchronize")

        def set_device_index(device):
            pass

        class device_index:  # torch.accelerator.device_index(0) as a context
            def __init__(self, device, *args, **kwargs):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        for name, fn in (("current_accelerator", current_accelerator), ("is_available", is_available),
                         ("device_count", lambda: 1), ("current_device_index", lambda: 0),
                         ("current_device_idx", lambda: 0), ("set_device_index", set_device_index),
                         ("set_device_idx", set_device_index), ("current_stream", lambda device=None: cuda.Stream()),
                         ("set_stream", lambda stream: None), ("synchronize", synchronize),
                         ("device_index", device_index)):
            setattr(acc, name, fn)
        for name, fn in (("memory_allocated", cuda.memory_allocated),
                         ("max_memory_allocated", cuda.max_memory_allocated),
                         ("memory_reserved", cuda.memory_reserved), ("max_memory_reserved", cuda.max_memory_reserved),
                         ("memory_stats", cuda.memory_stats), ("reset_peak_memory_stats", cuda.reset_peak_memory_stats),
                         ("reset_accumulated_memory_stats", cuda.reset_accumulated_memory_stats),
                         ("empty_cache", cuda.empty_cache), ("get_memory_info", cuda.mem_get_info)):
            setattr(memory, name, fn)
            setattr(acc, name, fn)

    def total_memory(self):
        try:
            return int(os.environ.get("OOMLINT_PROBE_MEMORY", "0")) or 0
        except ValueError:
            return 0

    def allocated(self):
        if self.memory_of is None:
            return 0
        a = self.memory_of()[0]
        self.peak_allocated = max(self.peak_allocated, a)
        return a

    def reserved(self):
        if self.memory_of is None:
            return 0
        r = self.memory_of()[1] or 0
        self.peak_reserved = max(self.peak_reserved, r)
        return r

    def patch_amp(self):
        torch = self.torch
        shim = self

        class autocast:
            """CUDA autocast, off on the CPU: a context and a decorator that
            change nothing. CPU autocast (device_type="cpu") passes through."""

            def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None, **kw):
                self.inner = None
                if device_type != "cuda":
                    kwargs = {"enabled": enabled}
                    if dtype is not None:
                        kwargs["dtype"] = dtype
                    self.inner = orig_autocast(device_type, **kwargs)
                elif enabled:
                    shim.note("autocast(cuda) off")

            def __enter__(self):
                if self.inner is not None:
                    return self.inner.__enter__()
                return self

            def __exit__(self, *exc):
                if self.inner is not None:
                    return self.inner.__exit__(*exc)
                return False

            def __call__(self, fn):
                @functools.wraps(fn)
                def run(*args, **kwargs):
                    with self:
                        return fn(*args, **kwargs)
                return run

        class cuda_autocast(autocast):
            def __init__(self, enabled=True, dtype=None, cache_enabled=None, **kw):
                super().__init__("cuda", dtype=dtype, enabled=enabled)

        orig_autocast = torch.autocast
        torch.autocast = autocast
        amp = getattr(torch, "amp", None)
        if amp is not None and hasattr(amp, "autocast"):
            amp.autocast = autocast
        cuda_amp = torch.cuda.amp
        cuda_amp.autocast = cuda_autocast
        for mod in (getattr(cuda_amp, "autocast_mode", None),):
            if mod is not None and hasattr(mod, "autocast"):
                mod.autocast = cuda_autocast

        for owner in (cuda_amp, amp):
            base = getattr(owner, "GradScaler", None) if owner is not None else None
            if base is None:
                continue
            setattr(owner, "GradScaler", self.disabled_scaler(base))

    def disabled_scaler(self, base):
        shim = self

        class GradScaler(base):
            __doc__ = base.__doc__

            def __init__(self, *args, **kwargs):
                # keep the device argument (torch.amp's first) and drop the rest:
                # disabled, the scaler neither scales nor skips steps
                device = kwargs.pop("device", None)
                if args and isinstance(args[0], str):
                    device = args[0]
                if kwargs.get("enabled", True) and not (len(args) >= 5 and args[4] is False):
                    shim.note("GradScaler disabled")
                kw = {"enabled": False}
                if device is not None:
                    kw["device"] = device
                super().__init__(**kw)

        GradScaler.__name__ = base.__name__
        GradScaler.__qualname__ = base.__qualname__
        return GradScaler

    def patch_data(self):
        torch = self.torch
        data = getattr(getattr(torch, "utils", None), "data", None)
        loader = getattr(data, "DataLoader", None)
        if loader is None:
            return
        orig_init = loader.__init__
        shim = self

        @functools.wraps(orig_init)
        def init(dl, *args, **kwargs):
            if kwargs.get("pin_memory"):
                shim.note("pin_memory")
                kwargs["pin_memory"] = False
            return orig_init(dl, *args, **kwargs)

        loader.__init__ = init

    def patch_out_of_scope(self):
        torch = self.torch
        dist = getattr(torch, "distributed", None)

        def refuse(what, hint):
            def fn(*args, **kwargs):
                raise OutOfScope(f"{what} is out of scope on the CPU: {hint}")
            return fn

        hint = "probe one process of the script without it, or run the probe on a GPU with --device cuda"
        if dist is not None and hasattr(dist, "init_process_group"):
            dist.init_process_group = refuse("a distributed launch (torch.distributed.init_process_group)", hint)
        par = getattr(torch.nn, "parallel", None)
        if par is not None and hasattr(par, "DistributedDataParallel"):
            ddp = refuse("DistributedDataParallel", hint)
            par.DistributedDataParallel = ddp
            if hasattr(torch.nn, "DistributedDataParallel"):
                torch.nn.DistributedDataParallel = ddp
        nccl = getattr(torch.cuda, "nccl", None)
        if nccl is not None:
            for name in ("all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"):
                if hasattr(nccl, name):
                    setattr(nccl, name, refuse("NCCL", hint))

        class DataParallel(torch.nn.Module):
            """One device: the wrapped module, run as is."""

            def __init__(self, module, device_ids=None, output_device=None, dim=0):
                super().__init__()
                self.module = module

            def forward(self, *args, **kwargs):
                return self.module(*args, **kwargs)

        torch.nn.DataParallel = DataParallel
        if par is not None:
            par.DataParallel = DataParallel
        try:
            from torch.utils import cpp_extension
        except Exception:
            return
        for name in ("load", "load_inline"):
            orig = getattr(cpp_extension, name, None)
            if orig is None:
                continue
            setattr(cpp_extension, name, self.guard_extension(orig, name))
        for name in ("CUDAExtension",):
            if hasattr(cpp_extension, name):
                setattr(cpp_extension, name, refuse("a custom CUDA extension (CUDAExtension)", hint))

    def guard_extension(self, orig, name):
        @functools.wraps(orig)
        def load(*args, **kwargs):
            sources = kwargs.get("sources") or (args[1] if len(args) > 1 else [])
            if isinstance(sources, str):
                sources = [sources]
            cuda_sources = kwargs.get("cuda_sources")
            if kwargs.get("with_cuda") or cuda_sources or any(str(s).endswith((".cu", ".cuh")) for s in sources):
                raise OutOfScope(f"a custom CUDA extension (cpp_extension.{name} with CUDA sources) is out of "
                                 "scope on the CPU: run the probe on a GPU with --device cuda")
            return orig(*args, **kwargs)

        return load


def summary(counts):
    """The mapped uses, most frequent first, for the report."""
    return [{"what": k, "count": v} for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
