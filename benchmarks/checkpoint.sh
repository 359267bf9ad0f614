#!/usr/bin/env bash
# Checkpoint throughput and overhead on a 4096² field, side by side with the
# disk's plain sequential write speed (dd with fsync of the same byte count).
#   benchmarks/checkpoint.sh [N] [dir]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-4096}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
CGO_ENABLED=0 go build -o "$work/heat" ./cmd/heat
h="$work/heat"
raw=$((8 * n * n))
field() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1/report.json" | head -1; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(go version | cut -d' ' -f3); dir $work ($(df -h "$work" | awk 'NR==2 {print $1}'))"
dd if=/dev/zero of="$work/dd" bs=1M count=$((raw >> 20)) conv=fsync 2>&1 | tail -1 | sed 's/^/dd conv=fsync: /'
rm -f "$work/dd"
# random: an incompressible field (the worst case); hotspot: mostly zeros.
printf '%-8s %-6s %-6s %10s %10s %8s\n' field ranks level write_MB/s read_MB/s ratio
for init in random hotspot; do
	for ranks in 1 4; do
		for level in 1 3; do
			out="$work/${init}r${ranks}l${level}"
			rm -rf "$out"
			"$h" run --set "grid.shape=[$n,$n]" --steps 20 --ranks "$ranks" --out "$out" -q --set initial.kind="$init" \
				--set checkpoint.final=true --set checkpoint.level="$level" --set output.fingerprint=false
			ws=$(field "$out" write_s) bytes=$(field "$out" bytes)
			"$h" run --set "grid.shape=[$n,$n]" --steps 20 --ranks "$ranks" --out "$out" -q --set initial.kind="$init" \
				--restart latest --set output.fingerprint=false
			rs=$(field "$out" read_s)
			awk -v raw="$raw" -v ws="$ws" -v rs="$rs" -v b="$bytes" -v r="$ranks" -v l="$level" -v f="$init" \
				'BEGIN { printf "%-8s %-6s %-6s %10.0f %10.0f %8.3f\n", f, r, l, raw/ws/1e6, raw/rs/1e6, raw/b }'
		done
	done
done
out="$work/default"
"$h" run --out "$out" -q --set checkpoint.final=true
echo "default problem: $("$h" inspect "$out/checkpoints/latest" | grep ratio)"
out="$work/overhead"
"$h" run --set "grid.shape=[$n,$n]" --steps 300 --out "$out" -q --set checkpoint.every=100 --set output.fingerprint=false --set initial.kind=random
awk '/"wall_s"/ {gsub(/[",]/,""); w=$2} /"write_s"/ {gsub(/[",]/,""); c+=$2} END {printf "every 100 steps on %s: checkpoints %.2f s of %.2f s wall = %.1f%%\n", "'"${n}x${n}"'", c, w, 100*c/w}' "$out/report.json"
