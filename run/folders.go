package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"heat/checkpoint"
	"heat/internal/lockfile"
	"heat/io/config"
)

// A run's output folder holds one run's results, and heat touches nothing
// there that the run did not write:
//
//   - one lock per output folder (outLock), held for the run's life, as
//     the checkpoint folder has its own: a second run into a folder in use,
//     --overwrite included, is refused naming the holder;
//   - a manifest (manifest.go) of everything the run wrote there;
//     --overwrite removes what the previous run's manifest lists, and the
//     previous run's own checkpoints, nothing else;
//   - a new run into a folder holding another run's results is refused
//     unless --overwrite; a restart continues in place the run that wrote
//     the folder (the manifest names it).

// outLock is the lock file of an output folder (the checkpoint folder's is
// checkpoint's .lock: a checkpoint.dir equal to output.dir holds both).
const outLock = ".heat.lock"

// results are the entries of an output folder that belong to a run.
var results = []string{"report.json", "diagnostics.csv", ProbesFile, "snapshots", PlotsDir, "checkpoints"}

// folders are what a run holds of the places it writes: the output
// folder's lock and manifest, the checkpoint folder's lock, and the
// folders the run made for them (made: deepest first).
type folders struct {
	out   *lockfile.Lock
	ckpt  *checkpoint.Lock
	files *manifest
	made  []string
}

// release lets go of both locks (after the manifest is closed). A run
// that wrote nothing in its output folder (refused before its work: the
// folder holds another run's results, a link is planted under a name it
// writes) leaves it as it found it: its lock file goes where it made it,
// and the folders it made go where they are empty.
func (f *folders) release() error {
	if f == nil {
		return nil
	}
	err := f.files.close()
	f.ckpt.Unlock()
	if !f.files.wroteNothing() {
		f.out.Unlock()
		return err
	}
	f.out.Abandon()
	for _, dir := range f.made {
		_ = os.Remove(dir) // only where empty
	}
	return err
}

// missing are dir and those of its parents that do not exist, deepest
// first: what creating dir makes.
func missing(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// outHeld (rank 0) checks the run still holds its output folder: a folder
// deleted under the run, or its lock removed, is an error naming it.
func (f *folders) outHeld() error {
	if f == nil || f.out == nil {
		return nil
	}
	if err := f.out.Held(); err != nil {
		return fmt.Errorf("output folder lost: %w", err)
	}
	return nil
}

// claimFolders checks, before any work, that the run may write where it
// will, and takes those places for the run runID: the output folder's lock
// and manifest (a new one, or the one of the run a restart continues),
// after --overwrite has cleared the previous run's outputs; the checkpoint
// folder's lock when checkpoints are due; and the output, checkpoint and
// report folders writable. The folder's results are rank 0's to judge and
// clear: under MPI the other ranks only probe, or they might see what rank
// 0 has just begun to write, and get a manifest of their own to check
// their files against.
//
// inputs are what the run reads: --overwrite refuses to remove any of them
// (refuseRemovingInputs).
func claimFolders(cfg *config.Config, report string, overwrite bool, runID string, restart, rank0 bool, inputs []input, warn func(string, ...any)) (*folders, error) {
	out := cfg.Output.Dir
	ckptsDue := cfg.Checkpoint.Every > 0 || cfg.Checkpoint.Final
	if overwrite {
		if err := refuseOverwriteOf(out); err != nil {
			return nil, err
		}
	}
	if err := refuseShared("output.dir", out, "outputs", "--out DIR"); err != nil {
		return nil, err
	}
	if ckptsDue {
		if err := refuseShared("checkpoint.dir", cfg.Checkpoint.Dir, "checkpoints", "--set checkpoint.dir=DIR"); err != nil {
			return nil, err
		}
	}
	dirs := []struct{ what, dir string }{{"output folder (output.dir)", out}}
	if ckptsDue {
		dirs = append(dirs, struct{ what, dir string }{"checkpoint folder (checkpoint.dir)", cfg.Checkpoint.Dir})
	}
	if report != "" {
		dirs = append(dirs, struct{ what, dir string }{"--report " + report + ": its folder", filepath.Dir(report)})
	}
	check := func(dirs []struct{ what, dir string }) error {
		for _, d := range dirs {
			if err := writable(d.dir); err != nil {
				return Usagef("%s %s is not writable: %v", d.what, d.dir, err)
			}
		}
		return nil
	}
	if !rank0 {
		if err := check(dirs); err != nil {
			return nil, err
		}
		return &folders{files: &manifest{dir: out, runID: runID, files: map[string]bool{}, dirs: map[string]bool{}}}, nil
	}
	// The output folder first (its lock and manifest), then the others,
	// so that the manifest lists the folders the run makes in it.
	f := &folders{}
	for _, d := range dirs {
		f.made = append(f.made, missing(d.dir)...)
	}
	slices.SortFunc(f.made, func(a, b string) int { return len(b) - len(a) }) // a folder before its parent
	if err := check(dirs[:1]); err != nil {
		f.release()
		return nil, err
	}
	var err error
	if f.out, err = lockfile.Take(out, outLock, runID); err != nil {
		if errors.Is(err, lockfile.ErrLocked) {
			return nil, Usagef("output folder %v: another run is writing there; wait for it, or give this one another --out", err)
		}
		return nil, Usagef("output folder %s: %v", out, err)
	}
	if f.files, err = takeOutput(cfg, runID, overwrite, restart, inputs, warn); err != nil {
		f.release()
		return nil, err
	}
	if ckptsDue {
		if _, inOut := f.files.rel(cfg.Checkpoint.Dir); inOut {
			if err := f.files.claimDir(cfg.Checkpoint.Dir); err != nil {
				f.release()
				return nil, UsageError{err}
			}
		}
	}
	if err := check(dirs[1:]); err != nil {
		f.release()
		return nil, err
	}
	// The fixed names the run writes, checked now: a link planted as one
	// of them fails the run before it starts, not at its end.
	claims := []string{filepath.Join(out, "report.json")}
	if cfg.Output.DiagnosticsEvery > 0 {
		claims = append(claims, filepath.Join(out, "diagnostics.csv"))
	}
	if probesOn(cfg) {
		claims = append(claims, filepath.Join(out, ProbesFile))
	}
	if report != "" {
		claims = append(claims, report)
	}
	for _, p := range claims {
		if err := f.files.claim(p); err != nil {
			f.release()
			return nil, UsageError{err}
		}
	}
	if ckptsDue {
		if err := f.files.recordCheckpoints(cfg.Checkpoint.Dir); err != nil {
			f.release()
			return nil, err
		}
		if f.ckpt, err = claimCheckpoints(cfg.Checkpoint.Dir, runID); err != nil {
			f.release()
			return nil, err
		}
	}
	return f, nil
}

// takeOutput (rank 0, holding the output folder's lock) is the output
// folder's manifest for run runID: the one of the run it continues, or a
// new one — where the folder holds another run's results, only with
// overwrite, after removing what that run's manifest lists (none of the
// run's inputs among it).
func takeOutput(cfg *config.Config, runID string, overwrite, restart bool, inputs []input, warn func(string, ...any)) (*manifest, error) {
	out := cfg.Output.Dir
	prev, err := readManifest(out)
	if errors.Is(err, errUnfinished) {
		// Cut short before it named a run: it lists nothing of one, and
		// the folder is judged as one without a manifest.
		if rerr := os.Remove(filepath.Join(out, manifestFile)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, Usagef("output folder %s: %v, which cannot be removed: %v", out, err, rerr)
		}
		err = errNoManifest
	}
	switch {
	case err == nil && prev.runID == runID:
		// This run's own folder: a restart in place.
		return prev, prev.continueManifest()
	case err == nil && !prev.anyExists():
		// A run that left nothing (refused, or killed before it wrote):
		// its manifest names nothing to keep.
		if err := os.Remove(filepath.Join(out, manifestFile)); err != nil {
			return nil, err
		}
	case err == nil && !overwrite:
		return nil, Usagef("output folder %s holds the results of another run (run %s): give another --out, continue that run with --restart %s, or replace them with --overwrite",
			out, prev.runID, shellQuote(out))
	case err == nil:
		if err := refuseRemovingInputs(prev, inputs); err != nil {
			return nil, err
		}
		if err := removeRun(prev, warn); err != nil {
			return nil, err
		}
	case !errors.Is(err, errNoManifest):
		return nil, Usagef("output folder %s: %v", out, err)
	default:
		var found []string
		for _, name := range results {
			if name == "checkpoints" && restart && filepath.Clean(cfg.Checkpoint.Dir) == filepath.Join(out, "checkpoints") {
				continue // the checkpoints it restarts from: checkpoint.dir's own check
			}
			if holds(filepath.Join(out, name), name == "snapshots" || name == PlotsDir) {
				found = append(found, name)
			}
		}
		switch {
		case len(found) > 0 && !overwrite:
			return nil, Usagef("output folder %s holds another run's results (%s): give another --out, continue that run with --restart %s, or replace them with --overwrite",
				out, strings.Join(found, ", "), shellQuote(out))
		case len(found) > 0:
			return nil, Usagef("--overwrite: output folder %s holds %s, but no heat manifest lists them (an earlier heat's results, or not heat's): heat removes only what it wrote; move them away, or give another --out",
				out, strings.Join(found, ", "))
		}
	}
	return newManifest(out, runID)
}

// removeRun removes what the run of manifest m wrote: its checkpoints in
// each checkpoint folder it wrote to (under that folder's lock), then the
// files and folders m lists in its output folder. What stays (other runs'
// checkpoints, files heat did not write) is named in a warning.
func removeRun(m *manifest, warn func(string, ...any)) error {
	for _, dir := range m.ckpts {
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			continue // gone, or not a folder any more: nothing of the run's there
		}
		lock, err := checkpoint.LockRoot(dir, m.runID)
		if errors.Is(err, checkpoint.ErrLocked) {
			return Usagef("--overwrite: checkpoint folder %v; the run there is still going", err)
		}
		if err != nil {
			return err
		}
		_, left, err := checkpoint.RemoveRun(dir, m.runID)
		if rel, ok := m.rel(dir); ok && m.dirs[rel] && err == nil && onlyLock(dir) {
			// A checkpoint folder the run made, now empty but for its lock:
			// the lock goes too, and the folder with the run's others.
			_ = os.Remove(filepath.Join(dir, ".lock"))
		}
		lock.Unlock()
		if len(left) > 0 {
			warn("--overwrite: left alone in %s what run %s did not write: %s", dir, m.runID, strings.Join(names(left), ", "))
		}
		if err != nil {
			return fmt.Errorf("--overwrite: %w", err)
		}
	}
	left, err := m.removeListed()
	if len(left) > 0 {
		warn("--overwrite: left alone in %s what run %s did not write: %s", m.dir, m.runID, strings.Join(left, ", "))
	}
	return err
}

// onlyLock says whether dir holds nothing but a checkpoint folder's lock.
func onlyLock(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) == 1 && ents[0].Name() == ".lock" && ents[0].Type().IsRegular()
}

// names is paths by their base names.
func names(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// refuseOverwriteOf refuses --overwrite of a folder no run's outputs
// should be in: the root, the home folder.
func refuseOverwriteOf(out string) error {
	switch sharedFolder(out) {
	case "root":
		return Usagef("--overwrite with --out %s: heat does not replace outputs in the root folder; give the run a folder of its own", out)
	case "home":
		return Usagef("--overwrite with --out %s: heat does not replace outputs in the home folder; give the run a folder of its own", out)
	}
	return nil
}

// refuseShared refuses dir, the folder config key key names for a run's
// what (outputs, checkpoints), when it is the root or the home folder: a
// run's files there would be mixed with everything else, and --overwrite
// could never clear them. give is how to name another folder.
func refuseShared(key, dir, what, give string) error {
	if which := sharedFolder(dir); which != "" {
		return Usagef("%s %s is the %s folder: heat does not write a run's %s there; give the run a folder of its own (%s)", key, dir, which, what, give)
	}
	return nil
}

// sharedFolder says whether dir (its links resolved) is the root folder
// ("root") or the home folder ("home"), or neither ("").
func sharedFolder(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
	}
	switch {
	case abs == filepath.VolumeName(abs)+string(filepath.Separator):
		return "root"
	case home != "" && abs == filepath.Clean(home):
		return "home"
	}
	return ""
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
	st, err := os.Lstat(path)
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

// claimCheckpoints takes the checkpoint folder for run runID: its lock, and
// no checkpoints of another run as its newest, which a restart of this run
// would take for its own.
func claimCheckpoints(dir, runID string) (*checkpoint.Lock, error) {
	lock, err := checkpoint.LockRoot(dir, runID)
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, Usagef("checkpoint.dir %v; two runs cannot share a checkpoint folder: give this one another checkpoint.dir (or --out)", err)
	}
	if err != nil {
		return nil, UsageError{err}
	}
	id, err := checkpoint.ForeignWriter(dir, runID, "")
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
