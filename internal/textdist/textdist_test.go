package textdist

import "testing"

func TestEdits(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"steps", "steps", 0}, {"stpes", "steps", 2}, {"thread", "threads", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if got := Edits(c.a, c.b); got != c.want {
			t.Errorf("Edits(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Edits(c.b, c.a); got != c.want {
			t.Errorf("Edits(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}
