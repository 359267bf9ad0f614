#!/bin/sh
# Regenerates the README's gallery, docs/gallery/*.png: each picture is the
# final snapshot of an example problem (configs/*.toml, run as `heat run -c
# NAME`), drawn small. Run it from anywhere: sh docs/gallery/make.sh
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/heat" ./cmd/heat)

# shot NAME ARGS...: run with ARGS, keep the final snapshot as NAME.png.
shot() {
	name=$1
	shift
	"$work/heat" run -q --out "$work/$name" --set output.image_size=320 "$@"
	last=$(ls "$work/$name"/snapshots/u-*.png | sort | tail -n 1)
	cp "$last" "$here/$name.png"
	echo "$here/$name.png: $*"
}

shot default
shot hotplate-2d -c hotplate-2d --set output.cmap=inferno
shot cube-3d -c cube-3d --set output.slice=y=mid
shot poisson-2d -c poisson-2d
shot periodic-2d -c periodic-2d --set output.cmap=coolwarm
shot implicit-heat-2d -c implicit-heat-2d --set output.cmap=inferno
shot poisson-3d -c poisson-3d --set output.slice=x=0.25
# A 2:1 domain of cells that are not square (1/120 by 1/160): the disc stays round.
shot wide-2d --set grid.shape=[160,240] --set grid.length=[1,2] --set output.label=T
