package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"heat/checkpoint"
	"heat/io/config"
)

// A run's output folder holds one run's results. A new run into a folder
// that holds another's (its report, diagnostics, snapshots, plots or
// checkpoints) is refused, unless --overwrite (which first removes them:
// report.json, diagnostics.csv, snapshots/, plots/ and, when they are kept
// there, checkpoints/) or it restarts that run, which continues in place.

// results are the entries of an output folder that belong to a run.
var results = []string{"report.json", "diagnostics.csv", "snapshots", PlotsDir, "checkpoints"}

// claimFolders checks, before any work, that the run may write where it
// will: the output folder is free (or overwrite, or inPlace: a restart of
// the run that wrote it), and the output folder, the checkpoint folder
// (when checkpoints are due) and the report's folder are writable. The
// folder's results are rank 0's to judge and clear (--overwrite): under MPI
// the other ranks only probe, or they might see what rank 0 has just begun
// to write.
func claimFolders(cfg *config.Config, report string, overwrite, inPlace, rank0 bool) error {
	out := cfg.Output.Dir
	if !inPlace && rank0 {
		var found []string
		for _, name := range results {
			if holds(filepath.Join(out, name), name == "snapshots" || name == PlotsDir) {
				found = append(found, name)
			}
		}
		switch {
		case len(found) > 0 && !overwrite:
			return Usagef("output folder %s holds another run's results (%s): give another --out, continue that run with --restart %s, or replace them with --overwrite",
				out, strings.Join(found, ", "), shellQuote(out))
		case len(found) > 0:
			for _, name := range found {
				if name == "checkpoints" && filepath.Clean(cfg.Checkpoint.Dir) != filepath.Join(out, "checkpoints") {
					continue // this run keeps its checkpoints elsewhere
				}
				if err := os.RemoveAll(filepath.Join(out, name)); err != nil {
					return fmt.Errorf("--overwrite: cannot remove the previous run's %s: %w", name, err)
				}
			}
		}
	}
	dirs := []struct{ what, dir string }{{"output folder (output.dir)", out}}
	if cfg.Checkpoint.Every > 0 || cfg.Checkpoint.Final {
		dirs = append(dirs, struct{ what, dir string }{"checkpoint folder (checkpoint.dir)", cfg.Checkpoint.Dir})
	}
	if report != "" {
		dirs = append(dirs, struct{ what, dir string }{"--report " + report + ": its folder", filepath.Dir(report)})
	}
	for _, d := range dirs {
		if err := writable(d.dir); err != nil {
			return Usagef("%s %s is not writable: %v", d.what, d.dir, err)
		}
	}
	return nil
}

// writable creates dir if need be and a file in it, and removes the file.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	f, err := os.CreateTemp(dir, ".heat-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// holds says whether path is a file, or a folder with entries (with
// files only: with a file of its own, as a folder of snapshots has — its
// PNGs, its .pvd — whatever else it holds).
func holds(path string, files bool) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return true
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a lock, a probe: no results
		}
		if !files || e.Type().IsRegular() {
			return true
		}
	}
	return false
}

// newRunID is a fresh run's id: 16 random hex digits.
func newRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%016x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// claimCheckpoints takes the checkpoint folder for run runID (continuing
// run from, "" for a new one): its lock, and no checkpoints of another run
// in it, whose keep-pruning would otherwise delete one another's.
func claimCheckpoints(dir, runID, from string) (*checkpoint.Lock, error) {
	lock, err := checkpoint.LockRoot(dir, runID)
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, Usagef("checkpoint.dir %v; two runs cannot share a checkpoint folder: give this one another checkpoint.dir (or --out)", err)
	}
	if err != nil {
		return nil, err
	}
	id, err := checkpoint.ForeignWriter(dir, runID, from)
	if err == nil && id != "" {
		err = Usagef("checkpoint.dir %s holds the checkpoints of another run (run %s): continue that run with --restart %s, or give this one another checkpoint.dir",
			dir, id, shellQuote(dir))
	}
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return lock, nil
}
