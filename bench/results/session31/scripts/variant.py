# Session 31, dev machine: builds hgca_bench_cpu with parts of src/cpu/arch/sparse_kernel.hpp cut out
# (replacements "old=>new" on a saved copy of the kernel at /tmp/sk.orig), then restores the kernel.
# usage: variant.py name 'a=>b' ... (replacements applied to sparse_kernel.hpp orig), builds bench into /work/exp/bins/name, restores
import sys, subprocess, shutil
name = sys.argv[1]
src = open('/tmp/sk.orig').read()
for r in sys.argv[2:]:
    a, b = r.split('=>')
    assert a in src, a
    src = src.replace(a, b, 1)
open('/work/main/src/cpu/arch/sparse_kernel.hpp', 'w').write(src)
try:
    subprocess.run('cd /work/main && cmake --build --preset default --target hgca_bench_cpu 2>&1 | grep -E "error" ; cp build/default/bench/hgca_bench_cpu /work/exp/bins/' + name, shell=True, check=True)
finally:
    shutil.copy('/tmp/sk.orig', '/work/main/src/cpu/arch/sparse_kernel.hpp')
