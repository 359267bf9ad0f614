#!/usr/bin/env bash
# heat's MPI binding (comm/mpi, Go) against the same loops in plain MPI C,
# under mpirun -np 2, runs alternating between the two:
#  1. ping-pong (benchmarks.PingPong vs pingpong.c): one-way latency at 8 B
#     and bandwidth at 8 MiB;
#  2. halo exchange of a 4096² field, faces only (heat's halo.Plan vs
#     halo.c): time per exchange.
# Prints each figure's median over the runs and the ratio Go/C against its
# target (latency <= 1.5, bandwidth >= 0.95).
#   benchmarks/mpi/compare.sh [runs]        (default 5)
# MPIRUN_FLAGS adds mpirun flags (e.g. --oversubscribe); PP_ITERS sets the
# round trips at 8 B and 8 MiB (default "100000 500"); HALO_ARGS the field
# size and exchanges (default "4096 500").
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
pp_iters=${PP_ITERS:-100000 500}
halo_args=${HALO_ARGS:-4096 500}
if [ "$(id -u)" = 0 ]; then
	# Open MPI refuses to run as root unless told twice (containers, CI).
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc -O3 -o "$tmp/pingpong-c" benchmarks/mpi/pingpong.c
mpicc -O3 -o "$tmp/halo-c" benchmarks/mpi/halo.c
go build -tags mpi -o "$tmp/pingpong-go" ./benchmarks/mpi/pingpong
go build -tags mpi -o "$tmp/halo-go" ./benchmarks/mpi/halo
# shellcheck disable=SC2206 # MPIRUN_FLAGS is a list of words
mpirun=(mpirun -np 2 ${MPIRUN_FLAGS:-})

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(go version | cut -d' ' -f3)"
"${mpirun[@]}" "$tmp/pingpong-c" 10 1 | sed -n 's/^# impl=c library=/mpi: /p'
echo "runs: $runs of each, alternating, each other run C first; ping-pong round trips at 8 B, 8 MiB: $pp_iters; halo n, exchanges: $halo_args"

# value FILE KEY [FILTER]: KEY's number on the line of FILE matching FILTER.
value() { grep -e "${3:-.}" "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }
for i in $(seq "$runs"); do
	order="go c"
	[ $((i % 2)) = 0 ] && order="c go"
	for impl in $order; do
		# shellcheck disable=SC2086 # the iteration counts are two words
		"${mpirun[@]}" "$tmp/pingpong-$impl" $pp_iters >"$tmp/pp-$impl-$i"
		# shellcheck disable=SC2086
		"${mpirun[@]}" "$tmp/halo-$impl" $halo_args >"$tmp/halo-$impl-$i"
	done
	for impl in go c; do
		value "$tmp/pp-$impl-$i" latency_us 'bytes=8 ' >>"$tmp/v-lat-$impl"
		value "$tmp/pp-$impl-$i" bandwidth_MBps 'bytes=8388608 ' >>"$tmp/v-bw-$impl"
		value "$tmp/halo-$impl-$i" us_per_exchange >>"$tmp/v-halo-$impl"
	done
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# row NAME FILE-STEM CMP TARGET: medians of Go and C, their ratio, the verdict.
row() {
	local g c
	g=$(median "$tmp/v-$2-go") c=$(median "$tmp/v-$2-c")
	awk -v name="$1" -v g="$g" -v c="$c" -v cmp="$3" -v target="$4" 'BEGIN {
		r = g / c
		verdict = target == "" ? "" : ((cmp == "<=" ? r <= target : r >= target) ? "met" : "MISSED")
		printf "%-34s %10.3f %10.3f %7.2f   %s %s %s\n", name, g, c, r, (target == "" ? "" : cmp), target, verdict
	}'
}
echo
printf '%-34s %10s %10s %7s   %s\n' "median of $runs runs" Go C Go/C target
row "ping-pong latency 8 B (µs)" lat "<=" 1.5
row "ping-pong bandwidth 8 MiB (MB/s)" bw ">=" 0.95
row "halo $(echo "$halo_args" | cut -d' ' -f1)² faces (µs/exchange)" halo "<=" ""
echo
echo "every run (Go | C):"
for i in $(seq "$runs"); do
	printf '  run %d: latency %s | %s µs, bandwidth %s | %s MB/s, halo %s | %s µs\n' "$i" \
		"$(sed -n "${i}p" "$tmp/v-lat-go")" "$(sed -n "${i}p" "$tmp/v-lat-c")" \
		"$(sed -n "${i}p" "$tmp/v-bw-go")" "$(sed -n "${i}p" "$tmp/v-bw-c")" \
		"$(sed -n "${i}p" "$tmp/v-halo-go")" "$(sed -n "${i}p" "$tmp/v-halo-c")"
done
