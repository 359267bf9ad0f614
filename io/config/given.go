package config

// Gives reports whether the command line itself — the config file of -c,
// a --set, or a dedicated flag — sets key (or a table above it): what a
// restart takes over the checkpoint's own config, and where the command
// line, not a checkpoint's metadata, says a restart writes.
func (f *Flags) Gives(key string) bool {
	if key == "output.dir" && f.changed("out") {
		return true
	}
	c, src := Default(), &sources{}
	if f.Config != "" && decodeFile(c, src, f.Config) != nil {
		return false
	}
	for _, s := range f.Sets {
		if applySet(c, src, s) != nil {
			return false
		}
	}
	return src.of(key) != ""
}
