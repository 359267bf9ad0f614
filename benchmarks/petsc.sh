#!/usr/bin/env bash
# PETSc 3.18 beside heat on one variable-coefficient Poisson problem, heat's
# "square inclusion": the unit square, N×N cells (N = 1024), k = 1e6 on the
# cells centred in [3/8, 5/8)², 1 elsewhere, ∇·(k∇u) = −1, u = 0 on the
# faces, both discretised the same way (finite volumes, harmonic face means;
# benchmarks/petsc/inclusion.c says how). It measures, per solver, the
# iterations, the accuracy reached (relative residuals, normwise and
# componentwise backward errors), PETSc's setup and solve times (PetscTime
# around KSPSetUp and KSPSolve) against heat's report (wall_s: the solve loop,
# its setup excluded) and both processes' elapsed time, on 1 core (PETSc 1
# MPI rank, heat --threads 1) and 2 cores (mpirun -np 2, heat's default 1
# rank × 2 threads), and checks that PETSc's u is heat's (1e-6 relative).
#   benchmarks/petsc.sh [N] [reps]        (defaults 1024, 3: about 2 minutes)
# PETSc configurations, all KSPCG:
#   a     PCMG, levels rediscretised (coarse k = mean of the fine cells' k),
#         PETSc's DMDA_Q0 interpolation, smoother SMOOTH below (1 SSOR sweep
#         pre and post); rtol 1e-5 (PETSc's default), 1e-10 and 1e-12 (about heat's stop:
#         componentwise backward error 1e-12)
#   a-cheb  the same with PETSc's default level smoother (Chebyshev/SOR ×2)
#   b     PCMG with Galerkin coarse operators PᵀAP, bilinear interpolation
#   c     hypre BoomerAMG (PETSc's defaults for it)
# and heat: mgcg and plain multigrid on the inclusion, multigrid on the
# uniform problem (PETSc: a at k = 1 beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1024}
reps=${2:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SMOOTH="-mg_levels_ksp_type richardson -mg_levels_pc_type sor -mg_levels_ksp_max_it 1"
CHEB="-mg_levels_ksp_type chebyshev -mg_levels_pc_type sor -mg_levels_ksp_max_it 2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Build: pkg-config's PETSc, else the petscvariables file.
if pkg-config --exists PETSc; then
	cflags=$(pkg-config --cflags PETSc) libs=$(pkg-config --libs PETSc)
else
	vars=${PETSC_DIR:-/usr/lib/petsc}/lib/petsc/conf/petscvariables
	cflags=$(sed -n 's/^PETSC_CC_INCLUDES = //p' "$vars") libs=$(sed -n 's/^PETSC_WITH_EXTERNAL_LIB = //p' "$vars")
fi
# shellcheck disable=SC2086
mpicc -O2 $cflags benchmarks/petsc/inclusion.c -o "$tmp/inclusion" $libs -lm
go build -o /tmp/heat-petsc ./cmd/heat
# hypre: whether this PETSc was configured with it (petscconf.h).
hypre=0
if echo '#include <petscconf.h>
PETSC_HAVE_HYPRE' | mpicc -E -P $cflags - 2>/dev/null | grep -qx ' *1'; then hypre=1; fi

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; avx flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|avx2|fma|avx512f)$' | xargs)"
echo "PETSc $(pkg-config --modversion PETSc 2>/dev/null || echo '?') ($(grep -m1 '^CC_FLAGS' /usr/lib/petsc/lib/petsc/conf/petscvariables 2>/dev/null | grep -o -- '-O[0-9]' | head -1) build), hypre: $([ $hypre = 1 ] && echo yes || echo no), $(mpirun --version | head -1), $(go version | cut -d' ' -f3), grid ${n}x${n}, $reps reps"

now() { date +%s.%N; }
# heat NAME THREADS [--set ...]: one run into a fresh folder; appends a
# record line "HEAT name threads elapsed report-path" to $tmp/records.
heat() {
	local name=$1 th=$2
	shift 2
	local d t0 t1
	d=$(mktemp -d -p "$tmp")
	t0=$(now)
	/tmp/heat-petsc run -c poisson-2d --set "grid.shape=[$n,$n]" --set run.tolerance=0 --set source.kind=constant --set source.value=-1 \
		--threads "$th" "$@" --out "$d" --overwrite -q
	t1=$(now)
	echo "HEAT $name $th $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $d" >>"$tmp/records"
	echo "$d"
}
# petsc NAME NP [options]: one run; appends "PETSC name np elapsed RESULT...".
petsc() {
	local name=$1 np=$2
	shift 2
	local t0 t1 out
	t0=$(now)
	out=$(mpirun -np "$np" "$tmp/inclusion" -n "$n" "$@")
	t1=$(now)
	echo "PETSC $name $np $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(grep '^RESULT' <<<"$out")" >>"$tmp/records"
	grep -v '^RESULT' <<<"$out" >"$tmp/log-$name-$np"
}
incl='material=[{region = "box", lo = [0.375, 0.375], hi = [0.625, 0.625], k = 1e6}]'
npy() { ls "$1"/snapshots/u-*.npy | tail -1; }

: >"$tmp/records"
for r in $(seq "$reps"); do
	for th in 1 2; do
		d=$(heat mgcg "$th" --set equation.solver=mgcg --set "$incl")
		[ "$r$th" = 12 ] && ref_incl=$(npy "$d")
		heat multigrid "$th" --set equation.solver=multigrid --set "$incl" >/dev/null
		d=$(heat uniform "$th" --set equation.solver=multigrid)
		[ "$r$th" = 12 ] && ref_unif=$(npy "$d")
	done
done
# Kept for -compare: heat's 2-thread snapshots of the first rep.
cp "$ref_incl" "$tmp/heat-inclusion.npy"
cp "$ref_unif" "$tmp/heat-uniform.npy"
C="-compare $tmp/heat-inclusion.npy"
for np in 1 2; do
	for r in $(seq "$reps"); do
		# shellcheck disable=SC2086
		{
			petsc a-1e-5 "$np" -config redisc $SMOOTH $C
			petsc a-1e-10 "$np" -config redisc $SMOOTH -ksp_rtol 1e-10 $C
			petsc a-1e-12 "$np" -config redisc $SMOOTH -ksp_rtol 1e-12 $C
			petsc b-1e-10 "$np" -config galerkin $SMOOTH -ksp_rtol 1e-10 $C
			if [ $hypre = 1 ]; then petsc c-1e-10 "$np" -config hypre -ksp_rtol 1e-10 $C; fi
		}
	done
	# shellcheck disable=SC2086
	{
		petsc a-cheb-1e-10 "$np" -config redisc $CHEB -ksp_rtol 1e-10 $C
		petsc b-1e-5 "$np" -config galerkin $SMOOTH $C
		if [ $hypre = 1 ]; then petsc c-1e-5 "$np" -config hypre $C; fi
		petsc a-uniform-1e-10 "$np" -config redisc -k_in 1 $SMOOTH -ksp_rtol 1e-10 -compare "$tmp/heat-uniform.npy"
	}
done

echo
echo "Where (a) stalls: the true residuals per CG iteration, 1 rank, rtol 1e-16 (the PC norm is PETSc's test):"
# shellcheck disable=SC2086
mpirun -np 1 "$tmp/inclusion" -n "$n" -config redisc $SMOOTH -ksp_rtol 1e-16 -ksp_max_it 30 -true_monitor | grep '^  it' |
	sed -E 's/  +/ /g; s/true \|r\|2\/\|b\|2/rel2/; s/\|r\|inf\/\|b\|inf/relinf/'

echo
echo "Smoothers as PETSc ran them (1 rank):"
for f in a-1e-10 a-cheb-1e-10 b-1e-10; do sed -n 2p "$tmp/log-$f-1" | sed "s/^ */  $f: /"; done
echo "  SMOOTH = $SMOOTH; a-cheb: $CHEB (PETSc's defaults); coarse: PETSc's default (LU; redundant LU on 2 ranks)"

python3 - "$tmp/records" "$tmp" <<'EOF'
import json, sys, statistics as st
recs, tmp = sys.argv[1], sys.argv[2]
heat, pet = {}, {}
for line in open(recs):
    f = line.split()
    if f[0] == "HEAT":
        name, th, el, d = f[1], int(f[2]), float(f[3]), f[4]
        r = json.load(open(d + "/report.json"))
        s = r.get("solver") or {}
        heat.setdefault((name, th), []).append(dict(el=el, wall=r["wall_s"], comp=r["per_rank"][0]["compute_s"],
            its=s.get("cycles", r["steps"]), cw=s.get("component_error"), bw=s.get("backward_error"),
            res=r["residual"], field=r["field"], status=r["status"]))
    else:
        name, np_, el = f[1], int(f[2]), float(f[3])
        kv = dict(x.split("=", 1) for x in f[5:])
        pet.setdefault((name, np_), []).append(dict(el=el, **kv))
med = lambda xs: st.median(xs)
def hrow(name, th):
    rs = heat[(name, th)]; r0 = rs[0]
    return dict(its=r0["its"], rel2=None, relinf=r0["res"], bw=r0["bw"], cw=r0["cw"], setup=med([r["el"] - r["wall"] for r in rs]),
                solve=med([r["wall"] for r in rs]), el=med([r["el"] for r in rs]), n=len(rs), total=None)
def prow(name, np_):
    rs = pet[(name, np_)]; r0 = rs[0]
    return dict(its=int(r0["its"]), rel2=float(r0["rel2"]), relinf=float(r0["relinf"]), bw=float(r0["backward"]), cw=float(r0["component"]),
                setup=med([float(r["t_hierarchy"]) + float(r["t_setup"]) for r in rs]), asm=med([float(r["t_assembly"]) for r in rs]),
                solve=med([float(r["t_solve"]) for r in rs]), el=med([r["el"] for r in rs]), n=len(rs), reason=r0["reason"], cmp=float(r0["cmp"]),
                total=med([float(r["t_assembly"]) + float(r["t_hierarchy"]) + float(r["t_setup"]) + float(r["t_solve"]) for r in rs]))
e = lambda v: "-" if v is None else f"{v:.1e}"
print()
print("Times in s, medians over the reps (n). PETSc: asm = fine A and b, setup = hierarchy (coarse DMDAs, P, coarse A) + KSPSetUp,")
print("solve = KSPSolve, total = asm + setup + solve. heat: solve = report wall_s (the solve loop and the final snapshot's write),")
print("setup = proc - wall_s (start, config, media, hierarchy, report). proc: the whole process's elapsed time (PETSc's includes")
print("mpirun's start and this program's accuracy diagnostics and gather). rel2, relinf: |b-Ax| / |b| in the 2- and max-norm")
print("(heat: its residual, max-norm); normwise, compwise: backward errors. its: CG iterations (heat multigrid: cycles).")
hdr = f"{'solver':<34}{'cores':>5}{'n':>3}{'its':>5}{'rel2':>9}{'relinf':>9}{'normwise':>10}{'compwise':>10}{'asm':>7}{'setup':>7}{'solve':>7}{'total':>7}{'proc':>7}"
print(hdr); print("-" * len(hdr))
rows = []
for cores in (1, 2):
    for name, label in (("mgcg", "heat mgcg (inclusion)"), ("multigrid", "heat multigrid (inclusion)"), ("uniform", "heat multigrid (uniform k)")):
        if (name, cores) in heat:
            r = hrow(name, cores); rows.append((label, cores, r))
    for name, label in (("a-1e-5", "PETSc a  PCMG redisc rtol 1e-5"), ("a-1e-10", "PETSc a  PCMG redisc rtol 1e-10"), ("a-1e-12", "PETSc a  PCMG redisc rtol 1e-12"), ("a-cheb-1e-10", "PETSc a  Chebyshev smoother 1e-10"),
                        ("b-1e-5", "PETSc b  PCMG Galerkin rtol 1e-5"), ("b-1e-10", "PETSc b  PCMG Galerkin rtol 1e-10"),
                        ("c-1e-5", "PETSc c  BoomerAMG rtol 1e-5"), ("c-1e-10", "PETSc c  BoomerAMG rtol 1e-10"), ("a-uniform-1e-10", "PETSc a  uniform k, rtol 1e-10")):
        if (name, cores) in pet:
            r = prow(name, cores); rows.append((label, cores, r))
for label, cores, r in rows:
    f2 = lambda v: "-" if v is None else f"{v:.3f}"
    print(f"{label:<34}{cores:>5}{r['n']:>3}{r['its']:>5}{e(r['rel2']):>9}{e(r['relinf']):>9}{e(r['bw']):>10}{e(r['cw']):>10}{f2(r.get('asm')):>7}{f2(r['setup']):>7}{f2(r['solve']):>7}{f2(r['total']):>7}{f2(r['el']):>7}")
print()
print("Ratios heat/PETSc (below 1: heat faster): solve = heat wall_s / KSPSolve; to-solution = heat's whole process / PETSc's")
print("asm + setup + solve (PETSc's start, diagnostics and output left out); proc = elapsed / elapsed:")
for cores in (1, 2):
    for hn, pn in (("mgcg", "a-1e-10"), ("mgcg", "a-1e-12"), ("mgcg", "b-1e-10"), ("mgcg", "c-1e-10"), ("mgcg", "a-1e-5"), ("multigrid", "a-1e-10"), ("multigrid", "c-1e-10"), ("uniform", "a-uniform-1e-10")):
        if (hn, cores) in heat and (pn, cores) in pet:
            h, p = hrow(hn, cores), prow(pn, cores)
            print(f"  {cores} core(s)  heat {hn:<10} / PETSc {pn:<16}  solve {h['solve'] / p['solve']:.3f}  to-solution {h['el'] / p['total']:.3f}  proc {h['el'] / p['el']:.3f}")
print()
print("Agreement with heat (PETSc's u against heat's 2-thread run: the report's field stats in double, the snapshot's field in float32):")
ok = True
for (name, np_), rs in sorted(pet.items()):
    r = rs[0]
    href = heat[("uniform" if "uniform" in name else "mgcg", 2)][0]["field"]
    dmax = abs(float(r["umax"]) - href["max"]) / href["max"]
    dmean = abs(float(r["umean"]) - href["mean"]) / href["mean"]
    dl2 = abs(float(r["ul2"]) - href["l2"]) / href["l2"]
    dmin = abs(float(r["umin"]) - href["min"]) / href["min"]
    worst = max(dmax, dmean, dl2, dmin, float(r["cmp"]))
    verdict = "agree" if worst < 1e-6 else ("loose tolerance" if "1e-5" in name else "DIFFER")
    ok = ok and (verdict != "DIFFER")
    print(f"  {name:<16} np {np_}  max u {float(r['umax']):.10g} (heat {href['max']:.10g})  rel diffs: max {dmax:.1e} mean {dmean:.1e} l2 {dl2:.1e} min {dmin:.1e} field {float(r['cmp']):.1e}  centre {float(r['ucentre']):.10g}  {verdict}")
print("all tight-tolerance solutions agree with heat to 1e-6" if ok else "SOME SOLUTIONS DIFFER FROM HEAT'S")
EOF
