package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"heat/decomp"
)

// Probe is one [[output.probe]] table: a point whose value the run records
// in probes.csv, the column named Name, every output.probe_every steps.
type Probe struct {
	// `[[output.probe]]` tables (or `output.probe = [{name = "s1", at = [0.5, 0.25]}]`):
	// points whose values go to `<out>/probes.csv`, a column each. name heads the column:
	// unique, one line, no comma or double quote, no space at either end, not `step` or `time`
	Name string `toml:"name" json:"name"`
	// the point in physical coordinates, C order (`[y, x]`, `[z, y, x]`), inside the domain
	// [0, length] on every axis (outside is refused, exit 2). The value interpolates between
	// cell centres (see "Probes")
	At []float64 `toml:"at" json:"at" unit:"length"`
}

// probeKey is the key of field of the i-th probe, output.probe[i].field.
// MaxProbeRows bounds the rows (snapshots, checkpoints) output.probe_dt
// (snapshot_dt, checkpoint.every_time) may ask for.
const MaxProbeRows = 1_000_000

// byTime checks a schedule by simulated time (key, of what, its interval
// dt; by steps the key instead): not negative, for steps that choose
// themselves only (their steps land on its times), at most MaxProbeRows
// to run.t_end.
func (k *checker) byTime(key, what string, dt float64, instead string) *Error {
	switch {
	case !(dt >= 0) || math.IsInf(dt, 0):
		return k.bad(key, "must be >= 0 and finite (got %s)", formatFloat(dt))
	case dt == 0:
		return nil
	case !k.c.Adaptive():
		return k.bad(key, "%s by time need steps that land on their times, which only steps that choose themselves take (equation.dt = \"auto\", implicit schemes); with fixed steps use %s", what, instead)
	}
	if n := k.c.Run.TEnd / dt; !(n <= MaxProbeRows) {
		return k.bad(key, "%s gives %s %s to run.t_end = %s, more than %d", formatFloat(dt), strconv.FormatFloat(n, 'g', 3, 64), what, formatFloat(k.c.Run.TEnd), MaxProbeRows)
	}
	return nil
}

func probeKey(i int, field string) string { return fmt.Sprintf("output.probe[%d].%s", i, field) }

// probes checks output.probe_every and the [[output.probe]] tables: each
// name a column of probes.csv of its own, each point inside the domain.
// NaN and ±Inf in at are finite's to refuse, before this.
func (k *checker) probes() *Error {
	o := &k.c.Output
	if o.ProbeEvery < 1 {
		return k.bad("output.probe_every", "must be >= 1 step (got %d); probes.csv also has a row at step 0 and at the last step", o.ProbeEvery)
	}
	if err := k.byTime("output.probe_dt", "probes", o.ProbeDT, "output.probe_every"); err != nil {
		return err
	}
	g := k.c.Grid
	nd := len(g.Shape)
	seen := map[string]int{}
	for i, p := range o.Probe {
		if msg := probeNameProblem(p.Name); msg != "" {
			return k.bad(probeKey(i, "name"), "%s", msg)
		}
		if j, ok := seen[p.Name]; ok {
			return k.bad(probeKey(i, "name"), "%q is also the name of output.probe[%d]: each probe names a column of probes.csv of its own", p.Name, j)
		}
		seen[p.Name] = i
		axes := make([]string, nd)
		for a := range nd {
			axes[a] = decomp.AxisName(nd, a)
		}
		order := "[" + strings.Join(axes, ", ") + "]"
		if len(p.At) != nd {
			return k.bad(probeKey(i, "at"), "needs one coordinate per axis, %s for this grid (got %s, probe %q)", order, floats(p.At), p.Name)
		}
		for a, x := range p.At {
			if x < 0 || x > g.Length[a] {
				box := make([]string, nd)
				for b, l := range g.Length {
					box[b] = "[0, " + formatFloat(l) + "]"
				}
				return k.bad(probeKey(i, "at"), "%s (probe %q, C order %s) is outside the domain %s: %s = %s is not in [0, %s]",
					floats(p.At), p.Name, order, strings.Join(box, " × "), axes[a], formatFloat(x), formatFloat(g.Length[a]))
			}
		}
	}
	return nil
}

// probeNameProblem says what keeps name from heading a column of
// probes.csv as it stands, "" if nothing: it must be one line of printable
// text, no comma or quote (which CSV would have to quote), no space at
// either end, and not one of the columns every row has.
func probeNameProblem(name string) string {
	switch {
	case name == "":
		return "is missing: every probe names its column of probes.csv"
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Sprintf("must be one line of printable text, it heads a column of probes.csv (got %q)", name)
	case strings.ContainsAny(name, `,"`):
		return fmt.Sprintf("must not hold a comma or a double quote, it heads a column of probes.csv (got %q)", name)
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("must not start or end with a space (got %q)", name)
	case name == "step" || name == "time":
		return fmt.Sprintf("%q is a column of every row of probes.csv (step,time,<probe>…): name the probe otherwise", name)
	}
	return ""
}
