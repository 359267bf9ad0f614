package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"heat/checkpoint"
	"heat/internal/safefile"
	"heat/io/vtk"
)

// A run's manifest lists, in its output folder, every file and folder heat
// wrote there for the run, and the checkpoint folders it wrote to: what
// --overwrite may remove, and what the run (or its restart in place) may
// replace. heat creates nothing in the folder without listing it first, and
// removes or replaces nothing the manifest does not list.
//
// On disk it is JSON lines, appended as the run goes (a crash loses none
// of what was written before it):
//
//	{"heat_manifest":1,"run":"<run id>"}
//	{"file":"report.json"}
//	{"dir":"snapshots"}
//	{"checkpoints":"/abs/path/of/checkpoint.dir"}
const manifestFile = ".heat-manifest"

// maxManifest bounds what is read of a manifest: 64 MiB is about a million
// entries, far more than any run's snapshots.
const maxManifest = 64 << 20

// manifestLine is one line of a manifest.
type manifestLine struct {
	Version     int    `json:"heat_manifest,omitempty"`
	Run         string `json:"run,omitempty"`
	File        string `json:"file,omitempty"`
	Dir         string `json:"dir,omitempty"`
	Checkpoints string `json:"checkpoints,omitempty"`
}

// manifest is an output folder's list of what one run wrote there. One
// serves every rank of the process; only the process holding the output
// folder's lock (rank 0) appends (w != nil).
type manifest struct {
	dir   string // the output folder
	runID string

	mu     sync.Mutex
	files  map[string]bool // paths relative to dir, slash-separated
	dirs   map[string]bool
	ckpts  []string // absolute checkpoint folders
	w      *os.File // nil: read only
	closed bool
	fresh  bool // made by this run (newManifest)
	gone   bool // close removed it: the run wrote nothing in the folder
}

// errNoManifest is an output folder without a manifest.
var errNoManifest = errors.New("no manifest")

// errUnfinished is a manifest cut short before its first record was
// whole (a full disk, a kill): it names no run, and so lists nothing.
var errUnfinished = errors.New("manifest without a whole first record")

// manifestHead is how every manifest's first record begins; the run id
// (hex digits) follows.
const manifestHead = `{"heat_manifest":1,"run":"`

// unfinished says whether data is what a manifest holds when the writing
// of its first record stopped part way: nothing, or a prefix of that
// record without its end.
func unfinished(data []byte) bool {
	s := string(data)
	if strings.HasPrefix(manifestHead, s) {
		return true
	}
	id, ok := strings.CutPrefix(s, manifestHead)
	return ok && strings.Trim(strings.TrimSuffix(id, `"`), "0123456789abcdef") == ""
}

// readManifest reads dir's manifest; errNoManifest when it has none.
func readManifest(dir string) (*manifest, error) {
	path := filepath.Join(dir, manifestFile)
	data, err := safefile.ReadFile(path, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoManifest
	}
	if err != nil {
		return nil, err
	}
	if unfinished(data) {
		return nil, fmt.Errorf("%s: %w", path, errUnfinished)
	}
	m := &manifest{dir: dir, files: map[string]bool{}, dirs: map[string]bool{}}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l manifestLine
		if err := json.Unmarshal(line, &l); err != nil {
			if i == len(lines)-1 {
				break // the last line, cut short by a crash
			}
			return nil, fmt.Errorf("%s, line %d: not a heat manifest: %v", path, i+1, err)
		}
		switch {
		case i == 0 && l.Version != 1:
			return nil, fmt.Errorf("%s: not a heat manifest of format 1", path)
		case l.Run != "":
			m.runID = l.Run
		case l.File != "":
			if rel, ok := inside(l.File); ok {
				m.files[rel] = true
			}
		case l.Dir != "":
			if rel, ok := inside(l.Dir); ok {
				m.dirs[rel] = true
			}
		case l.Checkpoints != "":
			m.ckpts = append(m.ckpts, l.Checkpoints)
		}
	}
	if m.runID == "" {
		return nil, fmt.Errorf("%s names no run", path)
	}
	return m, nil
}

// inside is rel as a clean slash path when it stays inside the folder it
// is relative to ("" and ".." are not).
func inside(rel string) (string, bool) {
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(filepath.FromSlash(rel)) {
		return "", false
	}
	return rel, true
}

// newManifest starts dir's manifest for run runID: exclusively, so that it
// never replaces another's (the caller removed the old one under the
// folder's lock). A first record that cannot be written whole (a full
// disk) takes the file with it: a manifest naming no run would stand in
// every later run's way.
func newManifest(dir, runID string) (*manifest, error) {
	path := filepath.Join(dir, manifestFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	m := &manifest{dir: dir, runID: runID, files: map[string]bool{}, dirs: map[string]bool{}, w: f, fresh: true}
	if err := m.append(manifestLine{Version: 1, Run: runID}); err != nil {
		f.Close()
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("and it cannot be removed: %w", rerr))
		}
		return nil, err
	}
	return m, nil
}

// continueManifest reopens m (read from its folder) for appending: a
// restart in place of the run that wrote it.
func (m *manifest) continueManifest() error {
	f, err := os.OpenFile(filepath.Join(m.dir, manifestFile), os.O_WRONLY|os.O_APPEND|safefile.NoFollow, 0)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	m.w = f
	return nil
}

// append writes one line to the manifest (the caller holds mu, or m is
// not shared yet).
func (m *manifest) append(l manifestLine) error {
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := writeManifest(m.w, append(data, '\n')); err != nil {
		return fmt.Errorf("manifest %s: %w", filepath.Join(m.dir, manifestFile), err)
	}
	return nil
}

// writeManifest writes one record to a manifest's file (tests put a full
// disk in its place).
var writeManifest = (*os.File).Write

// rel is path relative to the output folder, and whether it is inside it.
// An absolute path (a checkpoint folder the manifest names) is compared
// with the folder made absolute, and a relative one with it as given.
func (m *manifest) rel(path string) (string, bool) {
	dir := m.dir
	if filepath.IsAbs(path) != filepath.IsAbs(dir) {
		var err error
		if dir, err = filepath.Abs(dir); err != nil {
			return "", false
		}
		if path, err = filepath.Abs(path); err != nil {
			return "", false
		}
	}
	r, err := filepath.Rel(dir, path)
	if err != nil {
		return "", false
	}
	return inside(filepath.ToSlash(r))
}

// claim makes path (a file in the output folder) one the run may write:
// one the manifest lists (this run's, or that of the run it continues) or
// one that does not exist yet, which it then lists. A file the run did not
// write, or a link, is refused: heat never replaces, nor writes through,
// what it did not write. Paths outside the folder are the caller's to
// check (claimOutside).
func (m *manifest) claim(path string) error {
	rel, ok := m.rel(path)
	if !ok {
		return claimOutside(path)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := os.Lstat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s is %s: heat writes only regular files of its own, never through a link", path, safefile.Kind(st.Mode()))
	case err == nil && !m.files[rel]:
		return fmt.Errorf("%s exists and this run did not write it: heat does not replace files it did not write (move it away, or give another --out)", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return m.recordLocked(rel)
}

// claimPieces lists the pieces of a parallel VTK snapshot (rank 0): under
// MPI each process wrote its own, having checked no file was in its way.
func (m *manifest) claimPieces(pieces []vtk.Piece) error {
	for _, p := range pieces {
		if rel, ok := m.rel(p.Source); ok {
			if err := m.record(rel); err != nil {
				return err
			}
		}
	}
	return nil
}

// record lists rel, a file this run wrote, if it is not listed yet.
func (m *manifest) record(rel string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recordLocked(rel)
}

// recordLocked is record, the caller holding mu.
func (m *manifest) recordLocked(rel string) error {
	if m.files[rel] {
		return nil
	}
	m.files[rel] = true
	if m.w == nil {
		return nil
	}
	return m.append(manifestLine{File: rel})
}

// claimDir makes path a folder of the run, creating it (and its parents
// inside the output folder) if need be. A folder that exists may be
// anyone's (the run only adds claimed files to it); a link is refused.
func (m *manifest) claimDir(path string) error {
	rel, ok := m.rel(path)
	if !ok {
		return os.MkdirAll(path, 0o755)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		p := filepath.Join(m.dir, filepath.FromSlash(sub))
		st, err := os.Lstat(p)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is %s, not a folder heat made", p, safefile.Kind(st.Mode()))
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if !m.dirs[sub] {
			m.dirs[sub] = true
			if m.w != nil {
				if err := m.append(manifestLine{Dir: sub}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// recordCheckpoints lists the checkpoint folder dir as one the run writes
// to (its own checkpoints there are --overwrite's to remove).
func (m *manifest) recordCheckpoints(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.ckpts, abs) {
		return nil
	}
	m.ckpts = append(m.ckpts, abs)
	if m.w == nil {
		return nil
	}
	return m.append(manifestLine{Checkpoints: abs})
}

// close syncs and closes the manifest (once). A manifest this run made
// whose files and folders were never written (a run refused before its
// work) goes too: it would only stand in the next run's way.
func (m *manifest) close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil || m.closed {
		return nil
	}
	m.closed = true
	err := m.w.Sync()
	if cerr := m.w.Close(); err == nil {
		err = cerr
	}
	if m.fresh && !m.anyExists() {
		rerr := os.Remove(filepath.Join(m.dir, manifestFile))
		m.gone = rerr == nil || errors.Is(rerr, fs.ErrNotExist)
		if err == nil && !m.gone {
			err = rerr
		}
	}
	return err
}

// wroteNothing says whether the run left nothing in the folder: no
// manifest taken (refused before it), or one close removed.
func (m *manifest) wroteNothing() bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gone
}

// anyExists says whether any file the manifest lists exists, any folder
// it lists holds anything, or any checkpoint folder it names holds a
// checkpoint: an empty folder the run made is not something it wrote (a
// run refused after it made its checkpoint folder left nothing).
func (m *manifest) anyExists() bool {
	for rel := range m.files {
		if exists(filepath.Join(m.dir, filepath.FromSlash(rel))) {
			return true
		}
	}
	for rel := range m.dirs {
		if ents, err := os.ReadDir(filepath.Join(m.dir, filepath.FromSlash(rel))); err == nil && len(ents) > 0 {
			return true
		}
	}
	for _, dir := range m.ckpts {
		if names, err := checkpoint.List(dir); err == nil && len(names) > 0 {
			return true
		}
	}
	return false
}

// removeListed removes what the manifest lists in its folder: its files
// (regular files only), then its folders deepest first where they are
// empty, then the manifest itself. What is left that the run did not write
// (a file turned into something else, what a folder of the run's holds
// beside its files) is returned relative to the folder, for a warning.
func (m *manifest) removeListed() (left []string, err error) {
	files := sortedKeys(m.files)
	for _, rel := range files {
		p := filepath.Join(m.dir, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return left, err
		}
		if !st.Mode().IsRegular() {
			left = append(left, rel)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return left, fmt.Errorf("--overwrite: cannot remove %s: %w", p, err)
		}
	}
	dirs := sortedKeys(m.dirs)
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, rel := range dirs {
		p := filepath.Join(m.dir, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		if err != nil || !st.IsDir() {
			continue
		}
		if err := os.Remove(p); err != nil {
			left = append(left, m.foreignIn(rel)...)
		}
	}
	if err := os.Remove(filepath.Join(m.dir, manifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return left, fmt.Errorf("--overwrite: cannot remove %s: %w", filepath.Join(m.dir, manifestFile), err)
	}
	return left, nil
}

// foreignIn names what the run's folder rel holds that the run did not
// write, relative to the output folder: its entries but the run's own
// folders (named on their own) and a checkpoint folder's lock; the folder
// itself when that leaves nothing.
func (m *manifest) foreignIn(rel string) []string {
	ents, _ := os.ReadDir(filepath.Join(m.dir, filepath.FromSlash(rel)))
	var out []string
	for _, e := range ents {
		sub := rel + "/" + e.Name()
		if m.dirs[sub] || e.Name() == ".lock" {
			continue
		}
		out = append(out, sub)
	}
	if len(out) == 0 && len(ents) == 0 {
		out = append(out, rel)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// claimOutside checks a file the run writes outside its output folder
// (--report FILE): it may not exist yet, or be a regular file holding a
// heat report (a later run's report replaces an earlier one's); anything
// else, a link included, is refused.
func claimOutside(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is %s: heat writes only regular files, never through a link", path, safefile.Kind(st.Mode()))
	}
	data, err := safefile.ReadFile(path, 1<<20)
	var r struct {
		Status  *string `json:"status"`
		Version *string `json:"version"`
	}
	if err != nil || json.Unmarshal(data, &r) != nil || r.Status == nil || r.Version == nil {
		return fmt.Errorf("%s exists and is not a heat run report: heat does not replace files it did not write", path)
	}
	return nil
}
