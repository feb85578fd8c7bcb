#!/usr/bin/env python3
"""check-binary.py FILE TARGET - checks that a cross-built binary is what TARGET
asks for, from its headers alone (it cannot be run here): the format and CPU,
that it is an executable, and which shared libraries it loads, which must be
the system's own (macOS: libSystem and libiconv; glibc: the C library's parts;
musl: none at all, fully static). Prints one line describing it; exits 1 on
any mismatch.

    python3 build-aux/check-binary.py build/cross/aarch64-macos/oomlint aarch64-macos
"""
import struct
import sys

MACHO_CPU = {"x86_64": 0x01000007, "aarch64": 0x0100000C}
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}
MACOS_LIBS = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib"}
GLIBC_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2"}


def macho(data, arch):
    magic, cpu, _sub, filetype, ncmds, _size, _flags, _res = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != 0xFEEDFACF:
        raise ValueError("not a 64-bit little-endian Mach-O file")
    if cpu != MACHO_CPU[arch]:
        raise ValueError(f"Mach-O CPU type {cpu:#x}, expected {MACHO_CPU[arch]:#x} ({arch})")
    if filetype != 2:
        raise ValueError(f"Mach-O file type {filetype}, expected an executable (2)")
    libs, off = [], 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd in (0xC, 0x80000018, 0x8000001F):  # LC_LOAD_DYLIB, _WEAK_, LC_REEXPORT_DYLIB
            name_off = struct.unpack_from("<I", data, off + 8)[0]
            name = data[off + name_off:off + size].split(b"\0", 1)[0].decode()
            libs.append(name)
        off += size
    bad = [lib for lib in libs if lib not in MACOS_LIBS]
    if bad:
        raise ValueError("loads libraries a Mac may lack: " + ", ".join(bad))
    return f"Mach-O {arch} executable", libs


def elf(data, arch, static):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    e_type, machine = struct.unpack_from("<HH", data, 16)
    if machine != ELF_MACHINE[arch]:
        raise ValueError(f"ELF machine {machine}, expected {ELF_MACHINE[arch]} ({arch})")
    if e_type not in (2, 3):
        raise ValueError(f"ELF type {e_type}, expected an executable")
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    interp, dynamic = None, None
    loads = []
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
        if strtab is not None:
            base = next((off + strtab - va for va, off, sz in loads if va <= strtab < va + sz), None)
            for tag, val in entries:
                if tag == 1 and base is not None:  # DT_NEEDED
                    libs.append(data[base + val:].split(b"\0", 1)[0].decode())
    if static:
        if interp or libs:
            raise ValueError(f"expected a fully static binary, it loads {interp} {' '.join(libs)}")
        return f"ELF {arch} executable, static", libs
    bad = [lib for lib in libs if lib not in GLIBC_LIBS]
    if bad:
        raise ValueError("loads libraries beyond the C library: " + ", ".join(bad))
    return f"ELF {arch} executable, interpreter {interp}", libs


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, target = sys.argv[1], sys.argv[2]
    arch = target.split("-", 1)[0]
    try:
        with open(path, "rb") as f:
            data = f.read()
        if target.endswith("-macos"):
            kind, libs = macho(data, arch)
        else:
            kind, libs = elf(data, arch, static=target.endswith("-musl"))
    except (OSError, ValueError, struct.error, KeyError, UnicodeDecodeError) as e:
        print(f"check-binary: {path}: {e or type(e).__name__}", file=sys.stderr)
        return 1
    size = len(data) / 1e6
    print(f"  {path}: {kind}, {size:.1f} MB" + (", loads " + " ".join(libs) if libs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
