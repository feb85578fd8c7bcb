#!/usr/bin/env python3
"""binfmt.py - what an oomlint binary is, read from its headers alone (a
cross-built one cannot be run here): the format, the CPU, whether it is an
executable, the shared libraries it loads and, for macOS, the oldest version
it runs on. release.py names wheels and tarballs from this (target_of).

    python3 build-aux/binfmt.py FILE TARGET

checks that FILE is what TARGET asks for (x86_64-macos, aarch64-macos,
x86_64-linux-gnu, aarch64-linux-gnu, x86_64-linux-musl, ...), loading only
the system's own libraries (macOS: libSystem and libiconv; glibc: the C
library's parts; musl: none at all, fully static). Prints one line describing
it; exits 1 on any mismatch.
"""
import struct
import sys

MACHO_CPU = {"x86_64": 0x01000007, "aarch64": 0x0100000C}
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}
MACHO_ARCH = {v: k for k, v in MACHO_CPU.items()}
ELF_ARCH = {v: k for k, v in ELF_MACHINE.items()}
MACOS_LIBS = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib"}
GLIBC_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2"}


def read_macho(data):
    magic, cpu, _sub, filetype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != 0xFEEDFACF:
        raise ValueError("not a 64-bit little-endian Mach-O file")
    info = {"os": "macos", "arch": MACHO_ARCH.get(cpu, f"cpu{cpu:#x}"), "executable": filetype == 2,
            "libs": [], "static": False, "interp": None, "macos_min": None}
    off = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd in (0xC, 0x80000018, 0x8000001F):  # LC_LOAD_DYLIB, _WEAK_, LC_REEXPORT_DYLIB
            name_off = struct.unpack_from("<I", data, off + 8)[0]
            info["libs"].append(data[off + name_off:off + size].split(b"\0", 1)[0].decode())
        elif cmd == 0x32:  # LC_BUILD_VERSION: platform, minos (xxxx.yy.zz)
            minos = struct.unpack_from("<I", data, off + 12)[0]
            info["macos_min"] = (minos >> 16, (minos >> 8) & 0xFF)
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX
            v = struct.unpack_from("<I", data, off + 8)[0]
            info["macos_min"] = (v >> 16, (v >> 8) & 0xFF)
        off += size
    return info


def read_elf(data):
    if data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    e_type, machine = struct.unpack_from("<HH", data, 16)
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    interp, dynamic, loads = None, None, []
    for i in range(phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 3:
            interp = data[p_offset:p_offset + p_filesz].split(b"\0", 1)[0].decode()
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
        elif p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
    libs = []
    if dynamic:
        entries, strtab = [], None
        for i in range(dynamic[1] // 16):
            tag, val = struct.unpack_from("<qQ", data, dynamic[0] + i * 16)
            if tag == 0:
                break
            if tag == 5:
                strtab = val
            entries.append((tag, val))
        base = None
        if strtab is not None:
            base = next((off + strtab - va for va, off, sz in loads if va <= strtab < va + sz), None)
        for tag, val in entries:
            if tag == 1 and base is not None:  # DT_NEEDED
                libs.append(data[base + val:].split(b"\0", 1)[0].decode())
    libc = "musl" if interp and "musl" in interp else "gnu" if interp else None
    return {"os": "linux", "arch": ELF_ARCH.get(machine, f"machine{machine}"), "executable": e_type in (2, 3),
            "libs": libs, "static": interp is None and not libs, "interp": interp, "libc": libc,
            "macos_min": None}


def read(path):
    """The binary's facts as a dict: os (linux, macos), arch (x86_64,
    aarch64), executable, libs, static, interp, macos_min."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x7fELF":
        info = read_elf(data)
    elif data[:4] == b"\xcf\xfa\xed\xfe":
        info = read_macho(data)
    else:
        raise ValueError("neither an ELF nor a 64-bit Mach-O file")
    info["size"] = len(data)
    return info


def target_of(path):
    """The release name of the platform a binary is for: ARCH-macos,
    ARCH-linux (glibc) or ARCH-linux-musl (static)."""
    info = read(path)
    if info["os"] == "macos":
        return f"{info['arch']}-macos"
    return f"{info['arch']}-linux" + ("-musl" if info["static"] or info.get("libc") == "musl" else "")


def check(path, target):
    """Raises ValueError unless the binary at path is what target asks for;
    returns a one-line description."""
    info = read(path)
    arch = target.split("-", 1)[0]
    want_os = "macos" if target.endswith("-macos") else "linux"
    if info["os"] != want_os or info["arch"] != arch:
        raise ValueError(f"a {info['os']} {info['arch']} binary, expected {want_os} {arch}")
    if not info["executable"]:
        raise ValueError("not an executable")
    if want_os == "macos":
        bad = [lib for lib in info["libs"] if lib not in MACOS_LIBS]
        if bad:
            raise ValueError("loads libraries a Mac may lack: " + ", ".join(bad))
        kind = f"Mach-O {arch} executable, macOS {'.'.join(map(str, info['macos_min'] or ('?',)))}+"
    elif target.endswith("-musl"):
        if not info["static"]:
            raise ValueError(f"expected a fully static binary, it loads {info['interp']} {' '.join(info['libs'])}")
        kind = f"ELF {arch} executable, static"
    else:
        bad = [lib for lib in info["libs"] if lib not in GLIBC_LIBS]
        if bad:
            raise ValueError("loads libraries beyond the C library: " + ", ".join(bad))
        kind = f"ELF {arch} executable, interpreter {info['interp']}"
    libs = info["libs"]
    return f"{path}: {kind}, {info['size'] / 1e6:.1f} MB" + (", loads " + " ".join(libs) if libs else "")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        print("  " + check(sys.argv[1], sys.argv[2]))
    except (OSError, ValueError, struct.error, IndexError, UnicodeDecodeError) as e:
        print(f"binfmt: {sys.argv[1]}: {e or type(e).__name__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
