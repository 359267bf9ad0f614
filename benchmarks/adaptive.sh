#!/usr/bin/env bash
# Steps that choose themselves (equation.dt = "auto") against fixed steps,
# on two problems: the power module (configs/power-module-3d: a 3D stack of
# three materials, a convective face, a 50 W heater switched on at t = 1 s)
# to 60 s by backward Euler, and a decaying sine mode (configs/
# implicit-heat-2d, 256²) to t = 0.1 by Crank–Nicolson; each also by SDIRK4
# choosing its steps (and the sine mode by SDIRK4's fixed dt = 0.025). Per problem: a
# reference of fixed steps dt/16, the fixed-step run of dt, and adaptive
# runs at several rtol; each run's probes against the reference's at the
# common times (max |Δ| over the probes and times), its steps, the solves
# (multigrid cycles) and its wall time. The errors are over the probe times
# every run of the problem has.
#   benchmarks/adaptive.sh HEAT
set -euo pipefail
heat=${1:?usage: benchmarks/adaptive.sh HEAT}
d=$(mktemp -d /tmp/adaptive.XXXX)
trap 'rm -rf "$d"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
	"$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512vl|fma)$' | xargs)"

# run NAME ARGS...: one run into $d/NAME.
run() {
	local name=$1
	shift
	"$heat" run -q --out "$d/$name" --set 'output.formats=[]' --threads 2 "$@"
}

# compare REF RUN...: each run's probes against REF's at the times both have.
compare() {
	python3 - "$d" "$@" <<'PY'
import csv, json, sys
d, ref, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
def probes(name):
    rows = list(csv.reader(open(f"{d}/{name}/probes.csv")))
    return {round(float(r[1]), 9): [float(x) for x in r[2:]] for r in rows[1:]}
r0 = probes(ref)
# The times every run has: each run's error over the same probe rows.
shared = set(r0)
for name in runs:
    shared &= set(probes(name))
for name in [ref] + runs:
    rep = json.load(open(f"{d}/{name}/report.json"))
    p = probes(name)
    common = [t for t in p if t in shared and t > 0]
    err = max(abs(a - b) for t in common for a, b in zip(p[t], r0[t]))
    a = rep["solver"].get("adaptive")
    extra = f", {a['rejected']} taken again, dt {a['dt_min']:.3g} … {a['dt_max']:.3g}" if a else ""
    if a:
        extra += f", controller {100 * a['control_share']:.1f}% of the wall"
    print(f"{name:>14}: steps {rep['steps']:5d}{extra}, cycles {rep['solver']['cycles']:6d}, wall {rep['wall_s']:7.2f} s, "
          f"max |Δ| against the reference at {len(common)} times {err:.3e}")
PY
}

echo "== power module to 60 s, backward Euler (probes chip and base, K; the adaptive runs' every 5 s, so their steps are not held to the probes')"
# The heater's switch as "t <= 1": fixed steps land on t = 1 and take its end
# value, 0, so the fixed runs switch at 1 as the adaptive ones do (with
# "t < 1" a fixed step ending at 1 takes the heater on a step early).
pm=(-c power-module-3d --set run.t_end=60 --set 'source.amplitude="t <= 1 ? 0 : 1"')
run pm-ref "${pm[@]}" --set equation.dt=0.00625 --set output.probe_every=160
run pm-fixed "${pm[@]}" --set equation.dt=0.1 --set output.probe_every=10
for rtol in 1e-2 6e-3 4e-3 3e-3 2e-3 1e-3; do
	run "pm-auto-$rtol" "${pm[@]}" --set 'equation.dt="auto"' --set equation.rtol="$rtol" --set equation.atol="$rtol" --set output.probe_dt=5
done
for rtol in 3e-3 1e-3; do
	run "pm-sdirk4-$rtol" "${pm[@]}" --set equation.scheme=sdirk4 --set 'equation.dt="auto"' --set equation.rtol="$rtol" --set equation.atol="$rtol" --set output.probe_dt=5
done
compare pm-ref pm-fixed pm-auto-1e-2 pm-auto-6e-3 pm-auto-4e-3 pm-auto-3e-3 pm-auto-2e-3 pm-auto-1e-3 pm-sdirk4-3e-3 pm-sdirk4-1e-3

echo "== sine mode, 256², to t = 0.1, Crank–Nicolson (probe at the centre; the adaptive runs' every 0.05, so their steps are not held to 0.01)"
sm=(-c implicit-heat-2d --set 'output.probe=[{name = "centre", at = [0.5, 0.5]}]')
run sm-ref "${sm[@]}" --set equation.dt=0.0000625 --set output.probe_every=160
run sm-fixed "${sm[@]}" --set equation.dt=0.001 --set output.probe_every=10
for rtol in 1e-4 1e-5 1e-6; do
	run "sm-auto-$rtol" "${sm[@]}" --set 'equation.dt="auto"' --set equation.rtol="$rtol" --set output.probe_dt=0.05
done
# SDIRK4 (fourth order, five solves a step), fixed and choosing its steps.
run sm-sdirk4-fixed "${sm[@]}" --set equation.scheme=sdirk4 --set equation.dt=0.025 --set output.probe_every=2
for rtol in 3e-3 1e-3 3e-4 1e-4; do
	run "sm-sdirk4-$rtol" "${sm[@]}" --set equation.scheme=sdirk4 --set 'equation.dt="auto"' --set equation.rtol="$rtol" --set output.probe_dt=0.05
done
compare sm-ref sm-fixed sm-auto-1e-4 sm-auto-1e-5 sm-auto-1e-6 sm-sdirk4-fixed sm-sdirk4-3e-3 sm-sdirk4-1e-3 sm-sdirk4-3e-4 sm-sdirk4-1e-4

echo "== the controller's own share at 1024² (sine mode to t = 0.02, Crank–Nicolson, rtol 1e-5)"
run big "${sm[@]}" --set 'grid.shape=[1024,1024]' --set run.t_end=0.02 --set 'equation.dt="auto"' --set equation.rtol=1e-5 --set output.probe_dt=0.01
python3 - "$d/big/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["solver"]["adaptive"]
print(f"1024²: {a['steps']} steps, {r['solver']['cycles']} cycles in {r['wall_s']:.2f} s; the controller {a['control_s']:.3f} s, "
      f"{100 * a['control_share']:.1f}% of the wall")
PY
