package cachesize

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The L2 is the level-2 entry that is not an instruction cache, in bytes;
// a missing or unreadable listing gives the fallback.
func TestFromSysfs(t *testing.T) {
	dir := t.TempDir()
	write := func(index, level, typ, size string) {
		d := filepath.Join(dir, index)
		require.NoError(t, os.MkdirAll(d, 0o755))
		for name, v := range map[string]string{"level": level, "type": typ, "size": size} {
			require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(v+"\n"), 0o644))
		}
	}
	require.Equal(t, Fallback, fromSysfs(dir, 2), "empty listing")
	write("index0", "1", "Data", "48K")
	write("index1", "2", "Instruction", "64K")
	require.Equal(t, Fallback, fromSysfs(dir, 2), "no level-2 data cache")
	write("index2", "2", "Unified", "2048K")
	write("index3", "3", "Unified", "260M")
	require.Equal(t, 2048<<10, fromSysfs(dir, 2))
	require.Equal(t, 260<<20, fromSysfs(dir, 3))
	require.Equal(t, 48<<10, fromSysfs(dir, 1))
	write("index2", "2", "Unified", "lots")
	require.Equal(t, Fallback, fromSysfs(dir, 2), "unreadable size")
	require.Positive(t, L2())
	for s, want := range map[string]int{"512": 512, "1M": 1 << 20, "32K": 32 << 10} {
		got, ok := parseSize(s)
		require.True(t, ok, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "K", "-4K", "0"} {
		_, ok := parseSize(s)
		require.False(t, ok, s)
	}
}
