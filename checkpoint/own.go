package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What a writer may remove. A checkpoint root can hold more than one run's
// checkpoints (a copied one, a foreign run's that a restart continues from)
// and files users put there; a writer prunes and cleans up only its own
// run's checkpoints, and of those only the files a checkpoint is made of.
// Everything else stays, and is named to the caller (Info.Foreign).

// writerFile marks a .partial checkpoint with the run writing it, until its
// metadata (which names the run) is written; it is removed before the
// commit, so no complete checkpoint holds it.
const writerFile = ".heat-writer"

// runOf is the run id that wrote the checkpoint folder dir (a step-N, or
// its .partial, .prev or .old): its group metadata's run_id, else (a
// .partial) its writer marker. ok is false when neither says.
func runOf(fsys FS, dir string) (id string, ok bool) {
	if b, err := readMeta(fsys, filepath.Join(dir, metaFile)); err == nil {
		var doc groupDoc
		if json.Unmarshal(b, &doc) == nil {
			id, _ = doc.Attributes.Heat.Extra["run_id"].(string)
			return id, true
		}
	}
	b, err := fsys.ReadFile(filepath.Join(dir, writerFile), 256, nil)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// owns says whether the writer's run wrote dir. A writer without a run id
// (a library caller, a test) owns every checkpoint of its root.
func (w *writer) owns(dir string) bool {
	if w.opt.RunID == "" {
		return true
	}
	id, ok := runOf(w.fs, dir)
	return ok && id == w.opt.RunID
}

// arrayNames are the arrays a checkpoint may hold: the field and the media.
var arrayNames = append([]string{arrayName}, MediaArrays...)

// checkpointShaped says whether rel (slash-separated, inside a checkpoint
// folder) names a file a checkpoint is made of: its metadata, its writer
// marker, an array's metadata or one of its chunk or shard files
// (<array>/c/<i>/<j>[/<k>]).
func checkpointShaped(rel string) bool {
	if rel == metaFile || rel == writerFile {
		return true
	}
	array, rest, ok := strings.Cut(rel, "/")
	if !ok || !slices.Contains(arrayNames, array) {
		return false
	}
	if rest == metaFile {
		return true
	}
	key, ok := strings.CutPrefix(rest, "c/")
	if !ok || key == "" {
		return false
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// contents lists the files under dir (slash-separated, relative to it) and
// whether every one is checkpoint-shaped and a regular file; the first few
// of the others are named in foreign.
func contents(dir string) (files []string, foreign []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			if !d.IsDir() {
				foreign = append(foreign, path)
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() || !checkpointShaped(rel) {
			foreign = append(foreign, rel)
			return nil
		}
		files = append(files, rel)
		return nil
	})
	return files, foreign, err
}

// removeCheckpoint removes the checkpoint folder dir through fsys, written
// by this package: its chunk and metadata files (the group metadata last,
// so that a removal cut short still names its run), then its folders,
// deepest first.
// A folder that also holds files of someone else is left whole, and
// returned as an error naming them.
func removeCheckpoint(fsys FS, dir string) error {
	files, foreign, err := contents(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return fmt.Errorf("%s holds files heat did not write (%s): left alone", dir, strings.Join(firstFew(foreign), ", "))
	}
	slices.SortFunc(files, func(a, b string) int {
		switch {
		case a == metaFile:
			return 1
		case b == metaFile:
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, rel := range files {
		if err := fsys.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		// Deepest first, each one only once it is empty: a file put there
		// meanwhile keeps its folder.
		if ents, err := fsys.ReadDir(d); err != nil || len(ents) > 0 {
			return fmt.Errorf("%s is not empty after its checkpoint's files went: left alone", d)
		}
		if err := fsys.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// firstFew is at most three of names, and how many more.
func firstFew(names []string) []string {
	if len(names) <= 3 {
		return names
	}
	return append(slices.Clone(names[:3]), fmt.Sprintf("and %d more", len(names)-3))
}

// RemoveRun removes from root every checkpoint of run runID (complete,
// .partial, .prev and .old folders alike) and root/latest when it names
// one of them: what `heat run --overwrite` clears of the run it replaces.
// The caller holds root's lock. What belongs to other runs, or holds files
// heat did not write, stays and is returned in left.
func RemoveRun(root, runID string) (removed int, left []string, err error) {
	fsys := OS{}
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("checkpoint: %w", err)
	}
	latest, _ := readLatest(fsys, root)
	var errs []error
	for _, e := range ents {
		_, step := parseName(e.Name())
		if !step && !leftover(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			left = append(left, dir)
			continue
		}
		if id, ok := runOf(fsys, dir); !ok || id != runID {
			left = append(left, dir)
			continue
		}
		if err := removeCheckpoint(fsys, dir); err != nil {
			left = append(left, dir)
			errs = append(errs, err)
			continue
		}
		removed++
		if e.Name() == latest {
			if err := os.Remove(filepath.Join(root, latestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, left, fmt.Errorf("checkpoint: %w", err)
	}
	return removed, left, nil
}
