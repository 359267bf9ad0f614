#!/usr/bin/env bash
# The kernel against ../shared/refbench, side by side in one run:
#  1. 2D one sweep per step, N = 256, 2048, 8192, 1 and 2 threads: heat
#     (default build; HEAT_KERNEL=avx2 forces that path) vs the C kernel,
#     alternating, best of each;
#  2. temporal blocking on 2D 8192² and 3D 512³ against the one-sweep
#     ceiling from refbench's STREAM copy (GB/s ÷ 16 B);
#  3. halo cost: 2 ranks × 1 thread vs 1 rank × 2 threads on 4096².
#   benchmarks/kernel.sh [reps]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
ref=${REFBENCH:-../shared/refbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ref/build.sh" "$tmp/ref" >/dev/null
CGO_ENABLED=0 go build -o "$tmp/heat" ./cmd/heat
h="$tmp/heat"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, flags: $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|fma)$' | xargs); $(go version | cut -d' ' -f3), GOAMD64=$(go env GOAMD64), heat kernel: ${HEAT_KERNEL:-auto}"
best() { printf '%s\n' "$@" | sort -g | tail -1; }
csteps() { case $1 in 256) echo 20000;; 2048) echo 300;; *) echo 20;; esac; }
hk() { "$h" bench kernel --copy-mib 64 --seconds "${SEC:-1}" "$@" | awk '$1 ~ /^[23]$/ {print $6}'; }

echo; echo "## 1. 2D, one sweep per step: heat / C (best of $reps, alternating)"
printf '%-6s %-8s %10s %10s %7s\n' N threads C heat ratio
for n in 256 2048 8192; do
	for t in 1 2; do
		cs=() hs=()
		for _ in $(seq "$reps"); do
			cs+=("$(OMP_NUM_THREADS=$t OMP_PROC_BIND=close OMP_PLACES=cores "$tmp/ref/jacobi" "$n" 0 "$(csteps "$n")" | sed -n 's/.* mups=\([0-9.]*\).*/\1/p')")
			hs+=("$(hk --sizes "$n" --threads "$t" --ghost 1)")
		done
		c=$(best "${cs[@]}") g=$(best "${hs[@]}")
		awk -v n="$n" -v t="$t" -v c="$c" -v g="$g" 'BEGIN {printf "%-6s %-8s %10.0f %10.0f %7.2f\n", n, t, c, g, g/c}'
	done
done

echo; echo "## 2. Temporal blocking vs the one-sweep ceiling (STREAM copy of 1000 MB arrays, 2 threads)"
copy=$(OMP_NUM_THREADS=2 "$tmp/ref/stream" 1000 5 | sed -n 's/.*kernel=copy .*best_gbs=\([0-9.]*\).*/\1/p')
ceil=$(awk -v c="$copy" 'BEGIN {print c*1e3/16}')
echo "STREAM copy, 2 threads: $copy GB/s → ceiling $ceil Mupdates/s"
printf '%-5s %-6s %-6s %10s %9s\n' dims n ghost Mupd/s ceiling
for g in 1 2 4 8; do
	m=$(SEC=2 hk --sizes 8192 --threads 2 --ghost "$g")
	awk -v m="$m" -v c="$ceil" -v g="$g" 'BEGIN {printf "%-5s %-6s %-6s %10.0f %8.2f×\n", 2, 8192, g, m, m/c}'
done
for g in 1 2 4 8; do
	m=$(SEC=2 hk --dims 3 --sizes 512 --threads 2 --ghost "$g")
	awk -v m="$m" -v c="$ceil" -v g="$g" 'BEGIN {printf "%-5s %-6s %-6s %10.0f %8.2f×\n", 3, 512, g, m, m/c}'
done

echo; echo "## 3. Halo cost, 2D 4096², 200 steps: 2 ranks × 1 thread / 1 rank × 2 threads (best of $reps)"
mups() { sed -n 's/.*"mupdates_per_s": \([0-9.e+]*\).*/\1/p' "$1/report.json"; }
as=() bs=()
for _ in $(seq "$reps"); do
	"$h" run --set "grid.shape=[4096,4096]" --steps 200 --ranks 1 --threads 2 --out "$tmp/a" -q --set output.fingerprint=false --set output.formats=[] --set output.diagnostics_every=0
	"$h" run --set "grid.shape=[4096,4096]" --steps 200 --ranks 2 --threads 1 --out "$tmp/b" -q --set output.fingerprint=false --set output.formats=[] --set output.diagnostics_every=0
	as+=("$(mups "$tmp/a")") bs+=("$(mups "$tmp/b")")
done
a=$(best "${as[@]}") b=$(best "${bs[@]}")
awk -v a="$a" -v b="$b" 'BEGIN {printf "1×2 %.0f, 2×1 %.0f Mupdates/s: ratio %.2f\n", a, b, b/a}'
