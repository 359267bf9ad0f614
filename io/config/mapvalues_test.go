package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// The maps' values are not read by Resolve (a map is as large as the grid,
// and the run checks its memory first); CheckMapValues reads them and
// names a bad one as Resolve names every other mistake: the source that
// set the key, the key, the file and the cell.
func TestMapValuesCheckedApart(t *testing.T) {
	bad := make([]float64, 64*64)
	for i := range bad {
		bad[i] = 1
	}
	bad[3*64+7] = -1
	negative := npyFile(t, "neg-k.npy", 64, 64, bad)
	bad[3*64+7] = 0
	zero := npyFile(t, "zero-rc.npy", 64, 64, bad)
	for _, c := range []struct {
		file string   // the text after [grid] shape = [64, 64]
		sets []string // --set, after the file
		want string   // "FILE" stands for the config file's path
	}{
		{"[maps]\nk = " + fmt.Sprintf("%q", negative) + "\n", nil, "FILE: maps.k: " + negative + ": cell [3 7] is -1 (k must be finite and >= 0)"},
		{"[maps]\nrho_c = " + fmt.Sprintf("%q", zero) + "\n", nil, "FILE: maps.rho_c: " + zero + ": cell [3 7] is 0 (rho_c must be finite and > 0)"},
		{"", []string{"maps.k=" + negative}, "--set maps.k=" + negative + ": maps.k: " + negative + ": cell [3 7] is -1 (k must be finite and >= 0)"},
		{"", []string{"maps={rho_c=\"" + zero + "\"}"}, "--set maps={rho_c=\"" + zero + "\"}: maps.rho_c: " + zero + ": cell [3 7] is 0 (rho_c must be finite and > 0)"},
	} {
		p := writeFile(t, "m.toml", "[grid]\nshape = [64, 64]\n"+c.file)
		args := []string{"-c", p}
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f := AddFlags(fs)
		require.NoError(t, fs.Parse(args))
		cfg, err := f.Resolve()
		require.NoError(t, err, "Resolve reads no map's values")
		err = f.CheckMapValues(context.Background(), cfg)
		var ce *Error
		require.ErrorAs(t, err, &ce)
		require.EqualError(t, err, strings.ReplaceAll(c.want, "FILE", p))

		// Stopped before it reads: the stop's cause, not a mistake.
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := errors.New("stop")
		cancel(stop)
		require.ErrorIs(t, f.CheckMapValues(ctx, cfg), stop)
	}
}
