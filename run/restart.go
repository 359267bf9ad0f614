package run

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"heat/checkpoint"
	"heat/comm"
	"heat/decomp"
	"heat/internal/safefile"
	"heat/io/config"
	"heat/io/report"
	"heat/solver"
)

// resolveRestart finds what --restart names and the config that continues
// it: the config of the checkpoint, with the command line's changes over
// it (config.Flags.ResolveRestart: what may not change is refused). The
// candidates are that checkpoint alone (a step-NNNNNNNN folder), or every
// complete checkpoint of a checkpoints folder, newest first, so that a
// damaged newest one can fall back to the one before (fallback).
//
// wasOut is the output folder of the run that wrote the checkpoint.
func resolveRestart(flags *config.Flags, arg string, warn func(format string, args ...any)) (cfg *config.Config, cands []*checkpoint.Checkpoint, fallback bool, wasOut string, err error) {
	var root, one string
	if arg == "latest" {
		// The newest under the checkpoint.dir the command line resolves to.
		here, err := flags.Resolve()
		if err != nil {
			return nil, nil, false, "", UsageError{err}
		}
		root = here.Checkpoint.Dir
	} else if root, one, err = checkpointRoot(arg); err != nil {
		return nil, nil, false, "", UsageError{fmt.Errorf("--restart: %w", err)}
	}
	paths := []string{one}
	if one == "" {
		fallback = true
		newest, skipped, err := checkpoint.ResolveSkipping(root)
		for _, e := range skipped {
			warn("--restart %s: skipping: %v", arg, e)
		}
		if err != nil {
			return nil, nil, false, "", UsageError{fmt.Errorf("--restart %s: %w", arg, err)}
		}
		names, err := checkpoint.List(root)
		if err != nil {
			return nil, nil, false, "", UsageError{fmt.Errorf("--restart %s: %w", arg, err)}
		}
		paths = []string{newest}
		// The older ones, to fall back to: those listed (newest first)
		// after the one Resolve chose.
		var older []string
		for _, n := range names {
			if p := filepath.Join(root, n); filepath.Clean(p) == filepath.Clean(newest) {
				older = older[:0]
			} else {
				older = append(older, p)
			}
		}
		paths = append(paths, older...)
	}
	for _, p := range paths {
		ck, err := checkpoint.Open(p)
		if err == nil && cfg == nil {
			cfg, wasOut, err = continued(flags, ck)
			var ce *config.Error
			if errors.As(err, &ce) {
				return nil, nil, false, "", UsageError{err}
			}
		}
		if err == nil {
			err = compatible(cfg, ck)
		}
		if err != nil {
			if fallback && !errors.Is(err, errMismatch) && len(paths) > 1 {
				warn("skipping checkpoint %s: %v", p, err)
				continue
			}
			return nil, nil, false, "", UsageError{fmt.Errorf("cannot restart from %s: %w", p, err)}
		}
		cands = append(cands, ck)
	}
	if len(cands) == 0 {
		return nil, nil, false, "", UsageError{fmt.Errorf("--restart %s: no usable checkpoint under %s", arg, root)}
	}
	m := cands[0].Meta()
	converged, _ := m.Extra["converged"].(bool)
	switch {
	case cfg.Equation.Kind == config.Poisson && converged:
		return nil, nil, false, "", Usagef("--restart %s: checkpoint %s is of a converged solve (at iteration %d): nothing to continue", arg, cands[0].Path(), m.Step)
	case mediaStep(cfg, cands[0]) && cfg.EndsAtTEnd():
		// The media decide the step (and so the step count to t_end) only
		// once read: the time tells.
		if m.Time >= cfg.Run.TEnd*(1-1e-12) {
			return nil, nil, false, "", Usagef("--restart %s: checkpoint %s is at step %d, t = %g, and the run ends at run.t_end = %g: nothing to run; give a later run.t_end",
				arg, cands[0].Path(), m.Step, m.Time, cfg.Run.TEnd)
		}
	case m.Step >= cfg.Run.Steps && cfg.EndsAtTEnd():
		return nil, nil, false, "", Usagef("--restart %s: checkpoint %s is at step %d, t = %g, and the run ends at run.t_end = %g: nothing to run; give a later run.t_end",
			arg, cands[0].Path(), m.Step, m.Time, cfg.Run.TEnd)
	case m.Step >= cfg.Run.Steps:
		return nil, nil, false, "", Usagef("--restart %s: checkpoint %s is at step %d, and run.steps = %d is the total step count: nothing to run; give --steps above %d (or a later run.t_end)",
			arg, cands[0].Path(), m.Step, cfg.Run.Steps, m.Step)
	}
	return cfg, cands, fallback, wasOut, nil
}

// continued is the config of a restart from ck: ck's own, with the command
// line's changes.
func continued(flags *config.Flags, ck *checkpoint.Checkpoint) (cfg *config.Config, wasOut string, err error) {
	var was config.Config
	if err := json.Unmarshal(ck.Meta().Config, &was); err != nil {
		return nil, "", fmt.Errorf("%w: its config cannot be read: %v", checkpoint.ErrIncompatible, err)
	}
	cfg, err = flags.ResolveRestart(&was, "checkpoint "+ck.Path())
	return cfg, was.Output.Dir, err
}

var errMismatch = errors.New("checkpoint does not match this run")

// compatible refuses a checkpoint of another grid or equation.
func compatible(cfg *config.Config, ck *checkpoint.Checkpoint) error {
	var was config.Config
	if err := json.Unmarshal(ck.Meta().Config, &was); err != nil {
		return fmt.Errorf("%w: its config cannot be read: %v", checkpoint.ErrIncompatible, err)
	}
	if !slices.Equal(ck.Shape(), cfg.Grid.Shape) || was.Equation.Kind != cfg.Equation.Kind ||
		(len(was.Grid.Length) > 0 && !slices.Equal(was.Grid.Length, cfg.Grid.Length)) {
		return fmt.Errorf("%w: it holds %s %s (length %v), this run is %s %s (length %v)", errMismatch,
			was.Equation.Kind, decomp.FormatDims(ck.Shape()), was.Grid.Length,
			cfg.Equation.Kind, decomp.FormatDims(cfg.Grid.Shape), cfg.Grid.Length)
	}
	return nil
}

// ckptOptions are the checkpoint options of cfg for a rank of threads
// workers; writers is the process grid of the writers that
// checkpoint.shard = "auto" shapes the shards by (shardWriters).
func ckptOptions(cfg *config.Config, threads int, writers []int) (checkpoint.Options, error) {
	ck := cfg.Checkpoint
	opt := checkpoint.Options{Chunk: ck.Chunk, Shard: ck.Shard.Shape, Level: ck.Level, Keep: ck.Keep, Workers: threads}
	if ck.Shard.Auto() {
		shard, inner, err := checkpoint.WriterShards(cfg.Grid.Shape, writers, ck.Chunk)
		if err != nil {
			return opt, err
		}
		opt.Shard, opt.Chunk = shard, inner
	}
	return opt, nil
}

// shardWriters is the process grid of the checkpoint writers under
// checkpoint.shard = "auto": the ranks' own with goroutine ranks (one
// process); under MPI one writer per node (the ranks' hosts counted,
// collectively), as ADIOS2 aggregates, so a checkpoint of a cluster run is
// a file per node.
func shardWriters(c comm.Comm, g *decomp.Grid) ([]int, error) {
	if comm.RanksHere(c) == c.Size() {
		return g.Dims, nil
	}
	host, _ := os.Hostname()
	hosts, err := c.Gatherv([]byte(host), 0)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8)
	if c.Rank() == 0 {
		seen := map[string]bool{}
		for _, h := range hosts {
			seen[string(h)] = true
		}
		binary.LittleEndian.PutUint64(buf, uint64(len(seen)))
	}
	if err := c.Bcast(buf, 0); err != nil {
		return nil, err
	}
	nodes := int(binary.LittleEndian.Uint64(buf))
	if nodes >= c.Size() {
		return g.Dims, nil
	}
	w, err := decomp.New(g.Shape, nodes, nil, nil)
	if err != nil {
		return nil, err
	}
	return w.Dims, nil
}

// readWorkers is how many goroutines a rank decodes its part of a restart
// with: the cores this host gives each of its ranks, or the rank's threads
// if more. Nothing steps yet, and the read is CPU-bound (CRC32-C, zstd, the
// copy into the field): 4096² on 1 rank × 1 thread of 2 cores, 0.20–0.24 →
// 0.16 s.
func readWorkers(c comm.Comm, threads int) int {
	return max(threads, runtime.GOMAXPROCS(0)/comm.RanksHere(c), 1)
}

// restore loads the restart checkpoint into the solver: collectively, each
// rank reading the chunks that cross its box. With --restart latest a
// damaged checkpoint falls back to the previous one.
func restore(c comm.Comm, s *solver.Solver, j *job) error {
	for i, ck := range j.restarts {
		t0 := time.Now()
		err := checkpoint.Read(c, ck, s.Grid(), s.Layout(), s.Field(), checkpoint.Options{Workers: readWorkers(c, s.Threads())})
		if err == nil {
			m := ck.Meta()
			residual, _ := m.Extra["residual"].(float64)
			converged, _ := m.Extra["converged"].(bool)
			cycles, _ := m.Extra["cycles"].(float64)
			s.Restore(m.Step, residual, converged, int(cycles))
			if s.Controller() != nil {
				ctl, ok := controllerOf(m.Extra)
				if !ok {
					return UsageError{fmt.Errorf("cannot restart from %s: it keeps no step controller, which equation.dt = \"auto\" continues from", ck.Path())}
				}
				s.SetController(ctl, m.Time)
			}
			if err := s.Carry(accountOf(m.Extra)); err != nil {
				return UsageError{fmt.Errorf("cannot restart from %s: %w", ck.Path(), err)}
			}
			from, _ := m.Extra["algebraic_from"].(float64)
			if err := s.ResumeAlgebraic(int(from)); err != nil {
				return UsageError{fmt.Errorf("cannot restart from %s: %w", ck.Path(), err)}
			}
			if c.Rank() == 0 {
				j.lastGood = ck.Path()
				j.rep.Restart = &report.Restart{Path: ck.Path(), Step: m.Step, ReadS: time.Since(t0).Seconds(), ChangedInputs: j.changed}
				j.log.log("restarted from %s (step %d, read in %.2f s)", ck.Path(), m.Step, j.rep.Restart.ReadS)
			}
			return nil
		}
		if errors.Is(err, comm.ErrAborted) {
			return err
		}
		// Any checkpoint that does not load is passed over (when a folder of
		// them was named), always with a warning naming it and why.
		if !j.fallback || i == len(j.restarts)-1 {
			return UsageError{fmt.Errorf("cannot restart from %s: %w", ck.Path(), err)}
		}
		if c.Rank() == 0 {
			j.log.warn("checkpoint %s does not load (%v); falling back to %s", ck.Path(), err, j.restarts[i+1].Path())
		}
	}
	return nil
}

// beginCheckpoint starts saving the solver's state collectively
// (checkpoint.Begin: the field is copied to its writers; compressing and
// writing go on in the background); finishCheckpoint commits it. A failure
// ends the run unless checkpoint.continue_on_error; the previous checkpoint
// survives either way.
func beginCheckpoint(c comm.Comm, s *solver.Solver, j *job, writers []int) (*checkpoint.Pending, error) {
	cfgJSON, err := json.Marshal(j.given)
	if err != nil {
		return nil, err
	}
	extra := map[string]any{"equation": j.cfg.Equation.Kind, "converged": s.Converged(), "run_id": j.runID}
	if r := s.Residual(); !math.IsNaN(r) && !math.IsInf(r, 0) {
		extra["residual"] = r
	}
	if n := s.Info().Cycles; n > 0 {
		extra["cycles"] = n
	}
	acct, err := s.Account()
	if err != nil {
		return nil, err
	}
	if a := accountExtra(acct); a != nil {
		extra["energy"] = a
	}
	if ctl := s.Controller(); ctl != nil {
		extra["controller"] = controllerExtra(ctl)
	}
	if from := s.AlgebraicFrom(); from > 0 {
		// The run went on preconditioned algebraically: a restart does too.
		extra["algebraic_from"] = from
	}
	if c.Rank() == 0 {
		extra["inputs"] = inputsExtra(j.inputs)
	}
	// In media, k, rho_c and the held cells' mask go beside the field: a
	// restart needs no map file (checkpointMedia).
	meta := checkpoint.Meta{Step: s.Step(), Time: s.SimTime(), Config: cfgJSON, Extra: extra, Arrays: mediaArrays(s.Media())}
	opt, err := ckptOptions(j.cfg, s.Threads(), writers)
	if err != nil {
		return nil, checkpointFailed(c, j, s.Step(), err)
	}
	// Pruning touches only this run's checkpoints; rank 0's commit checks
	// it still holds the folder.
	opt.RunID = j.runID
	if c.Rank() == 0 && j.held != nil {
		opt.Lock = j.held.ckpt
	}
	p, err := checkpoint.Begin(c, s.Grid(), s.Layout(), s.Field(), j.cfg.Checkpoint.Dir, meta, opt)
	if err != nil {
		return nil, checkpointFailed(c, j, s.Step(), err)
	}
	return p, nil
}

// finishCheckpoint commits the checkpoint of step p began. Collective.
func finishCheckpoint(c comm.Comm, j *job, step int, p *checkpoint.Pending) error {
	t := time.Now()
	info, err := p.Finish()
	blocking := p.Blocking + time.Since(t) // Begin, and the wait and commit in Finish
	if err != nil {
		return checkpointFailed(c, j, step, err)
	}
	if c.Rank() == 0 {
		for _, f := range info.Foreign {
			if !j.named[f] {
				if j.named == nil {
					j.named = map[string]bool{}
				}
				j.named[f] = true
				j.log.warn("checkpoint.keep: left alone in %s: %s", j.cfg.Checkpoint.Dir, f)
			}
		}
		j.lastGood = info.Path
		j.rep.Checkpoints = append(j.rep.Checkpoints, report.Checkpoint{Step: info.Step, Path: info.Path, Bytes: info.Bytes,
			WriteS: info.WriteS, BlockingS: blocking.Seconds()})
		j.log.log("checkpoint step %d: %s (%.1f MB in %.2f s, %.2f s of it blocking the run)", info.Step, info.Path,
			float64(info.Bytes)/1e6, info.WriteS, blocking.Seconds())
	}
	return nil
}

// checkpointFailed is the run's error for the checkpoint of step that
// failed, or nil (with a warning) under checkpoint.continue_on_error.
func checkpointFailed(c comm.Comm, j *job, step int, err error) error {
	if errors.Is(err, comm.ErrAborted) || !j.cfg.Checkpoint.ContinueOnError {
		return fmt.Errorf("checkpoint at step %d failed: %w (last good checkpoint: %s)", step, err, j.lastGoodText())
	}
	if c.Rank() == 0 {
		j.log.warn("checkpoint at step %d failed, continuing (checkpoint.continue_on_error): %v", step, err)
	}
	return nil
}

// CheckpointPath resolves what a user names as a checkpoint to one
// checkpoint folder: a checkpoint (step-NNNNNNNN) itself; a checkpoints
// folder or its latest file (the newest complete checkpoint there:
// checkpoint.Resolve); or a run's output folder (its checkpoints folder's
// newest).
func CheckpointPath(p string) (string, error) {
	path, _, err := ResolveCheckpoint(p)
	return path, err
}

// ResolveCheckpoint is CheckpointPath, with what it passed over on the way
// to a folder's newest loadable checkpoint (a latest that is missing,
// unreadable or garbage, a link in place of a checkpoint, one whose
// metadata does not open).
func ResolveCheckpoint(p string) (path string, skipped []error, err error) {
	root, one, err := checkpointRoot(p)
	if err != nil {
		return "", nil, err
	}
	if one != "" {
		return one, nil, nil
	}
	return checkpoint.ResolveSkipping(root)
}

// checkpointRoot tells what p names: one checkpoint (one: a folder with a
// zarr.json), or a folder of checkpoints (root) whose newest is meant — a
// checkpoints folder, known by its latest or its step-NNNNNNNN entries
// (whatever state latest is in: the fallback needs none), that folder's
// latest, or a run's output folder holding one.
func checkpointRoot(p string) (root, one string, err error) {
	p = filepath.Clean(p)
	named := filepath.Base(p) == "latest"
	st, err := os.Stat(p)
	if err != nil {
		if lst, lerr := os.Lstat(p); lerr == nil && named && lst.Mode()&fs.ModeSymlink != 0 {
			return filepath.Dir(p), "", nil // a dangling latest: its folder's newest
		}
		return "", "", fmt.Errorf("%s: no such checkpoint, checkpoints folder or output folder", p)
	}
	switch {
	case !st.IsDir() && named:
		return filepath.Dir(p), "", nil
	case !st.IsDir():
		return "", "", fmt.Errorf("%s is a file, not a checkpoint (a step-NNNNNNNN folder), a checkpoints folder or its latest file", p)
	case present(p, "zarr.json"):
		return "", p, nil // Open says what is wrong with it, if anything
	case checkpoint.IsRoot(p):
		return p, "", nil
	}
	dir, err := runCheckpoints(p)
	if err != nil {
		return "", "", err
	}
	switch {
	case checkpoint.IsRoot(dir):
		return dir, "", nil
	case named:
		return filepath.Dir(p), "", nil // a directory in place of latest
	}
	return "", "", fmt.Errorf("%s holds no checkpoint: neither a checkpoint (no zarr.json), a checkpoints folder (no latest or step-NNNNNNNN) nor a run's output folder (no checkpoints in %s)",
		p, dir)
}

// present says whether folder dir has an entry name that is not a
// directory (of any other kind: what is there is the reader's to refuse).
func present(dir, name string) bool {
	st, err := os.Lstat(filepath.Join(dir, name))
	return err == nil && !st.IsDir()
}

// maxReportBytes bounds what is read of a run's report.json to find its
// checkpoint folder. A report's bulk is a record per rank (some 300 bytes)
// and a residual per iteration (some 25): 64 MiB is 100,000 ranks and a
// million iterations, with room.
const maxReportBytes = 64 << 20

// runCheckpoints is the checkpoints folder of the run whose output folder is
// out: out/checkpoints, where a run keeps them unless its config put them
// elsewhere, else where its report says its config put them. A relative
// checkpoint.dir is taken relative to the output folder as the run named
// both (they were relative to that run's working folder): a copied or moved
// output folder keeps its own checkpoints, not the original's.
func runCheckpoints(out string) (string, error) {
	dir := filepath.Join(out, "checkpoints")
	if checkpoint.IsRoot(dir) {
		return dir, nil
	}
	file := filepath.Join(out, "report.json")
	data, err := safefile.ReadFile(file, maxReportBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return dir, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", out, err)
	}
	var r struct {
		Config struct {
			Output struct {
				Dir string `json:"dir"`
			} `json:"output"`
			Checkpoint struct {
				Dir string `json:"dir"`
			} `json:"checkpoint"`
		} `json:"config"`
	}
	if json.Unmarshal(data, &r) != nil || r.Config.Checkpoint.Dir == "" {
		return dir, nil
	}
	was, wasOut := r.Config.Checkpoint.Dir, r.Config.Output.Dir
	if filepath.IsAbs(was) || wasOut == "" || filepath.IsAbs(wasOut) {
		return filepath.Clean(was), nil
	}
	rel, err := filepath.Rel(wasOut, was)
	if err != nil {
		return filepath.Clean(was), nil
	}
	return filepath.Join(out, rel), nil
}

// accountExtra is the energy account a checkpoint keeps (nil: none kept,
// or a figure not finite, which JSON cannot hold: the restart's account
// then starts at the restart).
func accountExtra(b *solver.EnergyBalance) map[string]any {
	if b == nil {
		return nil
	}
	all := append([]float64{b.ContentStart, b.Held, b.Source}, b.Faces...)
	for _, v := range all {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	return map[string]any{"content_start": b.ContentStart, "held": b.Held, "source": b.Source, "faces": b.Faces}
}

// accountOf reads what accountExtra wrote (from the checkpoint's JSON);
// nil where the checkpoint has none or it does not read.
func accountOf(extra map[string]any) *solver.EnergyBalance {
	a, ok := extra["energy"].(map[string]any)
	if !ok {
		return nil
	}
	num := func(k string) (float64, bool) { v, ok := a[k].(float64); return v, ok }
	b := &solver.EnergyBalance{}
	var ok1, ok2, ok3 bool
	b.ContentStart, ok1 = num("content_start")
	b.Held, ok2 = num("held")
	b.Source, ok3 = num("source")
	faces, ok4 := a["faces"].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil
	}
	for _, f := range faces {
		v, ok := f.(float64)
		if !ok {
			return nil
		}
		b.Faces = append(b.Faces, v)
	}
	return b
}

// controllerExtra is the step controller a checkpoint keeps, so that a
// restart takes the straight run's next step (JSON numbers round-trip to
// the bit; a smallest step of none yet is written 0).
func controllerExtra(c *solver.Controller) map[string]any {
	dtMin := c.DTMin
	if c.Accepted == 0 {
		dtMin = 0
	}
	return map[string]any{"next": c.Next, "err_prev": c.ErrPrev, "rejected": c.Rejected,
		"accepted": c.Accepted, "rejects": c.Rejects, "dt_min": dtMin, "dt_max": c.DTMax,
		"fresh": c.Fresh, "fresh_at": c.FreshAt}
}

// controllerOf reads what controllerExtra wrote; false where the
// checkpoint has none or it does not read.
func controllerOf(extra map[string]any) (solver.Controller, bool) {
	a, ok := extra["controller"].(map[string]any)
	if !ok {
		return solver.Controller{}, false
	}
	num := func(k string) float64 {
		v, has := a[k].(float64)
		ok = ok && has
		return v
	}
	c := solver.Controller{Next: num("next"), ErrPrev: num("err_prev"), Accepted: int(num("accepted")),
		Rejects: int(num("rejects")), DTMin: num("dt_min"), DTMax: num("dt_max")}
	rejected, has := a["rejected"].(bool)
	c.Rejected = rejected
	// fresh and fresh_at came later: a checkpoint without them has none.
	c.Fresh, _ = a["fresh"].(bool)
	freshAt, _ := a["fresh_at"].(float64)
	c.FreshAt = int(freshAt)
	if !ok || !has || !(c.Next > 0) {
		return solver.Controller{}, false
	}
	if c.Accepted == 0 {
		c.DTMin = math.Inf(1)
	}
	return c, true
}
