#!/usr/bin/env bash
# Trials of a run's inputs against what it removes and writes (issue #35):
#   overwrite  a run into a folder, then two --overwrite runs that read
#              their input from that folder: initial.path = one of its
#              checkpoints (a step, latest, the checkpoints folder, the
#              output folder) and maps.k = its snapshot plane (.npy; half
#              the time through a link). Each must be refused (exit 2,
#              naming the key), every file of the folder unchanged, and its
#              checkpoints must still verify.
#   kill-9     a run reading its initial field from another run's
#              checkpoint, killed with SIGKILL at a random moment; then its
#              restart (if it left a checkpoint) or a rerun (--overwrite)
#              must succeed with the straight run's field (sha256), and the
#              source run's files must be unchanged and its checkpoints
#              verify (heat inspect --verify).
#   table      a run whose face value and source amplitude are time tables,
#              checkpointed halfway; one of its tables (or neither) then
#              changes at random (a value, a row added, the file removed);
#              the restart must reproduce the straight run bit for bit when
#              nothing changed, and be refused (exit 2, naming the file)
#              otherwise; with --allow-input-changes it must go on and the
#              report must name the file.
# Prints one line per failure and "N passed, N failed" per kind.
#   benchmarks/trust-inputs.sh [trials]      (default 20 of each)
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/heat" ./cmd/heat
heat=$tmp/heat

# The digest of every file under a folder but the locks (a refused run
# rewrites the lock it took).
tree() { (cd "$1" && find . -type f ! -name .lock ! -name .heat.lock -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
# Every checkpoint under a checkpoints folder verifies.
verify() {
	local c
	for c in "$1"/step-*; do
		"$heat" inspect --verify "$c" >/dev/null 2>&1 || return 1
	done
}
# The final field's sha256 of a run's report.
sha() { grep -A1 '"field": {' "$1/report.json" | sed -n 's/.*"sha256": "\([0-9a-f]*\)".*/\1/p'; }

small=(--set grid.shape=[32,32] --steps 20 --set checkpoint.every=10 --set checkpoint.keep=0)
pass=0 fail=0
for i in $(seq "$trials"); do
	self=$tmp/ow$i/self
	"$heat" run -q --out "$self" "${small[@]}"
	before=$(tree "$self")
	picks=("$self/checkpoints/step-00000010" "$self/checkpoints/step-00000020" "$self/checkpoints/latest" "$self/checkpoints" "$self")
	init=${picks[RANDOM % ${#picks[@]}]}
	plane=$self/snapshots/u-00000020.npy
	if ((RANDOM % 2)); then
		# (A link to a folder is refused as an input whatever it holds.)
		ln -s "$plane" "$tmp/ow$i/k-link.npy" && plane=$tmp/ow$i/k-link.npy
	fi
	ok=1
	for try in "initial.path=$init --set initial.kind=file" "maps.k=$plane"; do
		# shellcheck disable=SC2086
		if "$heat" run -q --out "$self" --overwrite "${small[@]}" --set $try 2>"$tmp/err"; then
			code=0
		else
			code=$?
		fi
		key=${try%%=*}
		if [ "$code" != 2 ] || ! grep -q -- "--overwrite: $key " "$tmp/err"; then
			echo "overwrite trial $i: $try: exit $code: $(cat "$tmp/err")"
			ok=0
		fi
		if [ "$(tree "$self")" != "$before" ]; then
			echo "overwrite trial $i: $try: the folder changed"
			ok=0
		fi
	done
	verify "$self/checkpoints" || { echo "overwrite trial $i: a checkpoint no longer verifies"; ok=0; }
	if ((ok)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "overwrite with inputs from the same folder: $pass passed, $fail failed"

long=(--set grid.shape=[256,256] --steps 6000 --set checkpoint.every=700 --set checkpoint.keep=0 --set output.formats=[] --set output.diagnostics_every=0)
src=$tmp/source
"$heat" run -q --out "$src" "${long[@]}"
srcTree=$(tree "$src")
from=(--set initial.kind=file --set initial.path="$src/checkpoints/step-00002800")
"$heat" run -q --out "$tmp/straight" "${long[@]}" "${from[@]}"
want=$(sha "$tmp/straight")
pass=0 fail=0 restarts=0 reruns=0
for i in $(seq "$trials"); do
	out=$tmp/k$i
	"$heat" run -q --out "$out" "${long[@]}" "${from[@]}" 2>/dev/null &
	pid=$!
	# A quarter of the kills in the first 0.1 s (the start: the manifest,
	# the first checkpoint), the others anywhere in the first second.
	if ((RANDOM % 4 == 0)); then ms=$((RANDOM % 100)); else ms=$((RANDOM % 1000)); fi
	sleep "$(printf '0.%03d' "$ms")"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	ok=1
	if [ -n "$(ls "$out/checkpoints" 2>/dev/null | grep -E '^step-[0-9]+$' || true)" ]; then
		how=restart restarts=$((restarts + 1))
		"$heat" run -q --restart "$out" 2>"$tmp/err" || { echo "kill-9 trial $i: the restart failed: $(cat "$tmp/err")"; ok=0; }
	else
		how=rerun reruns=$((reruns + 1))
		"$heat" run -q --out "$out" --overwrite "${long[@]}" "${from[@]}" 2>"$tmp/err" || { echo "kill-9 trial $i: the rerun failed: $(cat "$tmp/err")"; ok=0; }
	fi
	if ((ok)) && [ "$(sha "$out")" != "$want" ]; then
		echo "kill-9 trial $i: the $how's field differs from the straight run's"
		ok=0
	fi
	[ "$(tree "$src")" = "$srcTree" ] || { echo "kill-9 trial $i: the source run's files changed"; ok=0; }
	verify "$src/checkpoints" || { echo "kill-9 trial $i: a source checkpoint no longer verifies"; ok=0; }
	if ((ok)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "kill -9 of a run reading a checkpoint: $pass passed, $fail failed ($restarts restarted from their checkpoint, $reruns rerun)"

pass=0 fail=0 same=0 changed=0
for i in $(seq "$trials"); do
	d=$tmp/tab$i
	mkdir -p "$d"
	printf 't,value\n0,1\n0.01,3\n' >"$d/wall.csv"
	printf 't,value\n0,0\n0.005,2\n' >"$d/power.csv"
	tabs=(--set grid.shape=[24,20] --set "boundary.x_lo.value={table=\"$d/wall.csv\"}" --set source.kind=constant
		--set source.value=1 --set "source.amplitude={table=\"$d/power.csv\"}")
	"$heat" run -q "${tabs[@]}" --steps 40 --out "$d/straight"
	"$heat" run -q "${tabs[@]}" --steps 20 --set checkpoint.final=true --out "$d/half"
	file=$d/wall.csv
	((RANDOM % 2)) && file=$d/power.csv
	case $((RANDOM % 4)) in
	0) what=none ;;
	1) what=value && sed -i '$ s/,\([0-9]*\)$/,\1.5/' "$file" ;;
	2) what=row && printf '1,4\n' >>"$file" ;;
	3) what=removed && rm "$file" ;;
	esac
	ok=1
	if "$heat" run -q --restart "$d/half" --steps 40 2>"$tmp/err"; then code=0; else code=$?; fi
	if [ "$what" = none ]; then
		same=$((same + 1))
		if [ "$code" != 0 ] || [ "$(sha "$d/half")" != "$(sha "$d/straight")" ]; then
			echo "table trial $i: unchanged tables: exit $code, or the field differs: $(cat "$tmp/err")"
			ok=0
		fi
	else
		changed=$((changed + 1))
		if [ "$code" != 2 ] || ! grep -q -- "$file" "$tmp/err"; then
			echo "table trial $i: $what of $file: exit $code: $(cat "$tmp/err")"
			ok=0
		fi
		if [ "$what" != removed ]; then
			if ! "$heat" run -q --restart "$d/half" --steps 40 --allow-input-changes 2>"$tmp/err" ||
				! grep -q -- "$file" "$d/half/report.json"; then
				echo "table trial $i: --allow-input-changes after $what of $file: $(cat "$tmp/err")"
				ok=0
			fi
		fi
	fi
	if ((ok)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "restart after a changed table: $pass passed, $fail failed ($same unchanged, $changed changed)"
