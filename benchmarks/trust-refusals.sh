#!/usr/bin/env bash
# Trials of hostile and mistaken inputs (issue #35): each must end with the
# exit code given (2: refused at load, 1: a run failure named at its step,
# 0: runs), within 20 s, without a Go runtime dump, and leave any report it
# writes parseable. Prints one line per failure and "N passed, N failed".
#   benchmarks/trust-refusals.sh
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/heat" ./cmd/heat || exit 1
cd "$tmp"
pass=0 fail=0
t() {
	local want=$1 code
	shift
	rm -rf out
	timeout 20 ./heat run -q --out out "$@" >/dev/null 2>err.txt
	code=$?
	if [ "$code" = "$want" ] && ! grep -q "goroutine \|panic:" err.txt; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "exit $code, want $want: $*: $(head -c 300 err.txt)"
	fi
	if [ -f out/report.json ] && ! python3 -c "import json; json.load(open('out/report.json'))" 2>/dev/null; then
		fail=$((fail + 1))
		echo "the report does not parse: $*"
	fi
}
python3 - <<'PY'
p = '(' * 1000000 + 'x' + ')' * 1000000
open('parens.toml', 'w').write('[source]\nkind = "expr"\nexpr = "%s"\n' % p)
s = '[grid]\nshape = [64, 64]\n'
for i in range(3000):
    s += '[[output.probe]]\nname = "p%d"\nat = [%f, %f]\n' % (i, (i % 50 + 0.5) / 50, (i // 50 + 0.5) / 60)
open('probes.toml', 'w').write(s)
PY
lets=$(python3 -c "print(' '.join('let a%d = %s*1.0001 + x;' % (i, 'a%d' % (i - 1) if i else 'x') for i in range(40)) + ' a39')")
box='region = "box", lo = [0.0, 0.0], hi = [1.0, 1.0]'
t 2 --threads 65537
t 2 --set 'grid.shape=[9223372036854775807,1]'
t 2 --set 'grid.shape=[2097152,2097152,2097152]'
t 2 --set 'grid.length=[1e-300,1.0]'
t 2 --set 'grid.length=[1e300,1e300]'
t 2 --set "material=[{$box, k = 0.0}]"
t 2 --set "material=[{$box, k = 1e308}]"
t 2 --set "material=[{$box, fixed = 1.0}]"
t 0 --steps 20 --set 'material=[{region = "box", lo = [0.0, 0.0], hi = [0.5, 1.0], k = 1e154}, {region = "box", lo = [0.5, 0.0], hi = [1.0, 1.0], k = 3e155}]'
t 2 --set boundary.x_hi.kind=robin --set 'boundary.x_hi.h="-1"'
t 1 --steps 400 --set boundary.x_hi.kind=robin --set 'boundary.x_hi.h="t > 0.00002 ? -100 : 1"' --set boundary.x_hi.value=0
t 2 --set 'boundary.x_lo.value="0/0"'
t 2 --set 'boundary.x_lo.value="1/0"'
t 0 --dry-run --set source.kind=expr --set "source.expr=\"$lets\""
t 0 --steps 5 --set source.kind=expr --set "source.expr=\"$lets\""
t 2 --set 'material=[{region = "box", lo = [0.0, 0.4], hi = [1.0, 0.4001], k = 5.0}]'
t 2 --set grid.ghost=2 --set boundary.x_hi.kind=robin --set boundary.x_hi.h=5
t 0 -c two-materials-2d --set initial.value=0.0 --set 'grid.shape=[64,64]' --set run.t_end=0.01
t 2 -c parens.toml
t 0 --dry-run -c probes.toml
echo "hostile and mistaken inputs: $pass passed, $fail failed"
