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

	"heat/internal/safefile"
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

// stepEntry is an entry of a root named as a complete checkpoint
// (step-NNNNNNNN), folder or not.
type stepEntry struct {
	entry
	mode fs.FileMode // its type, as the directory lists it (a link is a link)
}

// stepEntries lists the entries of root named as complete checkpoints,
// newest step first: the folders, and what else stands under such a name
// (a link, a file), which no reader follows into. A root that does not
// exist holds none.
func stepEntries(fsys FS, root string) ([]stepEntry, error) {
	ents, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var steps []stepEntry
	for _, e := range ents {
		if step, ok := parseName(e.Name()); ok {
			steps = append(steps, stepEntry{entry{e.Name(), step}, e.Type()})
		}
	}
	slices.SortFunc(steps, func(a, b stepEntry) int { return b.step - a.step })
	return steps, nil
}

// notFollowed is the reason a reader passes over what stands in root under
// a checkpoint's name but is not a folder. A link's target is not named:
// it is not the checkpoint folder's to say.
func notFollowed(root string, e stepEntry) error {
	return fmt.Errorf("checkpoint: %s is %s, not a checkpoint folder: not followed: %w",
		filepath.Join(root, e.name), safefile.Kind(e.mode), ErrIncomplete)
}

// IsRoot says whether dir is a checkpoint root: it has a latest or an
// entry named as a complete checkpoint (step-NNNNNNNN), of whatever kind —
// a root whose latest is missing or broken is one all the same, and
// Resolve falls back in it.
func IsRoot(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, latestFile)); err == nil {
		return true
	}
	steps, err := stepEntries(OS{}, dir)
	return err == nil && len(steps) > 0
}

// List returns the names of the complete checkpoints under root, newest
// (highest step) first: folders (not links to folders) named
// step-NNNNNNNN holding a group zarr.json that is a regular file.
// Directories still being written (.partial) are never listed. A root that
// does not exist holds none.
func List(root string) ([]string, error) {
	fsys := OS{}
	steps, err := stepEntries(fsys, root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range steps {
		if !e.mode.IsDir() {
			continue
		}
		if st, err := fsys.Lstat(filepath.Join(root, e.name, metaFile)); err == nil && st.Mode().IsRegular() {
			names = append(names, e.name)
		}
	}
	return names, nil
}

// Latest is the checkpoint name that root/latest holds, or "" when there
// is no such file. A name that is not a checkpoint name is an error, and
// so is anything but a regular file of at most maxLatestBytes there (a
// link, a FIFO, a directory: neither followed nor waited on).
func Latest(root string) (string, error) { return readLatest(OS{}, root) }

// maxLatestBytes bounds what is read of root/latest: a step name and a
// newline are 14 bytes as Write writes them; a few KiB leave room for what
// an editor adds, and none for a planted file of gigabytes.
const maxLatestBytes = 4 << 10

func readLatest(fsys FS, root string) (string, error) {
	file := filepath.Join(root, latestFile)
	b, err := fsys.ReadFile(file, maxLatestBytes, nil)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case errors.Is(err, safefile.ErrNotRegular):
		return "", fmt.Errorf("checkpoint: %w: %w", err, ErrIncomplete)
	case errors.Is(err, safefile.ErrTooLarge):
		return "", fmt.Errorf("checkpoint: %w: %w", err, ErrChecksum)
	case err != nil:
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	// What it holds is not shown: a step name is the only thing it may
	// hold, and anything else is no message's business.
	name := strings.TrimSpace(string(b))
	if _, ok := parseName(name); !ok {
		return "", fmt.Errorf("checkpoint: %s does not hold a checkpoint name (step-NNNNNNNN; it holds %d bytes that are not one): %w",
			file, len(b), ErrChecksum)
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
// Nothing outside root is read: latest is read only as a regular file (a
// link, a FIFO, a directory or an oversized file in its place is passed
// over, unread), and the checkpoints are root's own folders (one that is a
// link to a folder elsewhere is passed over, not followed). A latest that
// is missing, or passed over, does not stop the fallback to the newest
// checkpoint.
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

// ResolveSkipping is Resolve, with the reason for everything it passed
// over on the way (a latest missing, unreadable or naming a checkpoint
// that does not open, a link in place of a checkpoint folder, a checkpoint
// whose metadata does not open), newest first, so that callers can say
// what they fell back past.
func ResolveSkipping(root string) (path string, skipped []error, err error) {
	fsys := OS{}
	steps, err := stepEntries(fsys, root)
	if err != nil {
		return "", nil, err
	}
	name, err := readLatest(fsys, root)
	switch {
	case err != nil:
		skipped = append(skipped, err)
	case name == "" && len(steps) > 0:
		skipped = append(skipped, fmt.Errorf("checkpoint: %s is missing: %w", filepath.Join(root, latestFile), ErrIncomplete))
	case name != "":
		path, err := openLatest(fsys, root, name)
		if err == nil {
			return path, nil, nil
		}
		skipped = append(skipped, err)
	}
	for _, e := range steps { // newest first
		if e.name == name {
			continue // tried above
		}
		if !e.mode.IsDir() {
			skipped = append(skipped, notFollowed(root, e))
			continue
		}
		path := filepath.Join(root, e.name)
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

// openLatest is the path of checkpoint name, which root/latest names, if it
// is a folder of root whose metadata opens (or, with step-N itself absent,
// its step-N.prev: see Resolve), else why not.
func openLatest(fsys FS, root, name string) (string, error) {
	path := filepath.Join(root, name)
	st, err := fsys.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		prev := path + prevSuffix
		if st, err := fsys.Lstat(prev); err == nil && st.IsDir() {
			if _, err := Open(prev); err == nil {
				return prev, nil
			}
		}
		return "", fmt.Errorf("checkpoint: latest names %s, which is not there: %w", name, ErrIncomplete)
	case err != nil:
		return "", fmt.Errorf("checkpoint: latest names %s: %w", name, err)
	case !st.IsDir():
		return "", fmt.Errorf("latest names %s, which does not open: %w", name, notFollowed(root, stepEntry{mode: st.Mode().Type(), entry: entry{name: name}}))
	}
	if _, err := Open(path); err != nil {
		return "", fmt.Errorf("latest names %s, which does not open: %w", name, err)
	}
	return path, nil
}
