package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every key of the schema has a description (the comment on its field),
// and a default where Default sets one; each key's path is the loader's:
// setting it to its default loads.
func TestEveryKeyDescribed(t *testing.T) {
	keys := Keys()
	require.Greater(t, len(keys), 90)
	seen := map[string]bool{}
	for _, k := range keys {
		require.False(t, seen[k.Key], "%s listed twice", k.Key)
		seen[k.Key] = true
		require.NotEmpty(t, k.Doc, "%s has no description: write one on its field in types.go", k.Key)
		require.NotContains(t, k.Doc, "\t", k.Key)
		require.NotEmpty(t, k.Type, k.Key)
		require.NotEmpty(t, k.Section, k.Key)
		if k.Default == "" || strings.Contains(k.Key, "[]") {
			continue
		}
		_, err := Load("", []string{k.Key + "=" + k.Default})
		require.NoError(t, err, "--set %s=%s", k.Key, k.Default)
	}
	for _, want := range []string{"grid.shape", "boundary.x_lo.h", "material[].fixed", "output.probe[].at", "maps.missing", "multigrid.gather_cells"} {
		require.True(t, seen[want], want)
	}
	// Every leaf field of the schema is a key.
	var count func(t reflect.Type) int
	count = func(ty reflect.Type) int {
		if ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		n := 0
		for _, name := range tagsOf(ty) {
			f, _ := fieldByTag(ty, name)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != valueType && ft != shardType && ft != stepType:
				n += count(ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				n += count(ft.Elem())
			default:
				n++
			}
		}
		return n
	}
	require.Equal(t, count(configType), len(keys))
}

// A key's facts: its default is Default's, its restart rule
// RestartMutable's, its units the field's.
func TestKeyFacts(t *testing.T) {
	byKey := map[string]KeyInfo{}
	for _, k := range Keys() {
		byKey[k.Key] = k
	}
	require.Equal(t, "[512,512]", byKey["grid.shape"].Default)
	require.Equal(t, `"dirichlet"`, byKey["boundary.kind"].Default)
	require.Equal(t, `"auto"`, byKey["checkpoint.shard"].Default)
	require.Equal(t, "", byKey["grid.length"].Default, "filled from the grid when the config resolves")
	require.Equal(t, "integer", byKey["run.steps"].Type)
	require.Equal(t, "value (number, expression or table)", byKey["boundary.h"].Type)
	require.Equal(t, "time", byKey["run.t_end"].Units)
	require.Equal(t, "length", byKey["material[].lo"].Units)
	for key, restart := range map[string]bool{"run.steps": true, "grid.ghost": true, "output.probe[].name": true,
		"checkpoint.every": true, "grid.shape": false, "equation.dt": false, "material[].k": false, "boundary.x_hi.value": false} {
		require.Equal(t, restart, byKey[key].Restart, key)
	}
	require.Contains(t, byKey["boundary.x_lo.kind"].Table, "one face")
	require.Len(t, KeysWith("boundary.x_lo"), 3)
	require.Len(t, KeysWith("run.t_end"), 1)
	require.Equal(t, KeysWith("material"), KeysWith("material[]"))
	require.Empty(t, KeysWith("run.t"), "a prefix is whole parts of a key")
	require.Len(t, KeysWith(""), len(Keys()))
}

// A profile key a layer gives that the kind does not read is warned of,
// naming the key, where it came from and what the kind reads; the built-in
// problem's own keys are not.
func TestUnusedProfileKeysWarned(t *testing.T) {
	f := &Flags{Sets: []string{"source.kind=expr", `source.expr="x"`, "source.value=5.0", "initial.kind=constant"}}
	_, err := f.Resolve()
	require.NoError(t, err)
	var warned []string
	for _, n := range f.Notes {
		if strings.Contains(n, "is not read by") {
			warned = append(warned, n)
		}
	}
	require.Equal(t, []string{`source.value (--set source.value=5.0) is not read by source.kind = "expr", which reads its expr: the run ignores it`}, warned)
}

// output.probe_time converts between known time units only.
func TestProbeTimeNeedsKnownUnits(t *testing.T) {
	for _, sets := range [][]string{{"output.probe_time=h"}, {"output.probe_time=fortnight", `output.units={time = "s"}`}} {
		_, err := Load("", sets)
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", sets)
		require.Equal(t, "output.probe_time", ce.Key)
	}
	_, err := Load("", []string{"output.probe_time=h", `output.units={time = "min"}`})
	require.NoError(t, err)
}
