#!/usr/bin/env bash
# Runs heat and ../shared/refbench's C kernel side by side, alternating, on
# one 2D grid (DIMS=3: 3D, N³), and prints each run's Mupdates/s and the
# median ratios. HEAT_KERNEL=generic|avx2|avx512 forces heat's kernel set,
# REF_ISA=avx2 builds the C kernel without AVX-512.
#   [DIMS=3] [THREADS=T] benchmarks/refcompare.sh [N] [steps] [reps]
# Prints: C (1 rank x T threads), heat 1 rank x T threads, heat T ranks x 1
# thread, for T = number of cores (at most 2 on the CI machine kind).
#
# heat runs on the C kernel's kind of data by default: values in [1, 2]
# (random, walls at 1), which no step takes below 1/2, so that neither side
# meets subnormal numbers (each costs a microcode assist; the C reference
# chooses its data for that reason). PROBLEM=default runs heat's built-in
# problem instead: a hot disc on a zero background, whose front leaves
# subnormal values behind it (measured: a 2048² step 1.4–2.7× slower after
# 800 steps, with 34,000 of them).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-4096}
steps=${2:-200}
reps=${3:-5}
t=${THREADS:-$(nproc)}
dims=${DIMS:-2}
shape="$n,$n"
data=(--set initial.kind=random --set initial.background=1 --set initial.value=1 --set boundary.value=1)
[ "${PROBLEM:-}" = default ] && data=()
[ "$dims" = 3 ] && shape="$n,$n,$n" 
ref=${REFBENCH:-../shared/refbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ref/build.sh" "$tmp/ref" >/dev/null
# REF_ISA=avx2: the C kernel built without AVX-512 (-mno-avx512f), what an
# AVX2-only host (Zen 3) compiles, beside HEAT_KERNEL=avx2 on an AVX-512 one.
if [ "${REF_ISA:-}" = avx2 ]; then
	gcc -O3 -march=native -mno-avx512f -fopenmp "$ref/jacobi.c" -o "$tmp/ref/jacobi"
fi
CGO_ENABLED=0 go build -o "$tmp/heat" ./cmd/heat
mups() { sed -n 's/.*"mupdates_per_s": \([0-9.e+]*\).*/\1/p' "$1/report.json"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(go version | cut -d' ' -f3), GOAMD64=$(go env GOAMD64)"
echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|fma)$' | xargs), heat kernel: ${HEAT_KERNEL:-auto}, C: ${REF_ISA:-native}"
what="in [1, 2] as the C kernel's"
[ "${PROBLEM:-}" = default ] && what="heat's default problem"
echo "grid ${shape//,/x}, ${steps} steps, threads ${t}, data: $what"
printf '%-4s %10s %14s %14s\n' rep C heat_1x$t heat_${t}x1
cs=() h1=() h2=()
for r in $(seq "$reps"); do
	c=$(OMP_NUM_THREADS=$t OMP_PROC_BIND=close OMP_PLACES=cores "$tmp/ref/jacobi" "$n" 0 "$steps" "$dims" | sed -n 's/.* mups=\([0-9.]*\).*/\1/p')
	"$tmp/heat" run --set "grid.shape=[$shape]" --steps "$steps" --ranks 1 --threads "$t" --out "$tmp/a" --overwrite -q --set output.fingerprint=false "${data[@]}"
	"$tmp/heat" run --set "grid.shape=[$shape]" --steps "$steps" --ranks "$t" --threads 1 --out "$tmp/b" --overwrite -q --set output.fingerprint=false "${data[@]}"
	a=$(mups "$tmp/a") b=$(mups "$tmp/b")
	printf '%-4s %10.1f %14.1f %14.1f\n' "$r" "$c" "$a" "$b"
	cs+=("$c") h1+=("$a") h2+=("$b")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2)? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mc=$(median "${cs[@]}") m1=$(median "${h1[@]}") m2=$(median "${h2[@]}")
awk -v c="$mc" -v a="$m1" -v b="$m2" -v t="$t" 'BEGIN {
	printf "median Mupdates/s: C %.1f, heat 1x%d %.1f, heat %dx1 %.1f\n", c, t, a, t, b
	printf "heat 1x%d / C = %.3f; heat %dx1 / heat 1x%d = %.3f\n", t, a/c, t, t, b/a }'
