package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"heat/checkpoint"
	"heat/io/config"
)

// A run reads some files again at a restart: the source's field and the
// time tables of faces and of the source's amplitude (maps and the initial
// field come from the checkpoint). Each checkpoint records the SHA-256 of
// each as the run read it; a restart whose files differ is refused naming
// the file, or with --allow-input-changes continues and records the change.

// stepInput is one file a run reads at each start: the config key that
// names it, its path and its digest.
type stepInput struct {
	Key    string `json:"key"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// stepInputs are the files cfg reads as it steps, what a restart reads
// again (inputsOf a restart, less its checkpoints), each path once.
func stepInputs(cfg *config.Config) []stepInput {
	var out []stepInput
	seen := map[string]bool{}
	for _, in := range inputsOf(cfg, []*checkpoint.Checkpoint{}) {
		if !seen[in.path] {
			seen[in.path] = true
			out = append(out, stepInput{Key: in.key, Path: in.path})
		}
	}
	return out
}

// digestInputs sets the digest of each input: SHA-256 over a file's bytes,
// or over a folder's (a Zarr array, a checkpoint) regular files, each as
// its slash path, a NUL, its length and its bytes, in path order.
func digestInputs(ins []stepInput) error {
	for i := range ins {
		d, err := digestPath(ins[i].Path)
		if err != nil {
			return Usagef("%s: %s: %v", ins[i].Key, ins[i].Path, err)
		}
		ins[i].SHA256 = d
	}
	return nil
}

func digestPath(path string) (string, error) {
	h := sha256.New()
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		if err := hashFile(h, path); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	for _, p := range files {
		rel, _ := filepath.Rel(path, p)
		if strings.HasPrefix(filepath.Base(rel), ".") {
			continue // a lock or a temporary file of the folder's writer
		}
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		if err := hashFile(h, p); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%d\x00", st.Size())
	_, err = io.Copy(h, f)
	return err
}

// inputsExtra is the inputs as a checkpoint's metadata keeps them.
func inputsExtra(ins []stepInput) []any {
	out := make([]any, len(ins))
	for i, in := range ins {
		out[i] = map[string]any{"key": in.Key, "path": in.Path, "sha256": in.SHA256}
	}
	return out
}

// recordedInputs reads what inputsExtra wrote; ok is false where the checkpoint
// records none (written before heat recorded them).
func recordedInputs(ck *checkpoint.Checkpoint) (ins []stepInput, ok bool) {
	list, ok := ck.Meta().Extra["inputs"].([]any)
	if !ok {
		return nil, false
	}
	for _, x := range list {
		m, _ := x.(map[string]any)
		key, _ := m["key"].(string)
		path, _ := m["path"].(string)
		sum, _ := m["sha256"].(string)
		ins = append(ins, stepInput{Key: key, Path: path, SHA256: sum})
	}
	return ins, true
}

// changedInputs compares the inputs a restart reads now with those the
// checkpoint recorded: each file that differs, is new or is no longer read,
// in words.
func changedInputs(then, now []stepInput) []string {
	var out []string
	was := map[string]stepInput{}
	for _, in := range then {
		was[in.Path] = in
	}
	for _, in := range now {
		old, ok := was[in.Path]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s was not read by the run the checkpoint continues", in.Key, in.Path))
		case old.SHA256 != in.SHA256:
			out = append(out, fmt.Sprintf("%s: %s changed since the checkpoint was written (sha256 %.12s… then, %.12s… now)", in.Key, in.Path, old.SHA256, in.SHA256))
		}
		delete(was, in.Path)
	}
	for _, in := range then {
		if _, ok := was[in.Path]; ok {
			out = append(out, fmt.Sprintf("%s: %s is no longer read", in.Key, in.Path))
		}
	}
	return out
}

// readInputs (rank 0) takes the digests of the files the run reads as it
// steps; a restart compares them with those its checkpoint recorded. A
// file that changed is an error naming it, unless allow (then a warning,
// and the changes are returned for the report).
func readInputs(cfg *config.Config, restarts []*checkpoint.Checkpoint, allow, rank0 bool, warn func(string, ...any)) (ins []stepInput, changed []string, err error) {
	if !rank0 {
		return nil, nil, nil
	}
	ins = stepInputs(cfg)
	if err := digestInputs(ins); err != nil {
		return nil, nil, err
	}
	if restarts == nil {
		return ins, nil, nil
	}
	then, ok := recordedInputs(restarts[0])
	if !ok {
		return ins, nil, nil // a checkpoint from before heat recorded them
	}
	changed = changedInputs(then, ins)
	if len(changed) == 0 {
		return ins, nil, nil
	}
	if !allow {
		return nil, nil, Usagef("cannot restart from %s: the run would not reproduce the straight run: %s; restore the files as they were, or give --allow-input-changes to continue with them as they are (the report records the change)",
			restarts[0].Path(), strings.Join(changed, "; "))
	}
	for _, c := range changed {
		warn("--allow-input-changes: %s", c)
	}
	return ins, changed, nil
}
