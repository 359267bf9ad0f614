package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// floatKeys lists the dotted key of every float64 and []float64 field of
// the schema, per-face tables included, with its slice-ness.
func floatKeys(t reflect.Type, prefix string, out map[string]bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, name := range tagsOf(t) {
		f, _ := fieldByTag(t, name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			floatKeys(ft, prefix+name+".", out)
		case ft.Kind() == reflect.Float64:
			out[prefix+name] = false
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Float64:
			out[prefix+name] = true
		}
	}
}

// Every float key of the schema refuses NaN and ±Inf, whether the run
// uses it or not, naming the key and the value; the list of keys comes
// from the schema, so a new key is covered without a new row.
func TestNonFiniteRefusedInEveryFloatKey(t *testing.T) {
	keys := map[string]bool{}
	floatKeys(configType, "", keys)
	require.Contains(t, keys, "source.radius")
	require.Contains(t, keys, "boundary.x_lo.value")
	require.Contains(t, keys, "output.range")
	for key, slice := range keys {
		if strings.HasPrefix(key, "boundary.z_") {
			continue // a 2D grid has no z faces; the x and y faces stand for them
		}
		for _, bad := range []string{"nan", "inf", "-inf"} {
			val := bad
			if slice {
				val = "[0.25, " + bad + "]"
			}
			set := key + "=" + val
			_, err := Load("", []string{set})
			var ce *Error
			require.ErrorAs(t, err, &ce, set)
			require.Equal(t, key, ce.Key, "%s: %v", set, err)
			require.Contains(t, err.Error(), "--set "+set, set)
			require.Contains(t, err.Error(), bad, set)
			require.Contains(t, err.Error(), "finite", set)
		}
	}
	// A 3D grid's z faces too, from a file.
	p := writeFile(t, "z.toml", "[grid]\nshape = [8, 8, 8]\n[boundary.z_hi]\nvalue = nan\n")
	_, err := Load(p, nil)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "boundary.z_hi.value", ce.Key, "%v", err)
	require.Contains(t, err.Error(), p)
}
