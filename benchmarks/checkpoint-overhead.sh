#!/usr/bin/env bash
# Checkpoint cost at 4096² (random field: incompressible), a checkpoint
# every 100 steps of 500, synchronous and in the background against no
# checkpoints, alternated over rounds; then dd of the same bytes, files a
# checkpoint at 1, 2 and 4 ranks, and the restart read rate.
#   [HEAT=./heat] [THREADS=2] [ROUNDS=3] [SHARD=auto] benchmarks/checkpoint-overhead.sh
set -euo pipefail
bin=${HEAT:-./heat}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
shard=${SHARD:-auto}
d=$(mktemp -d /tmp/ckm.XXXX)
trap 'rm -rf "$d"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads $threads, checkpoint.shard $shard"
common=(--set 'grid.shape=[4096,4096]' --set initial.kind=random --set output.formats=[] --set output.diagnostics_every=0 --set output.fingerprint=false --set checkpoint.shard=$shard)
for rep in $(seq "$rounds"); do
  for mode in none sync async; do
    extra=()
    case $mode in
      sync) extra=(--set checkpoint.every=100 --set checkpoint.async=false) ;;
      async) extra=(--set checkpoint.every=100 --set checkpoint.async=true) ;;
    esac
    rm -rf "$d/$mode"
    $bin run -q --out "$d/$mode" --steps 500 --threads "$threads" "${common[@]}" "${extra[@]}"
    python3 - "$d/$mode/report.json" $mode $rep <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); c=r['checkpoints']
print(sys.argv[3], sys.argv[2], 'wall %.3f'%r['wall_s'], 'ckpts %d'%len(c), 'write_s %.3f'%sum(x['write_s'] for x in c), 'blocking_s %.3f'%sum(x['blocking_s'] for x in c), 'bytes %d'%(c[0]['bytes'] if c else 0))
PY
  done
done
bytes=$(python3 -c "import json; print(json.load(open('$d/sync/report.json'))['checkpoints'][0]['bytes'])")
echo "checkpoint bytes $bytes"
dd if=/dev/urandom of="$d/rnd" bs=1M count=$((bytes/1048576+1)) status=none
for i in 1 2 3; do dd if="$d/rnd" of="$d/ddout" bs=1M conv=fsync 2>&1 | tail -1; done
rm -f "$d/rnd" "$d/ddout"
for r in 1 2 4; do
  rm -rf "$d/f$r"
  $bin run -q --out "$d/f$r" --steps 1 --ranks $r --threads 1 --set checkpoint.final=true "${common[@]}"
  echo "ranks $r files in checkpoint: $(find "$d/f$r/checkpoints/step-00000001" -type f | wc -l)"
done
# restart read rate of the 1-rank checkpoint (134 MB) on 1 and 2 ranks
for r in 1 2 1 2; do
  $bin run -q --restart "$d/f1" --steps 2 --ranks $r --threads 1 --set checkpoint.final=false --overwrite
  python3 -c "import json; r=json.load(open('$d/f1/report.json')); print('restart on $r ranks: read_s %.3f, %.2f GB/s'%(r['restart']['read_s'], $bytes/r['restart']['read_s']/1e9))"
done
