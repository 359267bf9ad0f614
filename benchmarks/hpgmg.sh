#!/usr/bin/env bash
# HPGMG-FV's benchmark problem beside heat's, in one run: HPGMG-FV built
# from its source (a checkout of github.com/hpgmg/hpgmg, given as HPGMG)
# with the 7-point variable-coefficient operator, F-cycles and red–black
# Gauss–Seidel, run as `hpgmg-fv 7 4` on 2 ranks (256³; the median of its
# timed solves), then heat's BenchmarkSmoothBall at 256³ (the same β as a k
# map, zero faces, 2 ranks of one thread; one full-multigrid cycle in the
# medium and on the uniform problem, three solves each), ROUNDS times,
# alternating.
#   benchmarks/hpgmg.sh HPGMG [ROUNDS]
set -euo pipefail
src=${1:?usage: benchmarks/hpgmg.sh HPGMG-CHECKOUT [ROUNDS]}
rounds=${2:-3}
d=$(mktemp -d /tmp/hpgmg.XXXX)
trap 'rm -rf "$d"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
	"$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512vl|fma)$' | xargs)"
fv=$src/finite-volume/source
mpicc -O3 -march=native -fopenmp -w "$fv"/level.c "$fv"/operators.7pt.c "$fv"/mg.c "$fv"/solvers.c \
	"$fv"/hpgmg-fv.c "$fv"/timers.c -DUSE_MPI -DUSE_FCYCLES -DUSE_GSRB -DUSE_BICGSTAB -lm -o "$d/hpgmg-fv"
go test -c -o "$d/solver.test" ./solver/
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
for r in $(seq "$rounds"); do
	echo "round $r: hpgmg-fv 7 4 on 2 ranks (the FMGSolve times of its timed solves at 256³: min, median, max)"
	# Its first block of timed solves is the 256³ problem's; the blocks
	# after it solve the 128³ and 64³ problems of its error analysis.
	OMP_NUM_THREADS=1 mpirun "${root[@]}" --oversubscribe -np 2 "$d/hpgmg-fv" 7 4 2>&1 |
		awk '/Running .* solves/ {n++} /Timing Breakdown/ && n == 1 {n = 99} n == 1' |
		grep -o 'done ([0-9.]* seconds)' | grep -o '[0-9.]*' |
		sort -n | awk '{a[NR]=$1} END {printf "  hpgmg-fv FMG solve: %.3f %.3f %.3f s (%d solves)\n", a[1], a[int((NR+1)/2)], a[NR], NR}'
	echo "round $r: heat"
	"$d/solver.test" -test.run X -test.bench 'BenchmarkSmoothBall/n=256/solve=(fmg|uniform-fmg)' -test.benchtime 1x -test.count 3 | grep Benchmark
done
