# Sourced by each call (as session 47's common.sh): unpacks the bundled binaries (.device/bin.tar.xz: the
# fatbins compress 4x, which keeps the carry under its 64 MiB), sets the library and test-data paths and
# records the machine.
D=.device; export LD_LIBRARY_PATH=$PWD/$D/lib:$LD_LIBRARY_PATH
export HGCA_SHARED_DIR=$PWD/$D/shared HGCA_TEST_DATA_DIR=$PWD/tests/data
mkdir -p $D/bin && tar xJf $D/bin.tar.xz -C $D/bin
R=$OUT/$CALL; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep -E 'Model name|L3'; cat $D/commit; date -u; } > $R/machine.txt
