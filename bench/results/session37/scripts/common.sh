# Sourced by each call: unpacks the bundled binaries (.device/bin.tar.xz: the fatbins compress 4x,
# which keeps the carry under its 64 MiB), sets the library path and records the machine.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH
mkdir -p $D/bin && tar xJf $D/bin.tar.xz -C $D/bin
ln -sfn $PWD/$D/shared /work/shared 2>/dev/null || true
R=$OUT/$CALL; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep -E 'Model name|L3'; git log --oneline -1 2>/dev/null; date -u; } > $R/machine.txt
