package config

import (
	"context"
	"errors"
	"fmt"

	"heat/io/media"
)

// Media is c's media as package media describes them: the uniform k under
// everything is equation.alpha, the maps are [maps], the regions the
// [[material]] tables in order. A material without k keeps what lies under
// (media.Material.KeepK), one without rho_c too (RhoC 0). Map paths are
// taken as given: relative to the current directory.
func (c *Config) Media() *media.Spec {
	s := &media.Spec{
		Shape:   c.Grid.Shape,
		Length:  c.Grid.Length,
		K:       c.Equation.Alpha,
		KMap:    c.Maps.K,
		RhoCMap: c.Maps.RhoC,
		// A Zarr map's chunks that are not stored: errors unless "fill".
		FillMissing: c.Maps.Missing == "fill",
	}
	for _, m := range c.Material {
		mm := media.Material{
			Name: m.Name,
			Region: media.Region{Kind: m.Region, Lo: m.Lo, Hi: m.Hi, Center: m.Center,
				Point: m.Point, Normal: m.Normal, Radius: m.Radius, Axis: m.Axis},
			KeepK: m.K == nil,
			Fixed: m.Fixed,
		}
		if m.K != nil {
			mm.K = *m.K
		}
		if m.RhoC != nil {
			mm.RhoC = *m.RhoC
		}
		s.Materials = append(s.Materials, mm)
	}
	return s
}

// materialKey is the key of field of the i-th material, material[i].field.
func materialKey(i int, field string) string { return fmt.Sprintf("material[%d].%s", i, field) }

// media checks the [maps] and [[material]] tables: what only the config
// can tell (a region named, a rho_c given as 0), then everything else as
// package media checks a spec without reading the maps' values — regions,
// values, the map files' headers (CheckHeaders) — each mistake under its
// key. The values are the run's to check (CheckMapValues), after its
// memory check: a map is as large as the grid. A restart reads its media
// from the checkpoint, not from the maps (which it cannot change), so
// there the map files are not read: they may be gone.
func (k *checker) media() *Error {
	c := k.c
	for i, m := range c.Material {
		named := ""
		if m.Name != "" {
			named = fmt.Sprintf(", in material %q", m.Name)
		}
		if m.Region == "" {
			return k.bad(materialKey(i, "region"), "is missing: every material needs a region, %s%s", oneOf(media.Kinds), named)
		}
		if m.RhoC != nil && !(*m.RhoC > 0) {
			return k.bad(materialKey(i, "rho_c"), "must be > 0; leave it out to keep the rho_c that lies under (got %s)%s", formatFloat(*m.RhoC), named)
		}
	}
	if m := c.Maps.Missing; m != "" && m != "error" && m != "fill" {
		return k.bad("maps.missing", `must be "error" (a chunk a Zarr input does not store is refused) or "fill" (it reads as the array's fill_value) (got %q)`, m)
	}
	if c.Equation.Kind == Poisson {
		if c.Maps.RhoC != "" {
			k.note("maps.rho_c is not used: a poisson problem has no heat capacity (%s)", c.Maps.RhoC)
		}
		for i, m := range c.Material {
			if m.RhoC != nil {
				k.note("%s is not used: a poisson problem has no heat capacity", materialKey(i, "rho_c"))
			}
		}
	}
	spec := c.Media()
	if k.src.restart {
		spec.KMap, spec.RhoCMap = "", ""
	}
	err := spec.CheckHeaders()
	var fe *media.FieldError
	var me *media.MapError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		msg := fe.Msg
		if fe.Name != "" {
			msg += fmt.Sprintf(", in material %q", fe.Name)
		}
		return k.bad(fe.Key(), "%s", msg)
	case errors.As(err, &me):
		return k.bad(me.Key, "%s", me.Msg)
	}
	return &Error{Msg: err.Error()}
}

// CheckMapValues reads and checks every value of the map files c names
// (maps.k, maps.rho_c), the pass Resolve leaves out: a mistake is an
// *Error as Resolve gives the others, naming where the key was set, the
// key, the file and the cell. Once ctx is done it stops within a block of
// the file and returns ctx's cause.
func (f *Flags) CheckMapValues(ctx context.Context, c *Config) error {
	err := c.Media().CheckValues(ctx)
	var me *media.MapError
	if !errors.As(err, &me) {
		return err
	}
	source := ""
	if _, src, lerr := layer(f.Config, f.Sets); lerr == nil {
		source = src.of(me.Key)
	}
	return &Error{Source: source, Key: me.Key, Msg: me.Msg}
}
