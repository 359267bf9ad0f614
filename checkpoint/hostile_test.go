package checkpoint

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/internal/safefile"
)

// What a reader meets in a checkpoint folder someone else can write to:
// FIFOs, directories and links where files belong, files of gigabytes
// where bytes belong, links out of the folder. Each is refused at once, by
// a message naming the file and what is there, without reading out of the
// folder or allocating what the file's size says.

// secret is what a file outside the checkpoint folder holds; no message
// may show it.
const secret = "secret-outside-content"

// plant puts kind in place of path (removing what is there): "fifo", "dir",
// "link" (to a regular file outside, holding secret), "dangling" (a link
// to nothing), or "sparse" (a regular file of 2 GiB that takes no disk).
// It returns the link's target, if any, which no message may name.
func plant(t *testing.T, path, kind string) (target string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(path))
	switch kind {
	case "fifo":
		require.NoError(t, syscall.Mkfifo(path, 0o644))
		t.Cleanup(func() { unblock(path) })
	case "dir":
		require.NoError(t, os.Mkdir(path, 0o755))
	case "link", "dangling":
		target = filepath.Join(t.TempDir(), "outside-target")
		if kind == "link" {
			require.NoError(t, os.WriteFile(target, []byte(secret), 0o644))
		}
		require.NoError(t, os.Symlink(target, path))
	case "sparse":
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(2<<30))
		require.NoError(t, f.Close())
	default:
		t.Fatalf("no kind %q", kind)
	}
	return target
}

// unblock lets a reader blocked in opening FIFO path go (a reader that
// does not block has nothing to wait for): opening it to write ends the
// reader's wait.
func unblock(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// kindText is what a message says is there for a planted kind.
var kindText = map[string]string{
	"fifo":     "is a named pipe (FIFO), not a regular file",
	"dir":      "is a directory, not a regular file",
	"link":     "is a symbolic link, not a regular file",
	"dangling": "is a symbolic link, not a regular file",
}

// quickly runs f and fails the test if it takes more than d: a blocking
// open would take forever.
func quickly[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("still blocked after %v", time.Since(start))
		panic("unreachable")
	}
}

// allocated is the bytes f allocates (the whole process's, so run alone).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileShape is the grid of the checkpoints planted in, stored in
// hostileLayouts: plain chunks, or one shard, which each of two ranks
// reads a part of.
var (
	hostileShape   = []int{12, 10}
	hostileLayouts = []struct {
		name string
		opt  Options
	}{
		{"chunks", Options{Chunk: []int{5, 4}}},
		{"shards", Options{Shard: []int{12, 10}, Chunk: []int{3, 5}}},
	}
)

// A FIFO, a directory or a link in place of either metadata file or of a
// chunk (or shard) file: Open, Verify and Read refuse it within a second,
// naming the file and what is there (never a link's target), and the
// checkpoint is incomplete.
func TestPlantedFilesRefusedAtOnce(t *testing.T) {
	shape := hostileShape
	for _, layout := range hostileLayouts {
		for _, target := range []string{"group", "array", "chunk"} {
			for _, kind := range []string{"fifo", "dir", "link", "dangling"} {
				t.Run(layout.name+"/"+target+"/"+kind, func(t *testing.T) {
					root := t.TempDir()
					writeField(t, root, shape, 2, 3, layout.opt)
					dir := filepath.Join(root, StepName(3))
					file := map[string]string{
						"group": filepath.Join(dir, metaFile),
						"array": filepath.Join(dir, arrayName, metaFile),
						"chunk": filepath.Join(dir, arrayName, "c", "0", "0"),
					}[target]
					outside := plant(t, file, kind)
					check := func(what string, err error) {
						t.Helper()
						require.Error(t, err, what)
						require.ErrorIs(t, err, ErrIncomplete, what)
						require.Contains(t, err.Error(), file+" "+kindText[kind], what)
						if outside != "" {
							require.NotContains(t, err.Error(), outside, what)
						}
						require.NotContains(t, err.Error(), secret, what)
					}
					if target != "chunk" {
						check("Open", quickly(t, time.Second, func() error { _, err := Open(dir); return err }))
					}
					bad := quickly(t, time.Second, func() []error { return Verify(dir) })
					require.NotEmpty(t, bad)
					check("Verify", bad[0])
					if target == "chunk" {
						// The rank that reads the chunk says what is there; the
						// other names the chunk.
						errs := quickly(t, time.Second, func() []error { return readRanks(t, dir, 2, Options{}, nil) })
						requireAllFail(t, errs, ErrIncomplete, file)
						require.Contains(t, errors.Join(errs...).Error(), kindText[kind])
					}
				})
			}
		}
	}
}

// latest is read only as a regular file of a few KiB: a FIFO, a directory,
// a link (to a file outside naming an older checkpoint, or to nothing), a
// 2 GiB sparse file, garbage or nothing at all is passed over — with a
// reason naming latest and what is there, never what a link points to or
// what the file holds — and Resolve falls back to the newest checkpoint.
func TestLatestOnlyARegularFile(t *testing.T) {
	for _, kind := range []string{"fifo", "dir", "link", "dangling", "sparse", "garbage", "missing"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			for step := 1; step <= 2; step++ {
				writeField(t, root, []int{6, 5}, 1, step, Options{})
			}
			latest := filepath.Join(root, latestFile)
			var outside string
			switch kind {
			case "garbage":
				require.NoError(t, os.WriteFile(latest, []byte(secret+"\n"), 0o644))
			case "missing":
				require.NoError(t, os.Remove(latest))
			case "link":
				// Followed, it would name step 1, not the newest.
				outside = plant(t, latest, kind)
				require.NoError(t, os.WriteFile(outside, []byte(StepName(1)+"\n"), 0o644))
			default:
				outside = plant(t, latest, kind)
			}
			var path string
			var skipped []error
			var err error
			n := allocated(func() {
				quickly(t, time.Second, func() error { path, skipped, err = ResolveSkipping(root); return err })
			})
			require.NoError(t, err)
			require.Equal(t, filepath.Join(root, StepName(2)), path)
			require.Len(t, skipped, 1)
			why := skipped[0].Error()
			require.Contains(t, why, latest)
			want := map[string]string{"sparse": "is 2147483648 bytes, more than the 4096", "garbage": "does not hold a checkpoint name",
				"missing": "is missing"}[kind]
			if want == "" {
				want = kindText[kind]
			}
			require.Contains(t, why, want)
			require.NotContains(t, why, secret)
			if outside != "" {
				require.NotContains(t, why, outside)
			}
			require.Less(t, n, uint64(16<<20), "bytes allocated to resolve")

			name, err := Latest(root)
			require.Empty(t, name)
			if kind == "missing" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// With latest broken and no checkpoint to fall back to, Resolve says both.
func TestBrokenLatestAndNoCheckpoint(t *testing.T) {
	root := t.TempDir()
	plant(t, filepath.Join(root, latestFile), "fifo")
	err := quickly(t, time.Second, func() error { _, err := Resolve(root); return err })
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "no complete checkpoint in "+root)
	require.ErrorContains(t, err, kindText["fifo"])
}

// A link in place of a checkpoint folder, to a sound checkpoint outside
// the root, is neither listed nor resolved, even when latest names it: it
// is passed over with a reason that does not name its target. A link in
// place of a folder inside a checkpoint (u, u/c/<i>) is refused too.
func TestLinkedFoldersNotFollowed(t *testing.T) {
	shape := []int{8, 6}
	root, elsewhere := t.TempDir(), t.TempDir()
	writeField(t, root, shape, 1, 1, Options{Chunk: []int{4, 3}})
	writeField(t, elsewhere, shape, 1, 5, Options{Chunk: []int{4, 3}})
	target := filepath.Join(elsewhere, StepName(5))
	link := filepath.Join(root, StepName(5))
	require.NoError(t, os.Symlink(target, link))

	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(1)}, names)
	for _, latest := range []string{StepName(1), StepName(5)} {
		require.NoError(t, os.WriteFile(filepath.Join(root, latestFile), []byte(latest+"\n"), 0o644))
		path, skipped, err := ResolveSkipping(root)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(root, StepName(1)), path)
		if latest == StepName(1) {
			require.Empty(t, skipped, "latest names a sound checkpoint")
			continue
		}
		require.Len(t, skipped, 1)
		require.ErrorIs(t, skipped[0], ErrIncomplete)
		require.ErrorContains(t, skipped[0], link+" is a symbolic link, not a checkpoint folder: not followed")
		require.NotContains(t, skipped[0].Error(), elsewhere)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, latestFile), []byte(StepName(1)+"\n"), 0o644))

	// Inside a checkpoint: its array folder, then a chunk folder, a link
	// to the same files elsewhere (which would read as sound).
	writeField(t, root, shape, 1, 7, Options{Chunk: []int{4, 3}})
	writeField(t, elsewhere, shape, 1, 7, Options{Chunk: []int{4, 3}})
	dir := filepath.Join(root, StepName(7))
	for _, sub := range []string{arrayName, filepath.Join(arrayName, "c", "1")} {
		require.NoError(t, os.Rename(filepath.Join(dir, sub), filepath.Join(dir, sub)+".moved"))
		require.NoError(t, os.Symlink(filepath.Join(elsewhere, StepName(7), sub), filepath.Join(dir, sub)))
		var err error
		if sub == arrayName {
			_, err = Open(dir)
		} else {
			bad := Verify(dir)
			require.NotEmpty(t, bad)
			err = bad[0]
			requireAllFail(t, readRanks(t, dir, 1, Options{}, nil), ErrIncomplete, filepath.Join(dir, sub)+" is a symbolic link")
		}
		require.ErrorIs(t, err, ErrIncomplete, sub)
		require.ErrorContains(t, err, filepath.Join(dir, sub)+" is a symbolic link, not a folder: not followed out of the checkpoint", sub)
		require.NotContains(t, err.Error(), elsewhere)
		require.NoError(t, os.Remove(filepath.Join(dir, sub)))
		require.NoError(t, os.Rename(filepath.Join(dir, sub)+".moved", filepath.Join(dir, sub)))
	}
	require.Empty(t, Verify(dir), "put back, the checkpoint is sound")
}

// A chunk or shard file is read by the size the metadata records: a 2 GiB
// sparse file in its place is refused by its size, unread, for a whole
// chunk, a whole shard and a part of a shard alike; and metadata recording
// a size no chunk of its shape can have is refused by Open.
func TestChunkReadsBoundedByMetadata(t *testing.T) {
	shape := hostileShape
	for _, layout := range hostileLayouts {
		t.Run(layout.name, func(t *testing.T) {
			root := t.TempDir()
			writeField(t, root, shape, 1, 3, layout.opt)
			dir := filepath.Join(root, StepName(3))
			ck, err := Open(dir)
			require.NoError(t, err)
			key := ck.ChunkKeys()[0]
			file := ck.ChunkFile(key)
			recorded := ck.sums[key].Bytes
			plant(t, file, "sparse")
			var bad []error
			var errs []error
			n := allocated(func() {
				bad = quickly(t, time.Second, func() []error { return Verify(dir) })
				// Two ranks: with shards, each reads a part of the one shard.
				errs = quickly(t, time.Second, func() []error { return readRanks(t, dir, 2, Options{}, nil) })
			})
			require.Less(t, n, uint64(16<<20), "bytes allocated")
			require.NotEmpty(t, bad)
			require.ErrorIs(t, bad[0], ErrChecksum)
			require.ErrorContains(t, bad[0], file+" has 2147483648 bytes, the metadata records "+strconv.Itoa(recorded))
			requireAllFail(t, errs, ErrChecksum, file)

			// The metadata itself, sealed again, recording a chunk of 1 TiB.
			group := filepath.Join(dir, metaFile)
			var doc groupDoc
			require.NoError(t, json.Unmarshal(mustRead(t, group), &doc))
			doc.Attributes.Heat.Chunks[key] = chunkSum{CRC32C: 1, Bytes: 1 << 40}
			doc.Attributes.Heat.MetaCRC = sealZero
			b, err := marshal(doc)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(group, seal(b), 0o644))
			_, err = Open(dir)
			require.ErrorIs(t, err, ErrChecksum)
			require.ErrorContains(t, err, "records 1099511627776 bytes, want 1 to "+strconv.Itoa(ck.maxFileBytes()))
		})
	}
}

// A metadata file larger than any heat writes is refused by its size,
// unread; a range read past a file's end is refused before allocating.
func TestMetadataAndRangesBounded(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{6, 5}, 1, 2, Options{})
	dir := filepath.Join(root, StepName(2))
	group := filepath.Join(dir, metaFile)
	f, err := os.Create(group)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxMetaBytes+1))
	require.NoError(t, f.Close())
	n := allocated(func() { err = quickly(t, time.Second, func() error { _, err := Open(dir); return err }) })
	require.ErrorIs(t, err, ErrChecksum)
	require.ErrorContains(t, err, group+" is "+strconv.Itoa(maxMetaBytes+1)+" bytes, more than any metadata heat writes")
	require.Less(t, n, uint64(16<<20))

	small := filepath.Join(root, "small")
	require.NoError(t, os.WriteFile(small, []byte("0123456789"), 0o644))
	b, err := OS{}.ReadRange(small, 4, 6, nil)
	require.NoError(t, err)
	require.Equal(t, "456789", string(b))
	n = allocated(func() { _, err = OS{}.ReadRange(small, 4, 1<<30, nil) })
	require.ErrorContains(t, err, "past its end at 10 bytes")
	require.Less(t, n, uint64(1<<20))
	_, err = OS{}.ReadRange(group, 0, 1, nil)
	require.NoError(t, err, "a range of a large file is what the caller bounds")
	require.ErrorIs(t, firstErr(OS{}.ReadFile(group, 100, nil)), safefile.ErrTooLarge)
}

func firstErr(_ []byte, err error) error { return err }
