package run

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"heat/comm"
	"heat/internal/safefile"
	"heat/io/config"
	"heat/solver"
)

// ProbesFile is the name of the probes' CSV in a run's output folder.
const ProbesFile = "probes.csv"

// probeEvery is the steps between rows of probes.csv, 0 when the run has
// no probes or takes them by time (output.probe_dt).
func probeEvery(cfg *config.Config) int {
	if len(cfg.Output.Probe) == 0 || cfg.Output.ProbeDT > 0 {
		return 0
	}
	return cfg.Output.ProbeEvery
}

// probesOn reports whether the run writes probes.csv.
func probesOn(cfg *config.Config) bool { return len(cfg.Output.Probe) > 0 }

// probesHeader is the first line of probes.csv: step, time, a column a
// probe.
func probesHeader(cfg *config.Config) []string {
	head := []string{"step", "time"}
	for _, p := range cfg.Output.Probe {
		head = append(head, p.Name)
	}
	return head
}

// probeOut is probes.csv as rank 0 writes it.
type probeOut struct {
	f *os.File
	w *csv.Writer
}

// openProbes opens probes.csv for rank 0 as diagnostics.csv is opened: new
// (the header first), or for a restart appended to, where the header it
// has must be this run's (a restart may not change the probes under the
// columns it continues). The manifest has claimed it (claimFolders).
func openProbes(cfg *config.Config, restarted bool) (*probeOut, error) {
	path := filepath.Join(cfg.Output.Dir, ProbesFile)
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if restarted {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	head := probesHeader(cfg)
	st, statErr := os.Lstat(path)
	fresh := !restarted || errors.Is(statErr, fs.ErrNotExist) || (statErr == nil && st.Size() == 0)
	if !fresh {
		had, err := firstLine(path)
		if err != nil {
			return nil, fmt.Errorf("cannot continue %s: %w", path, err)
		}
		if had != strings.Join(head, ",") {
			return nil, Usagef("output.probe: %s has the columns %q and this run's probes are %q: a restart continues the probes it started with; give the same output.probe, or another --out",
				path, had, strings.Join(head, ","))
		}
	}
	f, err := os.OpenFile(path, flag|safefile.NoFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot write probes: %w", err)
	}
	p := &probeOut{f: f, w: csv.NewWriter(f)}
	if fresh {
		p.w.Write(head)
		p.w.Flush()
		if err := p.w.Error(); err != nil {
			f.Close()
			return nil, fmt.Errorf("probes: %w", err)
		}
	}
	return p, nil
}

// firstLine is the first line of the file at path, without its end.
func firstLine(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// close flushes and closes probes.csv.
func (p *probeOut) close() error {
	if p == nil {
		return nil
	}
	p.w.Flush()
	if err := p.w.Error(); err != nil {
		p.f.Close()
		return fmt.Errorf("probes: %w", err)
	}
	return p.f.Close()
}

// probes appends one row of probes.csv: the step, the simulated time (0
// for Poisson), each probe's value, every number as the shortest decimal
// that reads back to its float64. Collective: the ranks that hold a
// probe's cells send them to rank 0.
func (o *outputs) probes(c comm.Comm, s *solver.Solver) error {
	pr := o.probers[c.Rank()]
	if pr == nil {
		at := make([][]float64, len(o.cfg.Output.Probe))
		for i, p := range o.cfg.Output.Probe {
			at[i] = slices.Clone(p.At)
		}
		var err error
		if pr, err = s.Probes(at); err != nil {
			return err
		}
		o.probers[c.Rank()] = pr
	}
	if c.Rank() != 0 {
		return pr.Sample(nil)
	}
	vals := make([]float64, len(o.cfg.Output.Probe))
	if err := pr.Sample(vals); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	row := make([]string, 0, 2+len(vals))
	row = append(row, strconv.Itoa(s.Step()), f(s.SimTime()))
	for _, v := range vals {
		row = append(row, f(v))
	}
	o.probe.w.Write(row)
	o.probe.w.Flush()
	return o.probe.w.Error()
}
