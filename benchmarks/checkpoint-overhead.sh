#!/usr/bin/env bash
# Checkpoint overhead at 4096², every 100 steps, async on/off vs none.
bin=${HEAT:-./heat}
d=$(mktemp -d /tmp/ckm.XXXX)
for rep in 1 2 3; do
  for mode in none sync async; do
    extra=()
    case $mode in
      none) ;;
      sync) extra=(--set checkpoint.every=100 --set checkpoint.async=false) ;;
      async) extra=(--set checkpoint.every=100 --set checkpoint.async=true) ;;
    esac
    rm -rf $d/$mode
    $bin run -q --out $d/$mode --set 'grid.shape=[4096,4096]' --set initial.kind=random --steps 500 --threads 2 --set output.formats=[] --set output.diagnostics_every=0 --set output.fingerprint=false "${extra[@]}"
    python3 - $d/$mode/report.json $mode $rep <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); c=r['checkpoints']
print(sys.argv[3], sys.argv[2], 'wall %.3f'%r['wall_s'], 'ckpts %d'%len(c), 'write_s %.3f'%sum(x['write_s'] for x in c), 'blocking_s %.3f'%sum(x['blocking_s'] for x in c), 'bytes %d'%(c[0]['bytes'] if c else 0))
PY
  done
done
# dd of the same bytes, fsynced
bytes=$(python3 -c "import json; print(json.load(open('$d/sync/report.json'))['checkpoints'][0]['bytes'])")
echo "checkpoint bytes $bytes"
dd if=/dev/urandom of=$d/rnd bs=1M count=$((bytes/1048576+1)) status=none
for i in 1 2 3; do dd if=$d/rnd of=$d/ddout bs=1M conv=fsync 2>&1 | tail -1; done
for r in 1 2 4; do
  rm -rf $d/f$r; $bin run -q --out $d/f$r --set 'grid.shape=[4096,4096]' --steps 1 --ranks $r --set checkpoint.final=true --set output.formats=[] --set output.fingerprint=false
  echo "ranks $r files in checkpoint: $(find $d/f$r/checkpoints/step-00000001 -type f | wc -l)"
done
# restart read rate
for i in 1 2 3; do $bin run -q --restart $d/f1 --steps 2 --set checkpoint.final=false --overwrite; python3 -c "import json; r=json.load(open('$d/f1/report.json')); print('restart read_s %.3f'%r['restart']['read_s'])"; done
rm -rf $d
