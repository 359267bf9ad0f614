package media

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"heat/checkpoint"
	"heat/field"
	"heat/internal/safefile"
)

// A heat checkpoint read as an input (a field, a map, a source) is read by
// the checkpoint package's reader, never by this package's Zarr reader: the
// seal and metadata are checked when it opens (checkpoint.Open), and every
// chunk a read crosses against the CRC32-C and size the metadata records
// (checkpoint.ReadBox), as a restart checks them. A checkpoint is known by
// its group zarr.json holding attributes.heat; an array folder inside one
// (its u, k, rho_c) is read through it too. A checkpoints folder or its
// latest file stands for its newest checkpoint, which must open: an older
// one is never read in its place without being named.

// ckptArray is one array of a heat checkpoint, open for reading.
type ckptArray struct {
	ck    *checkpoint.Checkpoint
	name  string // the array: u, k, rho_c or mask
	shown string // the path as given, for messages
}

// maxScanCells bounds the cells one block of a checkpoint's scan holds: a
// shard larger than this (a writer's whole box) is scanned an inner chunk
// at a time.
const maxScanCells = 1 << 22

func (c *ckptArray) shape() []int { return c.ck.Shape() }
func (c *ckptArray) close()       {}

func (c *ckptArray) read(lo, hi []int, dst []float64) error {
	return c.fail(checkpoint.ReadBox(c.ck, c.name, lo, hi, dst))
}

// scan reads the array a chunk (or, in large shards, an inner chunk) at a
// time, each checked as read does.
func (c *ckptArray) scan(fn func(vals []float64, at func(int) []int, missing string) error) error {
	dims := c.ck.Shape()
	block := c.ck.Chunk()
	if inner := c.ck.InnerChunk(); inner != nil && field.Cells(block) > maxScanCells {
		block = inner
	}
	zero := make([]int, len(dims))
	var part []float64
	return eachChunk(zero, dims, block, func(ci []int) error {
		blo, bhi := chunkBox(ci, block)
		lo, hi, ok := intersect(zero, dims, blo, bhi)
		if !ok {
			return nil
		}
		sh := boxShape(lo, hi)
		n := field.Cells(sh)
		if cap(part) < n {
			part = make([]float64, n)
		}
		part = part[:n]
		if err := c.read(lo, hi, part); err != nil {
			return err
		}
		return fn(part, func(k int) []int { return offset(lo, unravel(k, sh)) }, "")
	})
}

// fail is a checkpoint's error as this package says it: the path as given,
// then what the checkpoint package found, naming the file.
func (c *ckptArray) fail(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s", c.shown, strings.TrimPrefix(err.Error(), "checkpoint: "))
}

// openCheckpoint opens the heat checkpoint in folder dir for its array
// name; shown is the path as given.
func openCheckpoint(dir, name, shown string) (*ckptArray, error) {
	ck, err := checkpoint.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", shown, strings.TrimPrefix(err.Error(), "checkpoint: "))
	}
	if !ck.Has(name) {
		return nil, fmt.Errorf("%s is a heat checkpoint without an array %q (it holds %s): give the path of a checkpoint that holds one, or of an array's folder, such as %s",
			shown, name, strings.Join(ck.Arrays(), ", "), filepath.Join(dir, "u"))
	}
	return &ckptArray{ck: ck, name: name, shown: shown}, nil
}

// heatGroup reports whether the folder dir is a heat checkpoint: its
// zarr.json, a regular file, is a JSON object whose attributes hold heat.
// It reads the document only up to that member (a checkpoint writes it
// first), never the chunk records after it.
func heatGroup(dir string) bool {
	f, _, err := safefile.Open(filepath.Join(dir, "zarr.json"))
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 1<<30))
	found := false
	_ = eachMember(dec, func(key string) (bool, error) {
		if key != "attributes" {
			return false, nil
		}
		return true, eachMember(dec, func(key string) (bool, error) {
			found = found || key == "heat"
			return found, nil
		})
	})
	return found
}

// errStop ends a walk of eachMember early.
var errStop = errors.New("stop")

// eachMember walks the members of the JSON object dec is at: fn is given
// each key with the decoder before its value; it says whether it read the
// value itself (true), else the value is skipped. A walk fn read a value
// of and found what it sought ends there: a true from a nested walk stops
// the outer one.
func eachMember(dec *json.Decoder, fn func(key string) (bool, error)) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errStop
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		took, err := fn(key)
		switch {
		case err != nil:
			return err
		case took:
			return errStop
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// resolveRoot is the checkpoint a checkpoints folder root stands for: its
// newest complete one (as latest names it, or by its step when latest is
// missing), which must open. One that does not is an error saying why; an
// older checkpoint is never read in its place unless named.
func resolveRoot(root, shown string) (string, error) {
	path, skipped, err := checkpoint.ResolveSkipping(root)
	if err != nil {
		return "", fmt.Errorf("%s: %s", shown, strings.TrimPrefix(err.Error(), "checkpoint: "))
	}
	names, err := checkpoint.List(root)
	if err != nil {
		return "", fmt.Errorf("%s: %v", shown, err)
	}
	got := strings.TrimSuffix(filepath.Base(path), ".prev") // a rewrite's set-aside newest
	if len(names) > 0 && newerName(names[0], got) {
		why := make([]string, len(skipped))
		for i, e := range skipped {
			why[i] = strings.TrimPrefix(e.Error(), "checkpoint: ")
		}
		return "", fmt.Errorf("%s: the newest checkpoint %s does not open (%s); heat reads no older one in its place: name the checkpoint to read, such as %s",
			shown, filepath.Join(root, names[0]), strings.Join(why, "; "), path)
	}
	return path, nil
}

// newerName reports whether checkpoint name a (step-NNNNNNNN) is of a
// later step than b: names of more digits are later, else the text orders
// them.
func newerName(a, b string) bool {
	return len(a) > len(b) || len(a) == len(b) && a > b
}

// ResolveCheckpoint is the checkpoint folder path stands for when it names a
// checkpoints folder or its latest file: the newest checkpoint there, which
// must open (see resolveRoot); any other path comes back as it is. Callers
// that read one input on many ranks resolve it once with it, so that every
// rank reads the same checkpoint while a run adds new ones. Errors are
// *MapError of key.
func ResolveCheckpoint(key, path string) (string, error) {
	root, ok := checkpointRoot(path)
	if !ok {
		return path, nil
	}
	p, err := resolveRoot(root, path)
	if err != nil {
		return "", &MapError{Key: key, Path: path, Msg: err.Error()}
	}
	return p, nil
}

// checkpointRoot is the checkpoints folder path names, if it names one:
// the folder itself (it holds latest or step-NNNNNNNN entries and no
// zarr.json) or its latest file (whatever is in latest's place: the
// checkpoint package reads it only as a regular file).
func checkpointRoot(path string) (string, bool) {
	clean := filepath.Clean(path)
	if filepath.Base(clean) == "latest" {
		if _, err := os.Lstat(clean); err == nil && checkpoint.IsRoot(filepath.Dir(clean)) {
			return filepath.Dir(clean), true
		}
		return "", false
	}
	st, err := os.Lstat(clean)
	if err != nil || !st.IsDir() {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(clean, "zarr.json")); err == nil {
		return "", false
	}
	return clean, checkpoint.IsRoot(clean)
}

// inCheckpoint is the checkpoint folder and array name when dir is an
// array folder of a heat checkpoint (its u, k, rho_c or mask).
func inCheckpoint(dir string) (ck, name string, ok bool) {
	clean := filepath.Clean(dir)
	name = filepath.Base(clean)
	parent := filepath.Dir(clean)
	if !slices.Contains(append([]string{"u"}, checkpoint.MediaArrays...), name) || parent == clean {
		return "", "", false
	}
	if !heatGroup(parent) {
		return "", "", false
	}
	return parent, name, true
}
