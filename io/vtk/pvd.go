package vtk

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Series is a .pvd collection: the snapshots of one run with their times.
// ParaView opens the .pvd as one time series and plays it as an animation.
// The file is rewritten in full (temporary file, then rename) on each Add,
// so it is complete and loadable at any moment of a run. A Series is safe
// for concurrent use.
type Series struct {
	mu      sync.Mutex
	path    string
	entries []Entry
}

// Entry is one snapshot of a Series.
type Entry struct {
	Time float64 // simulation time (or iteration number) of the snapshot
	File string  // the snapshot's .vti or .pvti, relative to the .pvd, with forward slashes
}

// NewSeries starts an empty series stored at path; nothing is written until
// the first Add. An existing file at path is replaced then; to continue it
// (a restarted run) use OpenSeries.
func NewSeries(path string) *Series { return &Series{path: path} }

// OpenSeries continues the series stored at path, for a run restarted from a
// checkpoint; a missing file gives an empty series.
func OpenSeries(path string) (*Series, error) {
	s := NewSeries(path)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vtk: %w", err)
	}
	var doc struct {
		Type     string `xml:"type,attr"`
		DataSets []struct {
			Timestep string `xml:"timestep,attr"`
			File     string `xml:"file,attr"`
		} `xml:"Collection>DataSet"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("vtk: %s: not a .pvd collection: %w", path, err)
	}
	if doc.Type != "Collection" {
		return nil, fmt.Errorf("vtk: %s: VTKFile type is %q, want \"Collection\"", path, doc.Type)
	}
	for _, d := range doc.DataSets {
		t, err := strconv.ParseFloat(d.Timestep, 64)
		if err != nil {
			return nil, fmt.Errorf("vtk: %s: DataSet %q has timestep %q", path, d.File, d.Timestep)
		}
		s.entries = append(s.entries, Entry{Time: t, File: d.File})
	}
	return s, nil
}

// Add records that file holds the snapshot at time, then rewrites the .pvd.
// file may be the path the snapshot was written at (absolute, or relative
// to the working directory) or its path relative to the .pvd; the .pvd
// stores it relative to itself, so the output directory can be moved (see
// relativeTo for how a relative path is read).
//
// Snapshots are kept in time order for a run that moves forward: an entry
// for the same file is replaced, and entries later than time are dropped,
// since a run restarted from an earlier checkpoint writes them again.
func (s *Series) Add(time float64, file string) error {
	if math.IsNaN(time) || math.IsInf(time, 0) {
		return fmt.Errorf("vtk: %s: snapshot %s has time %g; it must be finite", s.path, file, time)
	}
	if file == "" {
		return fmt.Errorf("vtk: %s: snapshot at time %g has no file", s.path, time)
	}
	rel := relativeTo(s.path, file)
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.entries[:0]
	for _, e := range s.entries {
		if e.Time <= time && e.File != rel {
			kept = append(kept, e)
		}
	}
	s.entries = append(kept, Entry{Time: time, File: rel})
	return s.write()
}

// Entries returns the snapshots listed, in order.
func (s *Series) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Entry(nil), s.entries...)
}

// write stores the collection; s.mu is held.
func (s *Series) write() error {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n")
	b.WriteString("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n")
	b.WriteString("  <Collection>\n")
	for _, e := range s.entries {
		fmt.Fprintf(&b, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"%s\"/>\n",
			strconv.FormatFloat(e.Time, 'g', -1, 64), attr(e.File))
	}
	b.WriteString("  </Collection>\n")
	b.WriteString("</VTKFile>\n")
	return writeAtomic(s.path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}
