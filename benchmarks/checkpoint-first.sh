#!/usr/bin/env bash
# The cost of checkpoints every 100 steps of a 4096² run (1 rank, 2 threads),
# the first one's apart: for each heat binary given, per round, the run with
# checkpoint.every=100 and the same run with checkpoint.every=0, one after
# the other; the binaries alternate within a round. Prints each run's wall,
# the overhead against that binary's run without checkpoints in the same
# round, each checkpoint's write_s and blocking_s (what the run waited), and
# the share of the CPUs other processes took (report "others").
#   benchmarks/checkpoint-first.sh [ROUNDS] [STEPS] HEAT...
set -euo pipefail
rounds=${1:-3}
steps=${2:-1000}
shift 2
d=$(mktemp -d /tmp/ckfirst.XXXX)
trap 'rm -rf "$d"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
	"$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512vl|fma)$' | xargs)"
for r in $(seq "$rounds"); do
	for bin in "$@"; do
		for every in 100 0; do
			rm -rf "$d/o$every"
			"$bin" run -q --set 'grid.shape=[4096,4096]' --steps "$steps" --set checkpoint.every="$every" \
				--threads 2 --out "$d/o$every" --report "$d/r$every.json"
		done
		python3 - "$d/r100.json" "$d/r0.json" "$r" "$bin" <<'PY'
import json, sys
ck, no = (json.load(open(p)) for p in sys.argv[1:3])
c = ck['checkpoints']
print('round %s %s: wall %.2f s, without checkpoints %.2f s: overhead %+.1f%%; others %.2f / %.2f' % (
    sys.argv[3], sys.argv[4], ck['wall_s'], no['wall_s'], 100 * (ck['wall_s'] - no['wall_s']) / no['wall_s'],
    ck.get('others', float('nan')), no.get('others', float('nan'))))
print('  write_s    ', ' '.join('%.3f' % x['write_s'] for x in c))
print('  blocking_s ', ' '.join('%.3f' % x['blocking_s'] for x in c), '(sum %.3f s)' % sum(x['blocking_s'] for x in c))
print('  bytes      ', c[0]['bytes'], '...', c[-1]['bytes'], '; cpu_s %.2f / %.2f' % (ck.get('cpu_s', float('nan')), no.get('cpu_s', float('nan'))))
PY
	done
done
