"""The probe's scenarios: for each rule with a memory or time cost, a `bad`
and a `fixed` variant of the same small training or evaluation step.

A scenario is a function `fn(run, bad)` registered with @scenario. It builds
its model and data from fixed seeds, loops over `run.steps()` (which measures
each iteration) and reports `run.checksum(...)` every iteration: the runner
checks that both variants computed the same numbers. `bad` is True for the
variant that has the pattern the rule flags; everything else is shared, so
the two variants differ only by the rule's fix.

Every module in this folder except `common` is loaded and registers its
scenarios; a module that fails to import is reported by `list` and its
scenarios are missing, the others still load.

Fields of a scenario:
  claims    what the rule says the pattern costs, which the verdict checks:
            "growth" (memory or retained graph grows per step), "peak"
            (the step's peak memory), "time" (time per step), "underflow"
            (gradients lost to float16 underflow).
  sizes     tensor sizes for the CPU; cuda_sizes overrides them on a GPU,
            where the allocator's granularity needs larger tensors.
  scale     bytes the pattern is about (for example one batch's activations),
            computed from the sizes: the runner's noise thresholds are
            fractions of it.
  gpu_only  the cost exists only on a GPU: on the CPU the variants still run,
            to check they agree, but no figure is reported.
  rtol      relative tolerance when comparing the checksums of bad and fixed
            (mixed precision changes the last digits).
"""
import importlib
import os
import sys
import traceback

_REGISTRY = {}
_LOAD_ERRORS = []


class Scenario:
    def __init__(self, rule, name, fn, claims, summary, sizes, cuda_sizes, scale, gpu_only, rtol, note):
        self.rule = rule
        self.name = name
        self.fn = fn
        self.claims = tuple(claims)
        self.summary = summary
        self._sizes = dict(sizes)
        self._cuda_sizes = dict(cuda_sizes or {})
        self.scale = scale
        self.gpu_only = gpu_only
        self.rtol = rtol
        self.note = note

    @property
    def ident(self):
        return f"{self.rule}/{self.name}"

    def sizes(self, device):
        s = dict(self._sizes)
        if device == "cuda":
            s.update(self._cuda_sizes)
        return s

    def describe(self):
        return {"rule": self.rule, "scenario": self.name, "claims": list(self.claims),
                "gpu_only": self.gpu_only, "summary": self.summary, "note": self.note}


def scenario(rule, name, *, claims, summary, sizes, scale, cuda_sizes=None, gpu_only=False, rtol=1e-6,
             note=None):
    def register(fn):
        s = Scenario(rule, name, fn, claims, summary, sizes, cuda_sizes, scale, gpu_only, rtol, note)
        _REGISTRY[s.ident] = s
        return fn
    return register


def _load():
    if _REGISTRY or _LOAD_ERRORS:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for fname in sorted(os.listdir(here)):
        if not fname.endswith(".py") or fname.startswith("_") or fname == "common.py":
            continue
        mod = fname[:-3]
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except Exception:
            _LOAD_ERRORS.append((fname, traceback.format_exc()))
            sys.stderr.write(f"probe: scenario module {fname} failed to load:\n{traceback.format_exc()}")


def all_scenarios():
    _load()
    return sorted(_REGISTRY.values(), key=lambda s: (s.rule, s.name))


def find(ident):
    _load()
    return _REGISTRY.get(ident)
