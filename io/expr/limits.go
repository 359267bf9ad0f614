package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deep brackets may nest in an expression: far beyond
// what a formula needs, and shallow enough that expr-lang's parser and
// checker and the lowering, each recursive, stay far from the bounds of a
// goroutine's stack (1,000,000 nested parentheses ended in a Go stack
// overflow after 11 s and 1 GB; 400,000 were accepted).
const MaxDepth = 200

// MaxLength bounds an expression's text, in bytes. (expr-lang's parser
// also stops at 10,000 nodes, which bounds the depth of what brackets do
// not nest: chains of operators, lets.)
const MaxLength = 64 << 10

// bounds refuses src, the value of config key key, where its brackets
// nest deeper than MaxDepth or it is longer than MaxLength, before
// expr-lang's parser sees it: one pass over the text, skipping string
// literals and comments.
func bounds(key, src string) *Error {
	multiline := strings.Contains(src, "\n")
	depth, deepest, over := 0, 0, -1
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(', '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
			}
			if depth > MaxDepth && over < 0 {
				over = i
			}
		case ')', ']', '}':
			depth = max(depth-1, 0) // a stray closer is the parser's to name
		case '"', '\'', '`':
			i = skipString(src, i)
		case '/':
			if strings.HasPrefix(src[i:], "//") {
				if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
					i += j
				} else {
					i = len(src)
				}
			} else if strings.HasPrefix(src[i:], "/*") {
				if j := strings.Index(src[i+2:], "*/"); j >= 0 {
					i += j + 3
				} else {
					i = len(src)
				}
			}
		}
	}
	if over < 0 {
		if len(src) > MaxLength {
			return &Error{Key: key, Msg: fmt.Sprintf("is %d bytes long, more than the %d an expression may take", len(src), MaxLength), multiline: multiline}
		}
		return nil
	}
	line := 1 + strings.Count(src[:over], "\n")
	start := strings.LastIndexByte(src[:over], '\n') + 1
	return &Error{Key: key, Line: line, Column: utf8.RuneCountInString(src[start:over]) + 1,
		Msg: fmt.Sprintf("brackets nest %d deep, more than the %d an expression may", deepest, MaxDepth), multiline: multiline}
}

// skipString is the index of the quote that closes the string literal
// opening at src[i], or the end of src; a backslash escapes the next byte
// except in a raw `…` string.
func skipString(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch {
		case src[j] == '\\' && q != '`':
			j++
		case src[j] == q:
			return j
		}
	}
	return len(src)
}
