package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"heat/internal/atomicfile"
	"heat/io/heatmap"
	"heat/io/report"
)

// MovieOptions are heat render --movie's: the GIF to write (default
// <snapshots>/u.gif), a fixed colour range (nil: the min and max over every
// frame's data), the colour map ("": the run's) and the longest side of a
// frame's field in pixels (0: as the snapshots were drawn).
type MovieOptions struct {
	Out, Cmap string
	Range     []float64
	Size      int
}

// movieDelay is the time a frame shows, in hundredths of a second.
const movieDelay = 10

// maxMovieBytes bounds the frames a movie holds while it encodes them (a
// byte a pixel): beyond it the frames must be drawn smaller.
const maxMovieBytes = 2 << 30

// movieFrame is one snapshot's plane: its files and what it shows.
type movieFrame struct {
	npy  string
	step int
	p    *planeImage
}

// Movie assembles the snapshots of a run into an animated GIF: arg is the
// run's output folder or its snapshots folder. Each frame is a snapshot's
// plane (u-NNNNNNNN.npy, in step order) drawn as the snapshot was
// (drawPlane's options), all with one colour range and of one size. It
// says what it wrote.
func Movie(arg string, o MovieOptions) (string, error) {
	if err := checkDrawing("render --movie", o.Range, o.Cmap, o.Size); err != nil {
		return "", err
	}
	if o.Out != "" && !strings.EqualFold(filepath.Ext(o.Out), ".gif") {
		return "", Usagef("render --movie: -o %s: a movie is a GIF (want a file ending in .gif)", o.Out)
	}
	dir, frames, err := movieFrames(arg)
	if err != nil {
		return "", err
	}
	if o.Out == "" {
		o.Out = filepath.Join(dir, "u.gif")
	}

	// One colour range for every frame.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range frames {
		lo, hi = min(lo, float64(f.p.Min)), max(hi, float64(f.p.Max))
	}
	if len(o.Range) == 2 {
		lo, hi = o.Range[0], o.Range[1]
	}
	for _, f := range frames {
		f.p.Range = nil
		if lo < hi {
			f.p.Range = []float64{lo, hi}
		}
		// Every frame's own range the same, for the flat and the empty.
		f.p.Min, f.p.Max = report.Float(lo), report.Float(hi)
		if o.Cmap != "" {
			f.p.Cmap = o.Cmap
		}
		if o.Size > 0 {
			f.p.Size = o.Size
		}
	}

	images, err := drawFrames(frames)
	if err != nil {
		return "", err
	}
	g := &gif.GIF{Image: images, Delay: make([]int, len(images)), LoopCount: 0}
	for i := range g.Delay {
		g.Delay[i] = movieDelay
	}
	b := images[0].Rect
	g.Config = image.Config{ColorModel: images[0].Palette, Width: b.Dx(), Height: b.Dy()}
	if err := atomicfile.Write(o.Out, func(w io.Writer) error { return gif.EncodeAll(w, g) }); err != nil {
		return "", fmt.Errorf("render --movie: %w", err)
	}
	rng := "each frame's own colour range"
	if lo < hi {
		rng = fmt.Sprintf("colour range [%.4g, %.4g]", lo, hi)
	}
	count := fmt.Sprintf("%d frames, steps %d to %d", len(frames), frames[0].step, frames[len(frames)-1].step)
	if len(frames) == 1 {
		count = fmt.Sprintf("1 frame, step %d", frames[0].step)
	}
	return fmt.Sprintf("%s: %s, %d×%d pixels, %s", o.Out, count, b.Dx(), b.Dy(), rng), nil
}

// movieFrames finds the snapshot planes of the run arg names (its output
// folder or its snapshots folder), in step order, each with its
// description.
func movieFrames(arg string) (dir string, frames []*movieFrame, err error) {
	dir = arg
	if st, err := os.Stat(filepath.Join(arg, "snapshots")); err == nil && st.IsDir() {
		dir = filepath.Join(arg, "snapshots")
	}
	if st, err := os.Stat(dir); err != nil {
		return "", nil, UsageError{fmt.Errorf("render --movie: %w", err)}
	} else if !st.IsDir() {
		return "", nil, Usagef("render --movie: %s is not a folder (want a run's output folder or its snapshots folder)", arg)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, UsageError{fmt.Errorf("render --movie: %w", err)}
	}
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), "u-")
		if digits, ok = strings.CutSuffix(digits, ".npy"); !ok || e.IsDir() {
			continue
		}
		step, err := strconv.Atoi(digits)
		if err != nil || step < 0 {
			continue
		}
		frames = append(frames, &movieFrame{npy: filepath.Join(dir, e.Name()), step: step})
	}
	if len(frames) == 0 {
		return "", nil, Usagef("render --movie: no snapshot planes (u-NNNNNNNN.npy) in %s: a run keeps one beside each field image it draws (output.formats with \"png\")", dir)
	}
	slices.SortFunc(frames, func(a, b *movieFrame) int { return a.step - b.step })
	for _, f := range frames {
		meta := strings.TrimSuffix(f.npy, ".npy") + ".json"
		data, err := os.ReadFile(meta)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, Usagef("render --movie: %s has no %s beside it (the description of its plane)", f.npy, filepath.Base(meta))
		}
		if err != nil {
			return "", nil, err
		}
		f.p = new(planeImage)
		if err := json.Unmarshal(data, f.p); err != nil {
			return "", nil, Usagef("render --movie: %s: %v", meta, err)
		}
	}
	return dir, frames, nil
}

// drawFrames draws every frame with the shared drawing path, on all cores;
// the frames must come out of one size. (Frames of another colour map than
// the first get their own colour table in the GIF.)
func drawFrames(frames []*movieFrame) ([]*image.Paletted, error) {
	images := make([]*image.Paletted, len(frames))
	errs := make([]error, len(frames))
	var next sync.Mutex
	k := 0
	var wg sync.WaitGroup
	var held int64
	for range min(len(frames), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for {
				next.Lock()
				i := k
				k++
				stop := i >= len(frames) || held > maxMovieBytes
				next.Unlock()
				if stop {
					return
				}
				images[i], errs[i] = drawFrame(frames[i])
				if images[i] != nil {
					next.Lock()
					held += int64(len(images[i].Pix))
					next.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if held > maxMovieBytes {
		return nil, Usagef("render --movie: %d frames of %d×%d pixels need more than %d MiB: draw them smaller with --size",
			len(frames), images[0].Rect.Dx(), images[0].Rect.Dy(), maxMovieBytes>>20)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, img := range images {
		if img.Rect != images[0].Rect {
			return nil, fmt.Errorf("render --movie: %s draws %d×%d pixels but %s %d×%d: the run's snapshots changed shape (output.image_size or output.slice)",
				frames[i].npy, img.Rect.Dx(), img.Rect.Dy(), frames[0].npy, images[0].Rect.Dx(), images[0].Rect.Dy())
		}
	}
	return images, nil
}

// drawFrame reads one frame's plane and draws it.
func drawFrame(f *movieFrame) (*image.Paletted, error) {
	plane, ny, nx, err := readNPY(f.npy)
	if err != nil {
		return nil, err
	}
	img, err := heatmap.Render(plane, ny, nx, f.p.options())
	if err != nil {
		return nil, fmt.Errorf("render --movie: %s: %w", f.npy, err)
	}
	return img, nil
}
