#!/usr/bin/env bash
# heat where the cores are shared, beside ../shared/refbench's C kernel in
# the same situations, in one run (issue #27). Three situations:
#   1. two processes at once: the pair's wall at threads = cores against
#      the same pair at threads = 1 (heat: explicit 512², multigrid
#      Poisson 1024², implicit-heat-2d; C: jacobi 256², 4000 steps);
#   2. one busy-loop process beside the run: heat 1024² at threads = cores
#      against C at threads = cores (Mupdates/s, data in [1, 2]);
#   3. in-process oversubscription: heat --ranks 2 --threads 2 against
#      --ranks 2 --threads 1 (explicit 1024², multigrid Poisson 1024²).
# Prints every repetition, the medians and the ratios the issue targets.
#   benchmarks/contention.sh [reps]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
t=${THREADS:-$(nproc)}
ref=${REFBENCH:-../shared/refbench}
tmp=$(mktemp -d)
busy=
trap '[ -n "$busy" ] && kill "$busy" 2>/dev/null; rm -rf "$tmp"' EXIT
"$ref/build.sh" "$tmp/ref" >/dev/null
CGO_ENABLED=0 go build -o "$tmp/heat" ./cmd/heat
data=(--set initial.kind=random --set initial.background=1 --set initial.value=1 --set boundary.value=1)

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(go version | cut -d' ' -f3)"
echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|fma)$' | xargs), heat kernel: ${HEAT_KERNEL:-auto}, threads = cores = $t"

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2)? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
now() { date +%s.%N; }
field() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1/report.json" | head -1; }

# The wall of two copies of a command started together; "@" in the
# command is replaced by each copy's output folder.
pair() {
	local s e
	s=$(now)
	"${@//@/$tmp/p1}" >/dev/null &
	local a=$!
	"${@//@/$tmp/p2}" >/dev/null &
	local b=$!
	wait "$a" "$b"
	e=$(now)
	awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}'
}

echo
echo "== 1. two processes at once: the pair's wall (s), threads = 1 and $t =="
printf '%-28s %-4s %10s %10s\n' case rep "1 thread" "$t threads"
declare -A ratio
for c in explicit-512 multigrid-1024 implicit-heat-2d c-jacobi-256; do
	one=() many=()
	for r in $(seq "$reps"); do
		for th in 1 "$t"; do
			case $c in
			explicit-512) cmd=("$tmp/heat" run --threads "$th" --out @ --overwrite -q) ;;
			multigrid-1024) cmd=("$tmp/heat" run -c poisson-2d --set 'grid.shape=[1024,1024]' --threads "$th" --out @ --overwrite -q) ;;
			implicit-heat-2d) cmd=("$tmp/heat" run -c implicit-heat-2d --threads "$th" --out @ --overwrite -q) ;;
			c-jacobi-256) cmd=(env OMP_NUM_THREADS="$th" OMP_PROC_BIND=close OMP_PLACES=cores "$tmp/ref/jacobi" 256 0 4000) ;;
			esac
			w=$(pair "${cmd[@]}")
			if [ "$th" = 1 ]; then one+=("$w"); else many+=("$w"); fi
		done
		printf '%-28s %-4s %10s %10s\n' "$c" "$r" "${one[-1]}" "${many[-1]}"
	done
	m1=$(median "${one[@]}") mt=$(median "${many[@]}")
	ratio[$c]=$(awk -v a="$m1" -v b="$mt" 'BEGIN {printf "%.2f", b / a}')
	printf '%-28s %-4s %10s %10s   %s threads / 1 thread = %s\n' "$c" med "$m1" "$mt" "$t" "${ratio[$c]}"
done

echo
echo "== 2. one busy-loop process beside the run: 1024², 500 steps, $t threads, Mupdates/s =="
sh -c 'while :; do :; done' &
busy=$!
printf '%-4s %10s %10s %12s\n' rep C heat "heat others"
cs=() hs=()
for r in $(seq "$reps"); do
	c=$(OMP_NUM_THREADS=$t OMP_PROC_BIND=close OMP_PLACES=cores "$tmp/ref/jacobi" 1024 0 500 | sed -n 's/.* mups=\([0-9.]*\).*/\1/p')
	"$tmp/heat" run --set 'grid.shape=[1024,1024]' --steps 500 --threads "$t" --out "$tmp/b" --overwrite -q --set output.fingerprint=false "${data[@]}" >/dev/null
	h=$(field "$tmp/b" mupdates_per_s)
	printf '%-4s %10.1f %10.1f %12s\n' "$r" "$c" "$h" "$(field "$tmp/b" others)"
	cs+=("$c") hs+=("$h")
done
kill "$busy" 2>/dev/null || true
busy=
mc=$(median "${cs[@]}") mh=$(median "${hs[@]}")
busyratio=$(awk -v c="$mc" -v h="$mh" 'BEGIN {printf "%.2f", h / c}')
printf '%-4s %10.1f %10.1f   heat / C = %s\n' med "$mc" "$mh" "$busyratio"

echo
echo "== 3. in-process oversubscription: --ranks 2 --threads 2 against --threads 1, wall_s =="
printf '%-16s %-4s %12s %12s\n' case rep "2 ranks x 1" "2 ranks x 2"
for c in explicit-1024-2r multigrid-1024-2r; do
	a=() b=()
	for r in $(seq "$reps"); do
		for th in 1 2; do
			case $c in
			explicit-1024-2r) cmd=("$tmp/heat" run --set 'grid.shape=[1024,1024]' --steps 500 "${data[@]}") ;;
			multigrid-1024-2r) cmd=("$tmp/heat" run -c poisson-2d --set 'grid.shape=[1024,1024]') ;;
			esac
			"${cmd[@]}" --ranks 2 --threads "$th" --out "$tmp/o" --overwrite -q --set output.fingerprint=false >/dev/null
			w=$(field "$tmp/o" wall_s)
			if [ "$th" = 1 ]; then a+=("$w"); else b+=("$w"); fi
		done
		printf '%-16s %-4s %12s %12s\n' "$c" "$r" "${a[-1]}" "${b[-1]}"
	done
	ma=$(median "${a[@]}") mb=$(median "${b[@]}")
	ratio[$c]=$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.2f", a / b}')
	printf '%-16s %-4s %12s %12s   speed 2x2 / 2x1 = %s\n' "$c" med "$ma" "$mb" "${ratio[$c]}"
done

echo
echo "== targets =="
for c in explicit-512 multigrid-1024 implicit-heat-2d; do
	echo "two processes, $c: pair wall at $t threads / at 1 thread = ${ratio[$c]} (target <= 1.5; C jacobi: ${ratio[c-jacobi-256]})"
done
echo "busy-loop neighbour: heat / C at $t threads = $busyratio (target >= 1.0)"
echo "oversubscribed 2x2 / 2x1 speed: explicit ${ratio[explicit-1024-2r]}, multigrid ${ratio[multigrid-1024-2r]} (target >= 0.9)"
