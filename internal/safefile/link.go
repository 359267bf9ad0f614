package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrLink matches (errors.Is) a *LinkError.
var ErrLink = errors.New("a link heat does not follow")

// LinkError is an input path that is a link heat does not follow: one
// whose target is anything but a regular file (a folder, a FIFO, a device,
// another link), or is missing. Target is the link's text, Mode what lstat
// found there (0 when it is missing).
type LinkError struct {
	Path, Target string
	Mode         fs.FileMode
	Missing      bool
}

func (e *LinkError) Error() string {
	if e.Missing {
		return fmt.Sprintf("%s is a symbolic link to %s, which does not exist", e.Path, e.Target)
	}
	return fmt.Sprintf("%s is a symbolic link to %s, which is %s: an input may be a link to a regular file only (followed once)",
		e.Path, e.Target, Kind(e.Mode))
}

// Is makes errors.Is(err, ErrLink) hold, and errors.Is(err, fs.ErrNotExist)
// for a link whose target is missing.
func (e *LinkError) Is(target error) bool {
	return target == ErrLink || e.Missing && target == fs.ErrNotExist
}

// Follow is the file an input path names when it may be a link to a
// regular file, as git-annex and DVC keep data: a link at path is followed
// once (its target taken relative to the link's folder) and the target
// must be a regular file, else a *LinkError names the path and what the
// target is. Anything else at path comes back as path itself, for the
// caller to take or refuse. Open the result with Open, which follows no
// further link: a target replaced by a link after Follow is refused then.
func Follow(path string) (string, error) {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	to, err := os.Readlink(path)
	if err != nil {
		return "", err
	}
	target := to
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	tst, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &LinkError{Path: path, Target: to, Missing: true}
	case err != nil:
		return "", err
	case !tst.Mode().IsRegular():
		return "", &LinkError{Path: path, Target: to, Mode: tst.Mode().Type()}
	}
	return target, nil
}
