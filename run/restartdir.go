package run

import (
	"os"
	"path/filepath"
	"strings"

	"heat/checkpoint"
	"heat/io/config"
)

// restartFolders makes a restart from checkpoint ck (what --restart arg
// named) write where the command line says: its outputs into output.dir as
// the command line gives it (--out, -c, --set), else into the folder it
// restarts from; its checkpoints into checkpoint.dir as the command line
// gives it, else under a new output folder, else back into the checkpoint
// folder it restarts from. The folders a checkpoint's metadata names are
// information, never a destination: a copied (or crafted) checkpoint
// cannot send a restart into another run's folder.
func restartFolders(flags *config.Flags, arg string, cfg *config.Config, ck *checkpoint.Checkpoint) error {
	root := filepath.Dir(ck.Path())
	outGiven := flags.Gives("output.dir")
	if !outGiven {
		out, err := restartOut(flags, arg, root)
		if err != nil {
			return err
		}
		cfg.Output.Dir = out
	}
	if !flags.Gives("checkpoint.dir") {
		if outGiven {
			cfg.Checkpoint.Dir = filepath.Join(cfg.Output.Dir, "checkpoints")
		} else {
			cfg.Checkpoint.Dir = root
		}
	}
	return nil
}

// restartOut is the folder a restart continues in when the command line
// names none: for --restart latest the command line's output.dir; for a run's
// output folder that folder; for its checkpoints (the folder, its latest,
// one checkpoint) the output folder they are in, <out>/checkpoints.
func restartOut(flags *config.Flags, arg, root string) (string, error) {
	if arg == "latest" {
		here, err := flags.Resolve()
		if err != nil {
			return "", UsageError{err}
		}
		return here.Output.Dir, nil
	}
	named, _ := filepath.Abs(arg)
	ckRoot, _ := filepath.Abs(root)
	if st, err := os.Stat(arg); err == nil && st.IsDir() && named != ckRoot && !strings.HasPrefix(named, ckRoot+string(filepath.Separator)) {
		return filepath.Clean(arg), nil // a run's output folder
	}
	if filepath.Base(ckRoot) == "checkpoints" {
		return filepath.Dir(filepath.Clean(root)), nil
	}
	return "", Usagef("--restart %s: its checkpoints (in %s) are not in a run's output folder (<out>/checkpoints), so there is no folder to continue in: give --out DIR for the restart's outputs", arg, root)
}
