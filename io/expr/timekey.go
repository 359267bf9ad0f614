package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// TimeKey names the field e is at time t: two times with equal keys give
// AtTime expressions with equal values at every point, so a field filled at
// one serves the other (a switch not thrown yet, min(t, 1) once past 1).
// The key is the values, at t, of the largest parts of e that read t and
// no coordinate; where e's use of t cannot be told apart so (a let
// binding), it is t itself.
func (e *Expr) TimeKey(t float64) string {
	if !e.uses["t"] {
		return ""
	}
	var b strings.Builder
	if !e.timeParts(e.tree, t, &b) {
		return "t=" + strconv.FormatUint(math.Float64bits(t), 16)
	}
	return b.String()
}

// timeParts writes to b the values at t of n's largest parts that read t
// and no coordinate, in order; false where it cannot (a let, a node it
// does not know).
func (e *Expr) timeParts(n ast.Node, t float64, b *strings.Builder) bool {
	reads, ok := readsOf(n)
	switch {
	case !ok:
		return false
	case !reads["t"]:
		return true
	case !reads["x"] && !reads["y"] && !reads["z"]:
		l := &lowerer{src: e.src, key: e.key, uses: map[string]bool{}, scope: map[string]value{}, fixT: &t}
		v, err := l.lower(n)
		if err != nil || !v.konst {
			return false
		}
		if v.isBool {
			b.WriteString(strconv.FormatBool(v.kb))
		} else {
			b.WriteString(strconv.FormatUint(math.Float64bits(v.k), 16))
		}
		b.WriteByte(';')
		return true
	}
	for _, c := range children(n) {
		if !e.timeParts(c, t, b) {
			return false
		}
	}
	return true
}

// children are n's operands, for the nodes expressions are made of (nil
// for leaves).
func children(n ast.Node) []ast.Node {
	switch n := n.(type) {
	case *ast.UnaryNode:
		return []ast.Node{n.Node}
	case *ast.BinaryNode:
		return []ast.Node{n.Left, n.Right}
	case *ast.ConditionalNode:
		return []ast.Node{n.Cond, n.Exp1, n.Exp2}
	case *ast.CallNode:
		return n.Arguments
	}
	return nil
}

// readsOf is the variables n reads; ok is false where n holds a node
// timeParts cannot see through (a let binding, anything unknown).
func readsOf(n ast.Node) (map[string]bool, bool) {
	reads := map[string]bool{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			return true
		case *ast.IdentifierNode:
			reads[n.Value] = true
			return true
		case *ast.UnaryNode, *ast.BinaryNode, *ast.ConditionalNode, *ast.CallNode:
			for _, c := range children(n) {
				if !walk(c) {
					return false
				}
			}
			return true
		}
		return false
	}
	ok := walk(n)
	return reads, ok
}
