#!/usr/bin/env python3
"""Build check: issue slots per pair term in the hot loops of the CUDA kernels (no GPU needed).

usage: check_sass.py CUOBJDUMP OBJECT_DIR "ARCHS"

Reads the SASS of gpu/direct.cu and gpu/tree_walk.cu (cuobjdump -sass, one architecture at a
time), finds the innermost loops (a backward branch and no loop inside it) that evaluate a
reciprocal square root (MUFU), and counts their instructions per MUFU: the warp issue slots
one pair term costs, since a warp scheduler issues one instruction per cycle (docs/perf-gpu.md).

The direct kernel's Plummer pair is 14 floating-point instructions (3 differences, r^2 in 3
fused multiply-adds, rsqrt, 3 multiplies, 3 fused multiply-adds into a, 1 add into the
potential) plus one shared-memory load per T targets (a thread's T targets share each source),
plus the loop's own counter, address and branch (4-5 instructions per 16 T pairs): the check
requires at most 14 + 1/T + 0.3 slots in each kernel's bulk loop (its cheapest one; every
kernel also has a loop that masks the self pair in its diagonal tiles). A change that adds an instruction to every
pair (a per-pair mask cost 5 more) fails it. The tree's lists kernel and the spline kernel are
reported, not checked.

Exit 77 (CTest: skipped) when cuobjdump or the nvdisasm it runs is not available, or no real
architecture is configured (native, all, or virtual ones only). A configured architecture
without any direct kernel in the objects fails the check.
"""
import os
import re
import subprocess
import sys

SKIP = 77


def functions(cuobjdump, obj, arch):
    """{mangled name: [(address, instruction text)]} of one architecture's SASS."""
    out = subprocess.run([cuobjdump, "-sass", "-arch", f"sm_{arch}", obj], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2)))
    return funcs


def mufu_loops(ins):
    """(instructions, MUFU count) of each innermost loop that evaluates a MUFU."""
    index = {a: k for k, (a, _) in enumerate(ins)}
    loops = []
    for k, (a, text) in enumerate(ins):
        m = re.search(r"\bBRA\b(?:\s+\S+,)?\s+0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) <= a and int(m.group(1), 16) in index:
            loops.append((index[int(m.group(1), 16)], k))
    out = []
    for s, e in loops:
        if any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in loops):
            continue  # not innermost
        mufu = sum("MUFU" in t for _, t in ins[s:e + 1])
        if mufu:
            out.append((e - s + 1, mufu))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.splitlines()[2])
    cuobjdump, objdir, archs = sys.argv[1], sys.argv[2], sys.argv[3].replace(";", " ").split()
    if not cuobjdump or not os.access(cuobjdump, os.X_OK):
        print("check_sass: SKIP: no cuobjdump (scripts/setup.sh test installs the "
              "nvidia-cuda-cuobjdump wheel into .venv)")
        return SKIP
    # cuobjdump runs nvdisasm: from PATH, NVDISASM_PATH, or beside it (the wheels' layout).
    beside = os.path.join(os.path.dirname(cuobjdump), "nvdisasm")
    if "NVDISASM_PATH" not in os.environ and os.access(beside, os.X_OK):
        os.environ["NVDISASM_PATH"] = os.path.dirname(cuobjdump)
    if not (os.environ.get("NVDISASM_PATH") or any(
            os.access(os.path.join(d, "nvdisasm"), os.X_OK)
            for d in os.environ.get("PATH", "").split(os.pathsep))):
        print("check_sass: SKIP: no nvdisasm for cuobjdump (the nvidia-cuda-nvdisasm wheel)")
        return SKIP
    real = []
    for a in archs:  # 80, 90a, 80-real: SASS; 80-virtual: PTX only; native, all: unknown here
        m = re.fullmatch(r"(\d+[a-z]?)(-real)?", a)
        if m:
            real.append(m.group(1))
    if not real:
        print(f"check_sass: SKIP: no real CUDA architecture in {sys.argv[3]!r}")
        return SKIP
    direct_o = os.path.join(objdir, "direct.cu.o")
    lists_o = os.path.join(objdir, "tree_walk.cu.o")
    failures = 0
    kind_name = {"0": "plummer", "1": "spline"}
    for arch in real:
        checked = 0
        print(f"sm_{arch}: direct_forces_kernel<128, T, kernel, softened, prefetch>, "
              "issue slots per pair in the bulk loop (bound: 14 + 1/T + 0.3 for Plummer)")
        for name, ins in sorted(functions(cuobjdump, direct_o, arch).items()):
            m = re.search(r"direct_forces_kernelILi(\d+)ELi(\d)ELNS_9SofteningE(\d)ELb(\d)ELb(\d)",
                          name)
            if not m:
                continue
            _, t, kind, soft, prefetch = m.groups()
            checked += 1
            loops = mufu_loops(ins)
            if not loops:
                print(f"  T={t} {kind_name[kind]} soft={soft} prefetch={prefetch}: no MUFU loop")
                failures += 1
                continue
            slots = min(n / mufu for n, mufu in loops)
            others = sorted(round(n / mufu, 2) for n, mufu in loops if n / mufu > slots)
            bound = 14 + 1 / int(t) + 0.3
            ok = kind == "1" or slots <= bound
            failures += not ok
            print(f"  T={t} {kind_name[kind]:7s} soft={soft} prefetch={prefetch}: {slots:6.2f}"
                  + (f"  (bound {bound:.2f})" if kind == "0" else "  (reported)")
                  + (f"  other loops {others}" if others else "") + ("" if ok else "  FAIL"))
        if checked == 0:
            print(f"  no direct_forces_kernel in the sm_{arch} SASS of {direct_o}  FAIL")
            failures += 1
        for name, ins in sorted(functions(cuobjdump, lists_o, arch).items()):
            if "tree_walk_lists_kernel" not in name:
                continue
            loops = sorted({round(n / mufu, 2) for n, mufu in mufu_loops(ins)})
            print(f"  {re.sub(r'.*tree_walk_', 'tree_walk_', name)[:40]}: slots per term in "
                  f"its MUFU loops {loops} (reported)")
    if failures:
        print(f"check_sass: {failures} check(s) failed")
        return 1
    print("check_sass: every direct kernel within its bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
