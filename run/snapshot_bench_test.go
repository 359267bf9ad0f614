package run

import (
	"path/filepath"
	"testing"

	"heat/comm"
	"heat/comm/local"
	"heat/io/config"
	"heat/solver"
)

// BenchmarkSnapshotPNG times the parts of a PNG snapshot of a 4096² field on
// one rank with two threads: the synchronous averaging into pixels, and
// what runs beside the solver: drawing and encoding the image, and keeping
// its plane (.npy and .json).
func BenchmarkSnapshotPNG(b *testing.B) {
	cfg, err := config.Load("", []string{"grid.shape=[4096,4096]", "parallel.threads=2", "initial.kind=\"random\""})
	if err != nil {
		b.Fatal(err)
	}
	spec := specOf(cfg, nil)
	spec.Steps = 0
	err = local.Run(1, func(c comm.Comm) error {
		s, err := solver.New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		var bufs planeBufs
		plane, ny, nx, _, lo, hi, err := coarsePlane(c, viewOf(s), "", cfg.Output.ImageSize, &bufs)
		if err != nil {
			return err
		}
		b.Run("part=average", func(b *testing.B) {
			for b.Loop() {
				if _, _, _, _, _, _, err := coarsePlane(c, viewOf(s), "", cfg.Output.ImageSize, &bufs); err != nil {
					b.Fatal(err)
				}
			}
		})
		p, err := newPlaneImage(cfg, cfg.Grid.Shape, cfg.Output.Slice, cfg.Output.ImageSize, cfg.Equation.Kind, 0, 0, 0, lo, hi)
		if err != nil {
			return err
		}
		base := filepath.Join(b.TempDir(), "u-00000000")
		b.Run("part=draw+encode", func(b *testing.B) {
			for b.Loop() {
				if err := drawPlane(base+".png", plane, ny, nx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("part=plane", func(b *testing.B) {
			for b.Loop() {
				if err := snapshotPlane(base, plane, ny, nx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
