package run

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"heat/internal/atomicfile"
	"heat/internal/lockfile"
	"heat/io/config"
	"heat/io/report"
	"heat/io/runplot"
)

// A parameter study: one run per point of the product of the values the
// swept keys take, each in a folder of its own under the study's, and one
// table of what every run gave.

// SweepFile is the study's table, in its folder; sweepLock the lock a
// study holds on its folder.
const (
	SweepFile = "sweep.csv"
	sweepLock = ".heat-sweep.lock"
)

// SweepOptions are a study: the runs' config (Flags: the file, the --set
// that are not swept, the dedicated flags; Flags.Out the study's folder,
// "" for heat-sweep), the swept keys in order with their values (TOML
// values, as --set takes them), and what each run is otherwise given.
type SweepOptions struct {
	Flags *config.Flags
	Axes  []SweepAxis
	// Jobs is how many points run at once (each in this process, on its
	// own ranks and threads); 0 or 1 one at a time.
	Jobs int
	// Plot names a column of the table (a figure: max, mean, wall_s,
	// flux_held, probe_NAME, …) to draw against the swept key Against
	// ("": the first swept key) into SweepPlotFile; "" draws nothing.
	Plot, Against string
	Overwrite     bool
	Quiet         bool
	Stdout        io.Writer
	Stderr        io.Writer
	Program       string
	Args          []string
}

// SweepAxis is one swept key and its values.
type SweepAxis struct {
	Key    string
	Values []string
}

// SplitSweep takes the swept keys out of --set arguments: a key=[v1, v2,
// …] whose key is a config key that is not an array (or, for an array key
// such as grid.shape, an array of arrays) is swept over its values; every
// other --set is left for each run.
func SplitSweep(sets []string) (rest []string, axes []SweepAxis, err error) {
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		info := config.KeysWith(key)
		if !ok || len(info) != 1 || info[0].Key != key || !strings.HasPrefix(val, "[") {
			rest = append(rest, s)
			continue
		}
		var doc struct{ V []any }
		if _, err := toml.Decode("V = "+val, &doc); err != nil {
			rest = append(rest, s) // not an array of values: the run's own check names it
			continue
		}
		array := strings.HasPrefix(info[0].Type, "array")
		if array && (len(doc.V) == 0 || !isArray(doc.V[0])) {
			rest = append(rest, s) // one value of an array key
			continue
		}
		if len(doc.V) == 0 {
			return nil, nil, UsageError{fmt.Errorf("--set %s: a swept key needs at least one value", s)}
		}
		ax := SweepAxis{Key: key}
		for _, v := range doc.V {
			text, err := tomlValue(v)
			if err != nil {
				return nil, nil, UsageError{fmt.Errorf("--set %s: %v", s, err)}
			}
			ax.Values = append(ax.Values, text)
		}
		for _, other := range axes {
			if other.Key == key {
				return nil, nil, UsageError{fmt.Errorf("--set %s: %s is swept twice", s, key)}
			}
		}
		axes = append(axes, ax)
	}
	return rest, axes, nil
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

// tomlValue writes v as a TOML value.
func tomlValue(v any) (string, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
		return "", err
	}
	_, text, _ := strings.Cut(strings.TrimSpace(b.String()), "= ")
	return text, nil
}

// MaxSweepPoints bounds a study's runs; MaxSweepJobs the points run at
// once.
const (
	MaxSweepPoints = 10000
	MaxSweepJobs   = 256
)

// sweepFigures are the table's columns of numbers a study's plot may draw
// (beside probe_NAME, a probe's last value).
var sweepFigures = []string{"steps", "sim_time", "wall_s", "min", "max", "mean", "energy_residual", "flux_held", "flux_net"}

// Sweep runs the study: every point's run (a failed one is recorded and
// the study goes on), then the table, SweepFile, in the study's folder,
// and on Stdout. It fails with a usage error before any run for a study
// with no swept key, too many points or a table already there (without
// Overwrite), and with the first run's failure (exit 1) after writing the
// table when some point failed.
func Sweep(ctx context.Context, o SweepOptions) error {
	if len(o.Axes) == 0 {
		return UsageError{errors.New("sweep: no key to sweep: give one as --set key=[v1,v2,...]")}
	}
	points := 1
	for _, a := range o.Axes {
		points *= len(a.Values)
		if points > MaxSweepPoints {
			return UsageError{fmt.Errorf("sweep: more than %d points", MaxSweepPoints)}
		}
	}
	if o.Jobs < 0 || o.Jobs > MaxSweepJobs {
		return UsageError{fmt.Errorf("sweep: --jobs %d: give 1 to %d points at once", o.Jobs, MaxSweepJobs)}
	}
	against, err := o.plotAxis()
	if err != nil {
		return err
	}
	dir := o.Flags.Out
	if dir == "" {
		dir = "heat-sweep"
	}
	if err := refuseShared("--out", dir, "study", "--out DIR"); err != nil {
		return err
	}
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return UsageError{fmt.Errorf("sweep: --out %s is not a folder (a link or another file): heat writes a study into a folder of its own", dir)}
	}
	table := filepath.Join(dir, SweepFile)
	outputs := []string{table}
	if o.Plot != "" {
		outputs = append(outputs, filepath.Join(dir, runplot.SweepFile))
	}
	// What the study writes in its folder: never a link, a FIFO or a
	// folder in its place, and an earlier study's only with --overwrite.
	for _, path := range outputs {
		if st, err := os.Lstat(path); err == nil {
			switch {
			case !st.Mode().IsRegular():
				return UsageError{fmt.Errorf("sweep: %s is not a regular file (a link, a FIFO, a folder): heat does not replace it, even with --overwrite; give another --out", path)}
			case !o.Overwrite:
				return UsageError{fmt.Errorf("sweep: %s holds a study already (%s): give another --out, or --overwrite", dir, filepath.Base(path))}
			}
		}
	}
	// Every point's config is checked before the first run; their notes
	// (keys a run ignores) are told once, not once a point.
	var notes []string
	for p := range points {
		f := o.point(p, dir)
		cfg, err := f.Resolve()
		if err != nil {
			return UsageError{fmt.Errorf("sweep point %d (%s): %w", p, o.values(p), err)}
		}
		if err := o.plotFigure(cfg); err != nil {
			return err
		}
		for _, n := range f.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	log := newLogger(o.Stderr, true)
	for _, n := range notes {
		log.warn("%s", n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	// One study a folder: a second one there at once would run into the
	// first's points and replace its table.
	lock, err := lockfile.Take(dir, sweepLock, "sweep")
	if err != nil {
		if errors.Is(err, lockfile.ErrLocked) {
			return UsageError{fmt.Errorf("sweep: %v: another study is running there; wait for it, or give this one another --out", err)}
		}
		return UsageError{fmt.Errorf("sweep: %s: %v", dir, err)}
	}
	defer lock.Unlock()
	header := []string{"point", "dir"}
	for _, a := range o.Axes {
		header = append(header, a.Key)
	}
	header = append(header, "status", "exit_code", "steps", "sim_time", "wall_s", "min", "max", "mean", "sha256", "energy_residual", "flux_held", "flux_net")
	rows := make([][]string, points)
	probes := make([][2][]string, points) // each point's probe names and last values
	errs := make([]error, points)
	var mu sync.Mutex // the progress lines
	done := 0
	runPoint := func(p int) {
		f := o.point(p, dir)
		out := f.Out
		err := Run(ctx, Options{Flags: f, Quiet: true, NoNotes: true, Overwrite: o.Overwrite, Stdout: io.Discard, Stderr: o.Stderr,
			Program: o.Program, Args: o.Args})
		row := []string{strconv.Itoa(p), out}
		row = append(row, o.valuesOf(p)...)
		row = append(row, pointResult(out, ExitCode(err))...)
		names, last := lastProbes(filepath.Join(out, ProbesFile))
		rows[p], probes[p], errs[p] = row, [2][]string{names, last}, err
		if !o.Quiet {
			mu.Lock()
			done++
			fmt.Fprintf(o.Stderr, "sweep: point %d (%d of %d done; %s): %s\n", p, done, points, o.values(p), row[len(o.Axes)+2])
			mu.Unlock()
		}
	}
	// Points in order, Jobs at a time; a cancelled study starts no more.
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(o.Jobs, points)) {
		wg.Go(func() {
			for p := range next {
				runPoint(p)
			}
		})
	}
	for p := range points {
		if ctx.Err() != nil {
			break
		}
		next <- p
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var firstErr error
	for p, err := range errs {
		if err != nil {
			firstErr = fmt.Errorf("sweep point %d (%s): %w", p, o.values(p), err)
			break
		}
	}
	// The probes' columns: those of the first point that has probes, filled
	// where a point's probes are the same.
	var probeNames []string
	for _, pr := range probes {
		if pr[0] != nil {
			probeNames = pr[0]
			break
		}
	}
	for p, pr := range probes {
		if pr[0] != nil && strings.Join(pr[0], ",") == strings.Join(probeNames, ",") {
			rows[p] = append(rows[p], pr[1]...)
		}
	}
	for _, n := range probeNames {
		header = append(header, "probe_"+n)
	}
	if err := atomicfile.Write(table, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(header)
		for _, r := range rows {
			cw.Write(r)
		}
		cw.Flush()
		return cw.Error()
	}); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	var plotPath string
	if o.Plot != "" {
		plotPath = filepath.Join(dir, runplot.SweepFile)
		if err := o.writePlot(plotPath, against, header, rows); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	if !o.Quiet {
		printTable(o.Stdout, header, rows)
		fmt.Fprintf(o.Stdout, "table: %s\n", table)
		if plotPath != "" {
			fmt.Fprintf(o.Stdout, "plot: %s\n", plotPath)
		}
	}
	return firstErr
}

// plotAxis is the index of the swept key the plot draws against (-1: no
// plot), a usage error for a key not swept or with values that are not
// numbers.
func (o *SweepOptions) plotAxis() (int, error) {
	if o.Plot == "" {
		if o.Against != "" {
			return -1, UsageError{fmt.Errorf("sweep: --against %s without --plot: name the figure to draw (one of %s, probe_NAME)", o.Against, strings.Join(sweepFigures, ", "))}
		}
		return -1, nil
	}
	a := 0
	if o.Against != "" {
		a = slices.IndexFunc(o.Axes, func(x SweepAxis) bool { return x.Key == o.Against })
		if a < 0 {
			keys := make([]string, len(o.Axes))
			for i, x := range o.Axes {
				keys[i] = x.Key
			}
			return -1, UsageError{fmt.Errorf("sweep: --against %s: not a swept key (swept: %s)", o.Against, strings.Join(keys, ", "))}
		}
	}
	for _, v := range o.Axes[a].Values {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return -1, UsageError{fmt.Errorf("sweep: --plot draws against %s, whose value %s is not a number; give --against a swept key of numbers", o.Axes[a].Key, v)}
		}
	}
	return a, nil
}

// plotFigure refuses a --plot that names no figure of a point's table.
func (o *SweepOptions) plotFigure(cfg *config.Config) error {
	if o.Plot == "" || slices.Contains(sweepFigures, o.Plot) {
		return nil
	}
	if name, ok := strings.CutPrefix(o.Plot, "probe_"); ok &&
		slices.ContainsFunc(cfg.Output.Probe, func(p config.Probe) bool { return p.Name == name }) {
		return nil
	}
	return UsageError{fmt.Errorf("sweep: --plot %s: not a figure of the table (one of %s, or probe_NAME for a probe the config names)", o.Plot, strings.Join(sweepFigures, ", "))}
}

// writePlot draws the table's column o.Plot against swept key a, a line
// for each combination of the other keys' values.
func (o *SweepOptions) writePlot(path string, a int, header []string, rows [][]string) error {
	col := slices.Index(header, o.Plot)
	var series []runplot.SweepSeries
	index := map[string]int{}
	for p, r := range rows {
		var others []string
		for i, v := range o.valuesOf(p) {
			if i != a {
				others = append(others, o.Axes[i].Key+" = "+v)
			}
		}
		name := strings.Join(others, ", ")
		k, ok := index[name]
		if !ok {
			k, index[name] = len(series), len(series)
			series = append(series, runplot.SweepSeries{Name: name})
		}
		x, _ := strconv.ParseFloat(o.valuesOf(p)[a], 64)
		y := math.NaN()
		if col >= 0 && col < len(r) {
			if v, err := strconv.ParseFloat(r[col], 64); err == nil {
				y = v
			}
		}
		series[k].X, series[k].Y = append(series[k].X, x), append(series[k].Y, y)
	}
	return runplot.WriteSweep(path, o.Axes[a].Key, o.Plot, series)
}

// point is the Flags of point p: the study's, each swept key's value of
// it last, its own folder.
func (o *SweepOptions) point(p int, dir string) *config.Flags {
	f := *o.Flags
	f.Sets = append([]string(nil), o.Flags.Sets...)
	for i, v := range o.valuesOf(p) {
		f.Sets = append(f.Sets, o.Axes[i].Key+"="+v)
	}
	// Its folder both ways: --out where the study was given one (the flag
	// is over --set), output.dir otherwise.
	f.Out = filepath.Join(dir, fmt.Sprintf("point-%04d", p))
	f.Sets = append(f.Sets, "output.dir="+strconv.Quote(f.Out))
	return &f
}

// valuesOf are point p's values of the swept keys, the last key fastest.
func (o *SweepOptions) valuesOf(p int) []string {
	vals := make([]string, len(o.Axes))
	for i := len(o.Axes) - 1; i >= 0; i-- {
		n := len(o.Axes[i].Values)
		vals[i] = o.Axes[i].Values[p%n]
		p /= n
	}
	return vals
}

// values are point p's values as messages name them.
func (o *SweepOptions) values(p int) string { return strings.Join(o.valuesOf(p), ", ") }

// pointResult is the table's columns of a run's report in out.
func pointResult(out string, code int) []string {
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	var r report.Report
	if err != nil || json.Unmarshal(data, &r) != nil {
		return []string{"no report", strconv.Itoa(code), "", "", "", "", "", "", "", "", "", ""}
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
	res, held, net := "", "", ""
	if r.EnergyBalance != nil {
		res = f(float64(r.EnergyBalance.RelativeResidual))
	}
	if r.Flux != nil {
		held, net = f(float64(r.Flux.Held)), f(float64(r.Flux.Net))
	}
	return []string{r.Status, strconv.Itoa(code), strconv.Itoa(r.Steps), f(float64(r.SimTime)), f(r.WallS),
		f(float64(r.Field.Min)), f(float64(r.Field.Max)), f(float64(r.Field.Mean)), r.Field.SHA256, res, held, net}
}

// lastProbes are the probe names of a probes.csv and its last row's
// values (nil, nil where there is none).
func lastProbes(path string) (names, last []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[0]) < 3 {
		return nil, nil
	}
	return recs[0][2:], recs[len(recs)-1][2:]
}

// printTable writes rows under header in aligned columns, leaving out the
// folder and the fingerprint (they are in the CSV).
func printTable(w io.Writer, header []string, rows [][]string) {
	skip := map[string]bool{"dir": true, "sha256": true}
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len(h)
		for _, r := range rows {
			if i < len(r) {
				width[i] = max(width[i], len(r[i]))
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, h := range header {
			if skip[h] {
				continue
			}
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			fmt.Fprintf(&b, "%-*s  ", width[i], c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
}
