package expr

import (
	"github.com/expr-lang/expr/ast"
)

// Separate splits e, where it is a product, into a factor of t alone and
// the rest: e = time·space, so that a field that varies in time costs one
// evaluation of time a step and a field of space filled once (or where
// space's TimeKey changes). e's top-level chain of * and / (and unary −) is
// regrouped: time is the product of its factors that read t and no
// coordinate, space the product of the others, in their order; the
// regrouping may change the last bits of the value (the same on every
// split). ok is false where e has no such factor or reads no t.
func (e *Expr) Separate() (time, space *Expr, ok bool) {
	if !e.uses["t"] {
		return nil, nil, false
	}
	var ts, ss []factor
	neg := false
	if !flatten(e.tree, false, &neg, func(f factor) bool {
		reads, known := readsOf(f.n)
		if !known {
			return false
		}
		if reads["t"] && !reads["x"] && !reads["y"] && !reads["z"] {
			ts = append(ts, f)
		} else {
			ss = append(ss, f)
		}
		return true
	}) || len(ts) == 0 || len(ss) == 0 {
		return nil, nil, false
	}
	tn, sn := product(ts), product(ss)
	if neg {
		sn = &ast.UnaryNode{Operator: "-", Node: sn}
	}
	time, err := build(e.key, e.src, tn, nil)
	if err != nil {
		return nil, nil, false
	}
	space, err = build(e.key, e.src, sn, nil)
	if err != nil {
		return nil, nil, false
	}
	return time, space, true
}

// factor is one operand of a product chain: a multiplier or a divisor.
type factor struct {
	n   ast.Node
	div bool
}

// flatten calls add with each factor of n's chain of *, / and unary ± (div
// where it divides), in order; a unary minus flips neg. It returns false
// where add does, or where n is no product of two or more factors.
func flatten(n ast.Node, div bool, neg *bool, add func(factor) bool) bool {
	switch m := n.(type) {
	case *ast.BinaryNode:
		switch m.Operator {
		case "*":
			return flatten(m.Left, div, neg, add) && flatten(m.Right, div, neg, add)
		case "/":
			return flatten(m.Left, div, neg, add) && flatten(m.Right, !div, neg, add)
		}
	case *ast.UnaryNode:
		switch m.Operator {
		case "-":
			*neg = !*neg
			return flatten(m.Node, div, neg, add)
		case "+":
			return flatten(m.Node, div, neg, add)
		}
	}
	return add(factor{n, div})
}

// product is the node of fs multiplied and divided in order: the first
// multiplier (1 where all divide) times the others, over the divisors.
func product(fs []factor) ast.Node {
	var n ast.Node
	for _, f := range fs {
		switch {
		case n == nil && f.div:
			n = &ast.BinaryNode{Operator: "/", Left: &ast.FloatNode{Value: 1}, Right: f.n}
		case n == nil:
			n = f.n
		case f.div:
			n = &ast.BinaryNode{Operator: "/", Left: n, Right: f.n}
		default:
			n = &ast.BinaryNode{Operator: "*", Left: n, Right: f.n}
		}
	}
	return n
}
