package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The checkpoint root: step-NNNNNNNN directories, their .partial and .old
// siblings, and the latest file.

const (
	latestFile    = "latest"
	partialSuffix = ".partial" // a checkpoint being written
	prevSuffix    = ".prev"    // a complete checkpoint set aside while a rewrite of its step commits
	oldSuffix     = ".old"     // a checkpoint being removed
)

// StepName is the directory name of the checkpoint of step: step-NNNNNNNN.
func StepName(step int) string { return fmt.Sprintf("step-%08d", step) }

// parseName is the step of a complete checkpoint's directory name, and
// whether name is one (step- and at least 8 digits, nothing else).
func parseName(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "step-")
	if !ok || len(digits) < 8 {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	step, err := strconv.Atoi(digits)
	return step, err == nil
}

// leftover reports whether name is a directory a writer leaves behind when
// it dies: a .partial checkpoint, a .prev one set aside, or a .old one being
// removed.
func leftover(name string) bool {
	for _, suffix := range []string{partialSuffix, prevSuffix, oldSuffix} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if _, ok := parseName(base); ok {
				return true
			}
		}
	}
	return false
}

// entry is a complete checkpoint directory in a root.
type entry struct {
	name string
	step int
}

// scan lists the checkpoint directories of root, newest step first, and
// the leftovers of writers that died. A root that does not exist holds
// none.
func scan(fsys FS, root string) (steps []entry, leftovers []string, err error) {
	ents, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if step, ok := parseName(e.Name()); ok {
			steps = append(steps, entry{e.Name(), step})
		} else if leftover(e.Name()) {
			leftovers = append(leftovers, e.Name())
		}
	}
	slices.SortFunc(steps, func(a, b entry) int { return b.step - a.step })
	return steps, leftovers, nil
}

// List returns the names of the complete checkpoints under root, newest
// (highest step) first: directories named step-NNNNNNNN holding a group
// zarr.json. Directories still being written (.partial) are never listed. A
// root that does not exist holds none.
func List(root string) ([]string, error) {
	steps, _, err := scan(OS{}, root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range steps {
		if st, err := os.Stat(filepath.Join(root, e.name, metaFile)); err == nil && st.Mode().IsRegular() {
			names = append(names, e.name)
		}
	}
	return names, nil
}

// Latest is the checkpoint name that root/latest holds, or "" when there
// is no such file. A name that is not a checkpoint name is an error.
func Latest(root string) (string, error) { return readLatest(OS{}, root) }

func readLatest(fsys FS, root string) (string, error) {
	b, err := fsys.ReadFile(filepath.Join(root, latestFile), nil)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	name := strings.TrimSpace(string(b))
	if _, ok := parseName(name); !ok {
		return "", fmt.Errorf("checkpoint: %s holds %q, not a checkpoint name: %w",
			filepath.Join(root, latestFile), shown(b), ErrChecksum)
	}
	return name, nil
}

// writeLatest makes root/latest name the checkpoint name atomically: a
// temporary file is written and fsynced, renamed over latest, and the root
// fsynced, so that latest is always either the old name or the new one.
//
// The temporary file has a fresh random name (latest.tmp-<16 hex digits>),
// so that nothing planted in the root can be written through: the write
// never follows a link (OS.WriteFile), and the rename replaces what is
// named latest, never what it may link to.
func writeLatest(fsys FS, root, name string) error {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tmp := filepath.Join(root, latestFile+".tmp-"+hex.EncodeToString(nonce[:]))
	if err := fsys.WriteFile(tmp, strings.NewReader(name+"\n")); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, filepath.Join(root, latestFile)); err != nil {
		return err
	}
	return fsys.SyncDir(root)
}

// Resolve is what `--restart latest` means under root: the path of the
// checkpoint root/latest names if its metadata opens, else of the newest
// checkpoint whose metadata opens. With none, the error wraps
// fs.ErrNotExist. (Chunks are checked when Read reads them.)
//
// One case needs more: a writer that rewrites step N (a rerun) while step N
// is the only checkpoint sets the old step-N aside as step-N.prev for the
// moment between its two renames. If it dies right then, latest names step
// N, step-N.prev holds it, and Resolve returns that. (The next Write puts it
// back under its name.)
func Resolve(root string) (string, error) {
	path, _, err := ResolveSkipping(root)
	return path, err
}

// ResolveSkipping is Resolve, with the reason for every checkpoint it
// passed over on the way (a garbage latest, one whose metadata does not
// open), newest first, so that callers can say what they fell back past.
func ResolveSkipping(root string) (path string, skipped []error, err error) {
	name, err := Latest(root)
	if err != nil {
		skipped = append(skipped, err)
	} else if name != "" {
		path := filepath.Join(root, name)
		_, err := Open(path)
		if err == nil {
			return path, nil, nil
		}
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			if _, err := Open(path + prevSuffix); err == nil {
				return path + prevSuffix, nil, nil
			}
		}
		skipped = append(skipped, fmt.Errorf("latest names %s, which does not open: %w", name, err))
	}
	names, err := List(root)
	if err != nil {
		return "", skipped, err
	}
	for _, n := range names { // newest first
		path := filepath.Join(root, n)
		if n == name {
			continue // tried above
		}
		_, err := Open(path)
		if err == nil {
			return path, skipped, nil
		}
		skipped = append(skipped, err)
	}
	msg := fmt.Sprintf("checkpoint: no complete checkpoint in %s", root)
	if len(skipped) > 0 {
		var why []string
		for _, e := range skipped {
			why = append(why, e.Error())
		}
		msg += " (skipped: " + strings.Join(why, "; ") + ")"
	}
	return "", skipped, fmt.Errorf("%s: %w", msg, fs.ErrNotExist)
}
