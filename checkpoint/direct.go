package checkpoint

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Large files (a shard, a chunk) are written around the page cache where
// the filesystem allows it (O_DIRECT on Linux): the buffered write's copy
// into the cache, its page management and the kernel's writeback cost the
// run about as much CPU as compressing the data (4096², 134 MB a
// checkpoint: 0.054 s of write calls a checkpoint, with no core idle for
// them). A file is written from an aligned staging buffer in whole blocks;
// the last block is padded and the file truncated to its length before the
// fsync. Filesystems that refuse O_DIRECT (tmpfs, some overlays) get the
// buffered write.

// directMin is the smallest file written direct (metadata stays buffered).
const directMin = 1 << 20

// directAlign is the alignment O_DIRECT asks of buffer addresses, file
// offsets and lengths (the logical block size; 4096 covers 512-byte
// devices too).
const directAlign = 4096

// directStage is the staging buffer's size: whole blocks, large enough
// that a write call moves megabytes.
const directStage = 8 << 20

// StageBytes is the memory of one file being written direct: its staging
// buffer, with room to align it.
const StageBytes = directStage + directAlign

// directFile is an io.Writer onto a file opened with O_DIRECT.
type directFile struct {
	f     *os.File
	stage []byte // aligned, cap directStage; len: bytes staged
	n     int64  // bytes accepted
}

// alignedStage is a staging buffer of directStage bytes starting on a
// directAlign boundary, from the spare buffers.
func alignedStage() (buf, whole []byte) {
	whole = spare.take(StageBytes)
	off := int(-uintptr(unsafe.Pointer(&whole[0])) & (directAlign - 1))
	return whole[off : off : off+directStage], whole
}

func (d *directFile) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := copy(d.stage[len(d.stage):cap(d.stage)], p)
		d.stage, p = d.stage[:len(d.stage)+k], p[k:]
		d.n += int64(k)
		if len(d.stage) == cap(d.stage) {
			if _, err := d.f.Write(d.stage); err != nil {
				return total - len(p), err
			}
			d.stage = d.stage[:0]
		}
	}
	return total, nil
}

// finish writes the staged tail, padded with zeros to a whole block, and
// truncates the file to the bytes written.
func (d *directFile) finish() error {
	if len(d.stage) == 0 {
		return d.f.Truncate(d.n) // the probe block, if nothing was written
	}
	padded := (len(d.stage) + directAlign - 1) &^ (directAlign - 1)
	tail := d.stage[:padded]
	clear(tail[len(d.stage):])
	if _, err := d.f.Write(tail); err != nil {
		return err
	}
	return d.f.Truncate(d.n)
}

// large reports whether src is a file for the direct path: anything but a
// reader of fewer than directMin bytes.
func large(src io.WriterTo) bool {
	if r, ok := src.(interface{ Len() int }); ok {
		return r.Len() >= directMin
	}
	return true
}

// writeDirect writes src to path through O_DIRECT, fsyncs and closes it;
// ok is false, with nothing written, where the filesystem refuses O_DIRECT.
func writeDirect(path string, src io.WriterTo) (ok bool, err error) {
	f, ok, err := openDirect(path)
	if !ok || err != nil {
		return ok, err
	}
	stage, whole := alignedStage()
	defer spare.give(whole)
	// Some filesystems take the flag and refuse the writes: one block
	// written first tells (the data overwrites it, the truncate trims it).
	if _, err := f.Write(stage[:directAlign]); err != nil {
		f.Close()
		if errors.Is(err, syscall.EINVAL) {
			return false, nil
		}
		return true, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return true, err
	}
	d := &directFile{f: f, stage: stage}
	if _, err := src.WriteTo(d); err != nil {
		f.Close()
		return true, err
	}
	if err := d.finish(); err != nil {
		f.Close()
		return true, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return true, err
	}
	return true, f.Close()
}
