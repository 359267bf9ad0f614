package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"heat/checkpoint"
	"heat/io/config"
)

// A run reads its inputs before it removes or writes anything: prepare
// opens and checks every one (the maps' headers with the config, their
// values after the memory check, the fields' files and the tables), and
// --overwrite refuses to remove any file an input is, holds or lies in.

// input is one file or folder a run reads, under the config key (or flag)
// that names it.
type input struct{ key, path string }

// inputsOf lists what a run of cfg reads from files: the maps and the
// initial field (a fresh start's: a restart takes them from its
// checkpoint), the source field, every table of a face's value or h or
// of source.amplitude, and the checkpoints a restart may start from.
func inputsOf(cfg *config.Config, restarts []*checkpoint.Checkpoint) []input {
	var in []input
	add := func(key, path string) {
		if path != "" {
			in = append(in, input{key, path})
		}
	}
	if restarts == nil {
		add("maps.k", cfg.Maps.K)
		add("maps.rho_c", cfg.Maps.RhoC)
		if cfg.Initial.Kind == "file" {
			add("initial.path", cfg.Initial.Path)
		}
	}
	if cfg.Source.Kind == "file" {
		add("source.path", cfg.Source.Path)
	}
	if a := cfg.Source.Amplitude; a != nil && cfg.Source.Kind != "none" {
		add("source.amplitude", a.Table)
	}
	for a := range cfg.NDim() {
		for side := range 2 {
			kind, value := cfg.FaceKind(a, side)
			if kind == config.Periodic {
				continue
			}
			key := "boundary." + cfg.FaceName(a, side)
			add(key+".value", value.Table)
			if h := cfg.FaceH(a, side); kind == config.Robin && h != nil {
				add(key+".h", h.Table)
			}
		}
	}
	for _, ck := range restarts {
		add("--restart", ck.Path())
	}
	return in
}

// refuseRemovingInputs refuses --overwrite of the run of manifest prev
// when one of inputs is among what removing that run would take (the
// files its manifest lists, its checkpoints and the latest naming one), or
// holds some of it, or lies inside it: the run would lose its input, and
// the user the data. Paths are compared with their links resolved.
func refuseRemovingInputs(prev *manifest, inputs []input) error {
	if len(inputs) == 0 {
		return nil
	}
	reals := make([]string, len(inputs))
	for i, in := range inputs {
		reals[i] = realPath(in.path)
	}
	hit := func(target string) error {
		for i, in := range inputs {
			if overlaps(reals[i], target) {
				return Usagef("--overwrite: %s %s lies in what --overwrite would remove (%s, of run %s in %s); nothing was removed: copy it out of there first, or give this run another --out",
					in.key, in.path, target, prev.runID, prev.dir)
			}
		}
		return nil
	}
	for _, rel := range sortedKeys(prev.files) {
		if err := hit(realParent(filepath.Join(prev.dir, filepath.FromSlash(rel)))); err != nil {
			return err
		}
	}
	for _, dir := range prev.ckpts {
		root := realPath(dir)
		if !anyOverlaps(reals, root) {
			continue // no input there: no need to tell the run's checkpoints from others'
		}
		targets, err := removedCheckpoints(dir, prev.runID)
		if err != nil {
			return Usagef("--overwrite: checkpoint folder %s: %v", dir, err)
		}
		for _, t := range targets {
			if err := hit(filepath.Join(root, t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// removedCheckpoints are the entries of the checkpoint folder dir that
// removing run runID takes (checkpoint.RemoveRun): its checkpoints,
// complete or not, and latest when it names one. An entry whose run
// cannot be told counts as the run's.
func removedCheckpoints(dir, runID string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	latest, _ := checkpoint.Latest(dir)
	var names []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "step-") {
			continue
		}
		if ck, err := checkpoint.Open(filepath.Join(dir, name)); err == nil {
			if id, _ := ck.Meta().Extra["run_id"].(string); id != runID {
				continue // another run's: RemoveRun leaves it
			}
		}
		names = append(names, name)
		if name == latest {
			names = append(names, "latest")
		}
	}
	return names, nil
}

// realPath is path absolute with its links resolved (as far as it exists).
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// realParent is path absolute with the links of its folder resolved, not
// its own: removing a link removes the link, not what it points to.
func realParent(path string) string {
	return filepath.Join(realPath(filepath.Dir(path)), filepath.Base(path))
}

// overlaps says whether a and b (clean absolute paths) are the same, or
// one lies inside the other.
func overlaps(a, b string) bool {
	return a == b || within(a, b) || within(b, a)
}

// within says whether path lies inside dir.
func within(path, dir string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// anyOverlaps says whether any of paths overlaps dir.
func anyOverlaps(paths []string, dir string) bool {
	for _, p := range paths {
		if overlaps(p, dir) {
			return true
		}
	}
	return false
}

// checkMapValues reads every value of the map files a fresh run of cfg
// reads (maps.k, maps.rho_c) and checks them, as the config's own check
// did before it left this pass for after the memory check: mistakes are
// config errors naming the source, key, file and cell (exit 2). A stop
// (ctx done) ends the pass within a block's read and is returned as its
// cause (a signal's exit code).
func checkMapValues(ctx context.Context, flags *config.Flags, cfg *config.Config) error {
	if cfg.Maps.K == "" && cfg.Maps.RhoC == "" {
		return nil
	}
	err := flags.CheckMapValues(ctx, cfg)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w while the map files' values were checked; nothing was written", context.Cause(ctx))
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return UsageError{err}
	}
	return Usagef("%v", err)
}
