// Package checkpoint writes and reads heat's checkpoints: collective,
// chunked, zstd-compressed and checksummed snapshots of a distributed field,
// each stored as a Zarr v3 group so that any Zarr reader opens it without
// heat, and each restartable on any number of ranks.
//
// On disk, under a checkpoint root directory:
//
//	root/step-00000100/          one complete checkpoint (a Zarr v3 group)
//	  zarr.json                  group metadata; attributes.heat holds the
//	                             format version, step, time, writer rank count,
//	                             the run's config, solver state and the
//	                             CRC32-C and size of every chunk file
//	  u/zarr.json                array metadata: float64, the global shape, a
//	                             regular chunk grid, codecs [bytes, zstd]
//	  u/c/<i>/<j>[/<k>]          one compressed chunk
//	  k/, rho_c/, mask/          a heterogeneous run's media (Meta.Arrays):
//	                             arrays like u (mask uint8), listed with
//	                             their checksums in attributes.heat.arrays
//	root/step-00000200.partial/  being written; never read
//	root/latest                  the name of the newest complete checkpoint
//
// A writer that dies can also leave step-N.old (a checkpoint being removed)
// and step-N.prev (a complete checkpoint set aside while a rewrite of the
// same step commits); the next successful Write clears them all.
//
// The chunk grid does not follow the decomposition. Write gathers each chunk
// on one rank (the owner of the chunk's first cell), which assembles,
// compresses and writes it; Read lets every rank read only the chunks that
// cross its box. A checkpoint written by N ranks therefore restarts on M.
//
// Write commits in steps that leave the root usable after a crash at any
// point: chunks go into step-N.partial and are fsynced, the ranks agree that
// all of them succeeded, rank 0 writes and fsyncs the metadata, renames the
// directory to step-N, fsyncs the root and only then replaces latest
// atomically. root/latest therefore always names a complete checkpoint, or
// does not exist (for the one exception, rewriting the only checkpoint's
// step, see Resolve). One root has one writer at a time.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"heat/internal/safefile"
)

// Format is the version of heat's layout inside the Zarr group (the
// attributes.heat object) of a checkpoint of the field alone. Open refuses
// any version but Format and MediaFormat.
const Format = 2

// MediaFormat is the version of a checkpoint that holds arrays beside the
// field (Meta.Arrays: the media), listed in attributes.heat.arrays. A heat
// from before media reads Format only, so it refuses such a checkpoint
// rather than continue it in a uniform medium.
const MediaFormat = 3

// Sentinel errors; match them with errors.Is. Returned errors wrap them with
// a message that names the checkpoint file or chunk at fault.
var (
	// ErrIncomplete: the checkpoint is missing something: a zarr.json, a
	// chunk file, or it is still a .partial directory.
	ErrIncomplete = errors.New("checkpoint incomplete")
	// ErrChecksum: stored bytes are corrupted: a chunk's CRC32-C or size
	// does not match the metadata, a chunk does not decompress to its size,
	// or a metadata file is not valid JSON.
	ErrChecksum = errors.New("checkpoint corrupted")
	// ErrIncompatible: the checkpoint is well formed but not one this
	// package reads, or not one that fits the caller's grid: an unknown
	// format version, data type, codec or chunk key encoding, or another
	// shape or number of axes.
	ErrIncompatible = errors.New("checkpoint incompatible")
)

// Meta is what a checkpoint records besides the field.
type Meta struct {
	Step  int     // time step the field belongs to
	Time  float64 // simulated time at Step
	Ranks int     // number of ranks that wrote the checkpoint; filled by Write
	// Config is the resolved run config, stored verbatim; it must be valid
	// JSON (or empty, stored as null).
	Config json.RawMessage
	// Extra is the solver state needed to continue exactly (for example
	// "equation" or "converged"). It round-trips through JSON, so numbers
	// come back as float64.
	Extra map[string]any
	// Arrays are what Write stores beside the field, each once: the media
	// of a heterogeneous run (MediaArrays). nil for a uniform medium, whose
	// checkpoint is then exactly what it was before media (Format). Open
	// leaves it nil: Checkpoint.Arrays names them and ReadArray reads them.
	Arrays []Array
}

// Options tune Write and Read. The zero value is valid.
type Options struct {
	// Chunk is the chunk shape in C order. nil or empty chooses about 2 MiB
	// chunks (2^18 values) shaped like the grid; an axis longer than the
	// grid is cut to the grid.
	Chunk []int
	// Shard, when set, is the shard shape in C order (cut to the grid):
	// every file holds one shard of inner chunks of shape Chunk (which must
	// divide it; empty chooses a divisor near 2 MiB), Zarr's sharding_indexed
	// codec. Shards the size of the ranks' boxes give one file per writer.
	Shard []int
	// Level is the zstd level, mapped to the encoder as by
	// zstd.EncoderLevelFromZstd; 0 means 1.
	Level int
	// Keep is how many of the newest complete checkpoints to keep; older
	// ones are removed after a successful commit. 0 keeps all.
	Keep int
	// Workers is the number of goroutines a rank uses to compress and write
	// (or read and decompress) its chunks; 0 means 1.
	Workers int
	// FS does every file operation; nil is the operating system. Tests use
	// it to fail any operation on any rank.
	FS FS
	// RunID is the writing run's id (Meta.Extra["run_id"]): pruning and the
	// cleanup of leftovers touch only this run's checkpoints, and of those
	// only the files a checkpoint is made of. "" owns every checkpoint of
	// the root (a library caller that keeps a root to itself).
	RunID string
	// Lock, when set, is the root's lock the writer holds (LockRoot): a
	// commit checks it is still the root's, so that a root deleted (or its
	// lock removed) under the run fails the checkpoint instead of writing
	// into a folder made anew.
	Lock *Lock
}

// Info describes a checkpoint that Write committed.
type Info struct {
	Step   int
	Path   string  // the checkpoint directory, root/step-NNNNNNNN
	Bytes  int64   // bytes stored: every chunk file and every zarr.json file
	Raw    int64   // bytes of the values themselves: 8 per cell (u), and per array its value's size
	WriteS float64 // seconds this rank spent in Write
	// Foreign (rank 0) names what the commit's pruning left alone in the
	// root: other runs' checkpoints and leftovers, and this run's that hold
	// files heat did not write.
	Foreign []string
}

// FS is every file operation the package does, so that tests can fail any
// of them on any rank.
type FS interface {
	// MkdirAll creates path and any missing parents.
	MkdirAll(path string) error
	// Mkdir creates the folder path, whose parent must exist; one that
	// exists already is no error.
	Mkdir(path string) error
	// WriteFile creates (or truncates) path, writes what src writes to it
	// (bytes.NewReader of the contents, or a shard being compressed),
	// fsyncs and closes it.
	WriteFile(path string, src io.WriterTo) error
	// ReadFile returns the contents of the regular file path, read into
	// buf's storage when it has room (buf may be nil). A file larger than
	// max bytes is refused (safefile.ErrTooLarge) before anything is read
	// or allocated; a link, a FIFO, a device or a directory at path is
	// refused at once (safefile.ErrNotRegular), never followed or waited on.
	ReadFile(path string, max int64, buf []byte) ([]byte, error)
	Rename(oldpath, newpath string) error
	RemoveAll(path string) error
	// SyncDir fsyncs a directory, making the entries created, renamed or
	// removed in it durable.
	SyncDir(path string) error
	ReadDir(path string) ([]os.DirEntry, error)
	// Lstat describes what is at path itself: a link there is not followed.
	Lstat(path string) (fs.FileInfo, error)
	// Size is the size of the regular file path in bytes; anything else
	// there is refused as ReadFile refuses it.
	Size(path string) (int64, error)
	// ReadRange returns n bytes of the regular file path from offset off,
	// read into buf's storage when it has room; a range past the file's
	// end is refused before anything is allocated, and so is what ReadFile
	// refuses.
	ReadRange(path string, off int64, n int, buf []byte) ([]byte, error)
}

// OS is the FS of the operating system.
type OS struct{}

func (OS) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

func (OS) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// WriteFile never follows a link at path (O_NOFOLLOW): a symlink planted
// where a checkpoint file goes fails the write instead of being written
// through.
func (OS) WriteFile(path string, src io.WriterTo) error {
	if large(src) {
		if ok, err := writeDirect(path, src); ok || err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|safefile.NoFollow, 0o644)
	if err != nil {
		return err
	}
	if _, err := src.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The OS's reads go through safefile: only regular files are opened, never
// through a link and never blocking (a FIFO planted in a checkpoint hung
// heat for good), and each file's size is bounded before it is read.

func (OS) ReadFile(path string, max int64, buf []byte) ([]byte, error) {
	return safefile.ReadFileInto(path, max, buf)
}

func (OS) ReadRange(path string, off int64, n int, buf []byte) ([]byte, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if off < 0 || n < 0 || off > st.Size() || int64(n) > st.Size()-off {
		return nil, fmt.Errorf("read %s at %d+%d: past its end at %d bytes: %w", path, off, n, st.Size(), io.ErrUnexpectedEOF)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("read %s at %d+%d: %w", path, off, n, err)
	}
	return buf, nil
}

func (OS) Size(path string) (int64, error) {
	st, err := safefile.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (OS) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

func (OS) Rename(oldpath, newpath string) error       { return os.Rename(oldpath, newpath) }
func (OS) RemoveAll(path string) error                { return os.RemoveAll(path) }
func (OS) ReadDir(path string) ([]os.DirEntry, error) { return os.ReadDir(path) }

func (OS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// fsOf is opt's FS, or the operating system's.
func fsOf(opt Options) FS {
	if opt.FS == nil {
		return OS{}
	}
	return opt.FS
}
