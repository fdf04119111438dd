#!/bin/bash
# mk.sh NAME SRCDIR [nvcc flags]: the bf16 D 128 decode kernel that probe.cu instantiates (the
# cluster one; -DSPLIT: split + combine's) compiled alone with ptxas -v, its SASS in NAME.k.txt
# (address, instruction), for loops.py. cuobjdump/nvdisasm: the pip wheels nvidia-cuda-cuobjdump
# and nvidia-cuda-nvdisasm 13.2.51 unpacked into $TOOLS (the dev machine has neither).
TOOLS=${TOOLS:-/tmp/sasstools/x/nvidia/cu13/bin}
n=$1; src=$2; shift 2
here=$(dirname "$0")
/usr/local/cuda/bin/nvcc -I"$src" -I"$src/../include" -O3 -DNDEBUG -std=c++20 -arch=sm_90 -cubin \
  -Xptxas -v "$@" -o "$n.cubin" "$here/probe.cu" 2>&1 | grep -E "registers|spill"
NVDISASM_PATH=$TOOLS "$TOOLS/cuobjdump" -sass "$n.cubin" |
  awk '/Function : .*decode_(split|cluster)_kernel/{f=1} /Function : .*decode_combine/{f=0} f' |
  grep -E '^\s+/\*[0-9a-f]{4,5}\*/' | sed -E 's#^\s+/\*([0-9a-f]+)\*/\s+#\1 #; s#\s*/\*.*##; s# ;##' > "$n.k.txt"
