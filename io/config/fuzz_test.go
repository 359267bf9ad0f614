package config

import (
	"testing"

	"heat/configs"
)

// The config loader takes any text as a file or a --set without a panic:
// an error (naming the source) or a config that validates again.
func FuzzLoad(f *testing.F) {
	for _, ex := range configs.Examples() {
		f.Add(string(ex.Text), "run.steps=3")
	}
	f.Add("[grid]\nshape = [4, 4]\n", "grid.shape=[-1,2]")
	f.Add("[boundary.x_lo]\nkind = 7\n", `output.dir=""`)
	f.Add("", "parallel.dims=[2,2]")
	f.Fuzz(func(t *testing.T, doc, set string) {
		c := Default()
		src := &sources{}
		if err := decodeDoc(c, src, "fuzz.toml", doc, true); err != nil {
			if err.(*Error).Source != "fuzz.toml" {
				t.Fatalf("an error of the file without its source: %v", err)
			}
			return
		}
		if err := applySet(c, src, set); err != nil {
			return
		}
		if err := finish(c, src); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a config that validated once fails again: %v", err)
		}
	})
}
