package expr

import (
	"slices"

	"github.com/expr-lang/expr/ast"
)

// Switches are the times at which e jumps in t: where it compares t itself
// with a number (t < 1, 2.5 <= t, t == 3), the number. ok is false where e
// reads t in a way that may jump that this cannot see — t compared after
// arithmetic (2*t < 1), floor, ceil or round of an expression of t, a let
// binding —; its switches must then be declared (run.events). Smooth uses
// of t (sin(t), exp(-t), min(t, 1): kinks, not jumps) need none.
func (e *Expr) Switches() (times []float64, ok bool) {
	if !e.uses["t"] {
		return nil, true
	}
	ok = e.switches(e.tree, &times)
	slices.Sort(times)
	return slices.Compact(times), ok
}

// switches adds the switches of n to times; false where n may jump in t
// in a way it cannot see.
func (e *Expr) switches(n ast.Node, times *[]float64) bool {
	reads, known := readsOf(n)
	if !known {
		return false
	}
	if !reads["t"] {
		return true
	}
	switch n := n.(type) {
	case *ast.BinaryNode:
		switch n.Operator {
		case "<", "<=", ">", ">=", "==", "!=":
			for _, p := range [2][2]ast.Node{{n.Left, n.Right}, {n.Right, n.Left}} {
				if id, isT := p[0].(*ast.IdentifierNode); isT && id.Value == "t" {
					if v, konst := e.constant(p[1]); konst {
						*times = append(*times, v)
						return true
					}
				}
			}
			return false // t compared after arithmetic, or with x, y, z
		}
	case *ast.CallNode:
		if id, named := n.Callee.(*ast.IdentifierNode); named && slices.Contains([]string{"floor", "ceil", "round"}, id.Value) {
			return false // jumps wherever its argument crosses a whole number
		}
	}
	for _, c := range children(n) {
		if !e.switches(c, times) {
			return false
		}
	}
	return true
}

// constant is n's value where it reads no variable.
func (e *Expr) constant(n ast.Node) (float64, bool) {
	reads, known := readsOf(n)
	if !known || len(reads) > 0 && !onlyConstants(reads) {
		return 0, false
	}
	l := &lowerer{src: e.src, key: e.key, uses: map[string]bool{}, scope: map[string]value{}}
	v, err := l.lower(n)
	if err != nil || !v.konst || v.isBool {
		return 0, false
	}
	return v.k, true
}

// onlyConstants: every name read is a named constant (pi, e).
func onlyConstants(reads map[string]bool) bool {
	for name := range reads {
		if _, ok := Constants[name]; !ok {
			return false
		}
	}
	return true
}
