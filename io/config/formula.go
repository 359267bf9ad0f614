package config

import (
	"errors"
	"strings"

	"heat/io/expr"
)

// formula checks the keys of the kinds expr and file of the initial field
// or the source p (prefix "initial" or "source"): expr and path only with
// their kind, each given where its kind needs it, and the expression
// compiled, so that a formula that does not parse or names an unknown
// variable stops the run before it starts, with its column. The file is
// read where the run starts (run/), which also resolves a checkpoint
// folder's latest.
func (k *checker) formula(prefix string, p *Profile) *Error {
	switch {
	case p.Kind != "expr" && p.Expr != "":
		return k.bad(prefix+".expr", "is read only with %s.kind = \"expr\" (the kind is %q): leave it out, or set the kind", prefix, p.Kind)
	case p.Kind != "file" && p.Path != "":
		return k.bad(prefix+".path", "is read only with %s.kind = \"file\" (the kind is %q): leave it out, or set the kind", prefix, p.Kind)
	}
	switch p.Kind {
	case "expr":
		if strings.TrimSpace(p.Expr) == "" {
			return k.bad(prefix+".expr", "is missing: %s.kind = \"expr\" takes a formula of x, y, z and t, such as %s.expr = \"1e3*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)\"", prefix, prefix)
		}
		e, err := expr.Compile(prefix+".expr", p.Expr)
		var ee *expr.Error
		if errors.As(err, &ee) {
			return k.bad(prefix+".expr", "%s", ee.Detail())
		}
		if err != nil {
			return k.bad(prefix+".expr", "%v", err)
		}
		if err := k.constant(prefix+".expr", e); err != nil {
			return err
		}
		if prefix == "source" && k.c.Equation.Kind == Poisson && e.Uses("t") {
			return k.bad(prefix+".expr", "reads t, but a poisson problem has no time (%q)", p.Expr)
		}
	case "file":
		if strings.TrimSpace(p.Path) == "" {
			return k.bad(prefix+".path", "is missing: %s.kind = \"file\" reads the field from a .npy file, a Zarr v3 array or a heat checkpoint (runs/a/checkpoints/latest)", prefix)
		}
	}
	return nil
}
