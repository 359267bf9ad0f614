#!/usr/bin/env bash
# heat's MPI binding (comm/mpi, Go) against the same loops in plain MPI C,
# under mpirun -np 2, runs alternating between them:
#  1. ping-pong (benchmarks.PingPong vs pingpong.c): one-way latency at 8 B
#     and bandwidth at 8 MiB;
#  2. halo exchange of a 4096² field, faces only (heat's halo.Plan vs
#     halo.c): time per exchange.
# C runs twice: at MPI_THREAD_SERIALIZED, the level comm/mpi asks for (so
# "C" is the same program at the same level), and at MPI_THREAD_SINGLE
# ("C single"), which Open MPI 4.1 makes faster and which a Go process,
# multithreaded, cannot honestly ask for. Prints each figure's median over
# the runs, and the median over the runs of each run's ratios Go/C and Go/C
# single (a run's three programs run back to back, so they share the VM's
# speed of the moment, which changes between runs), Go/C against its target
# (latency <= 1.5, bandwidth >= 0.95).
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
"${mpirun[@]}" "$tmp/pingpong-c" 10 1 | sed -n 's/^# impl=c library=\(.*\) thread_level=.*/mpi: \1/p'
echo "runs: $runs of each, alternating, each other run C first; ping-pong round trips at 8 B, 8 MiB: $pp_iters; halo n, exchanges: $halo_args"

# value FILE KEY [FILTER]: KEY's number on the line of FILE matching FILTER.
value() { grep -e "${3:-.}" "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }
for i in $(seq "$runs"); do
	order="go c c1"
	[ $((i % 2)) = 0 ] && order="c1 c go"
	for impl in $order; do
		# c1 is the C binary at MPI_THREAD_SINGLE (thread_level.h).
		level=serialized bin=$impl
		[ "$impl" = c1 ] && level=single bin=c
		# shellcheck disable=SC2086 # the iteration counts are two words
		THREAD_LEVEL=$level "${mpirun[@]}" "$tmp/pingpong-$bin" $pp_iters >"$tmp/pp-$impl-$i"
		# shellcheck disable=SC2086
		THREAD_LEVEL=$level "${mpirun[@]}" "$tmp/halo-$bin" $halo_args >"$tmp/halo-$impl-$i"
	done
	for impl in go c c1; do
		value "$tmp/pp-$impl-$i" latency_us 'bytes=8 ' >>"$tmp/v-lat-$impl"
		value "$tmp/pp-$impl-$i" bandwidth_MBps 'bytes=8388608 ' >>"$tmp/v-bw-$impl"
		value "$tmp/halo-$impl-$i" us_per_exchange >>"$tmp/v-halo-$impl"
	done
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# ratio STEM IMPL: the median over the runs of Go's figure STEM over IMPL's.
ratio() { paste "$tmp/v-$1-go" "$tmp/v-$1-$2" | awk '{print $1 / $2}' >"$tmp/r-$1-$2" && median "$tmp/r-$1-$2"; }
# row NAME FILE-STEM CMP TARGET: medians of Go, C and C single, the ratios,
# the verdict on Go/C.
row() {
	local g c c1 r r1
	g=$(median "$tmp/v-$2-go") c=$(median "$tmp/v-$2-c") c1=$(median "$tmp/v-$2-c1")
	r=$(ratio "$2" c) r1=$(ratio "$2" c1)
	awk -v name="$1" -v g="$g" -v c="$c" -v c1="$c1" -v r="$r" -v r1="$r1" -v cmp="$3" -v target="$4" 'BEGIN {
		verdict = target == "" ? "" : ((cmp == "<=" ? r <= target : r >= target) ? "met" : "MISSED")
		printf "%-34s %10.3f %10.3f %7.3f %10.3f %7.3f   %s %s %s\n", name, g, c, r, c1, r1, (target == "" ? "" : cmp), target, verdict
	}'
}
echo
echo "Go, C, C single: medians of $runs runs; Go/C, Go/C1: medians of the runs' own ratios"
printf '%-34s %10s %10s %7s %10s %7s   %s\n' "" Go C Go/C "C single" "Go/C1" "target (Go/C)"
row "ping-pong latency 8 B (µs)" lat "<=" 1.5
row "ping-pong bandwidth 8 MiB (MB/s)" bw ">=" 0.95
row "halo $(echo "$halo_args" | cut -d' ' -f1)² faces (µs/exchange)" halo "<=" ""
echo
echo "every run (Go | C | C single):"
# each NAME I: run I's figure NAME of Go, C and C single.
each() { echo "$(sed -n "$2p" "$tmp/v-$1-go") | $(sed -n "$2p" "$tmp/v-$1-c") | $(sed -n "$2p" "$tmp/v-$1-c1")"; }
for i in $(seq "$runs"); do
	printf '  run %d: latency %s µs, bandwidth %s MB/s, halo %s µs\n' "$i" "$(each lat "$i")" "$(each bw "$i")" "$(each halo "$i")"
done
